"""S = (Q @ K^T) * scale: attention scores for [batch*heads, seq, head_dim] float16 tensors.

Q is [BH, SEQ_Q, D], K is [BH, SEQ_K, D]; S is [BH, SEQ_Q, SEQ_K] float16 (float32 accumulation, the
scale applied before the cast). The spec's GPU sizes are BH = 32, SEQ = 4096, D = 64 (a 1 GiB output).
Grid (query tiles, key tiles, BH); each program loads the head dimension whole (padded to a power of
two of at least 16 and masked). Honest but untuned: 32x32 tiles, num_warps=4, num_stages=1, no
autotune; the query and key tails are masked, so any sequence length is correct.

kforge eval --kernel problems/kernels/qk_scores_fp16.py --entry qk_scores_fp16 \
    --inputs problems/kernels/qk_scores_fp16.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_M = 32  # query rows per program
BLOCK_N = 32  # key rows per program


@triton.jit
def qk_scores_kernel(
    q_ptr,
    k_ptr,
    s_ptr,
    scale,
    seq_q,
    seq_k,
    head_dim,
    stride_qh,
    stride_qm,
    stride_qd,
    stride_kh,
    stride_kn,
    stride_kd,
    stride_sh,
    stride_sm,
    stride_sn,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    head = tl.program_id(2).to(tl.int64)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    mask_m = offs_m < seq_q
    mask_n = offs_n < seq_k
    mask_d = offs_d < head_dim

    q_ptrs = (
        q_ptr
        + head * stride_qh
        + offs_m[:, None].to(tl.int64) * stride_qm
        + offs_d[None, :].to(tl.int64) * stride_qd
    )
    # K^T tile: [HEAD_DIM, BLOCK_N]
    kt_ptrs = (
        k_ptr
        + head * stride_kh
        + offs_n[None, :].to(tl.int64) * stride_kn
        + offs_d[:, None].to(tl.int64) * stride_kd
    )
    q = tl.load(q_ptrs, mask=mask_m[:, None] & mask_d[None, :], other=0.0)
    kt = tl.load(kt_ptrs, mask=mask_d[:, None] & mask_n[None, :], other=0.0)
    scores = tl.dot(q, kt) * scale

    s_ptrs = (
        s_ptr
        + head * stride_sh
        + offs_m[:, None].to(tl.int64) * stride_sm
        + offs_n[None, :].to(tl.int64) * stride_sn
    )
    tl.store(s_ptrs, scores.to(s_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def qk_scores_fp16(q: torch.Tensor, k: torch.Tensor, scale: float) -> torch.Tensor:
    heads, seq_q, head_dim = q.shape
    seq_k = k.shape[1]
    s = torch.empty((heads, seq_q, seq_k), dtype=q.dtype, device=q.device)
    grid = (triton.cdiv(seq_q, BLOCK_M), triton.cdiv(seq_k, BLOCK_N), heads)
    qk_scores_kernel[grid](
        q,
        k,
        s,
        scale,
        seq_q,
        seq_k,
        head_dim,
        q.stride(0),
        q.stride(1),
        q.stride(2),
        k.stride(0),
        k.stride(1),
        k.stride(2),
        s.stride(0),
        s.stride(1),
        s.stride(2),
        HEAD_DIM=max(16, triton.next_power_of_2(head_dim)),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        num_warps=4,
        num_stages=1,
    )
    return s


##################################################################################################################################################


def test_qk_scores_fp16():
    results = {}
    q = torch.randn(8, 256, 64, device="cuda", dtype=torch.float16)
    k = torch.randn(8, 256, 64, device="cuda", dtype=torch.float16)
    results["test_case_1"] = qk_scores_fp16(q, k, 0.125)
    q = torch.randn(3, 45, 16, device="cuda", dtype=torch.float16)
    k = torch.randn(3, 67, 16, device="cuda", dtype=torch.float16)
    results["test_case_2"] = qk_scores_fp16(q, k, 0.25)
    return results


result_gold = test_qk_scores_fp16()
