"""O = softmax(Q K^T * scale) V: non-causal attention forward in float16 with an online softmax.

Q, K and V are [BH, SEQ, D] float16 (BH = batch * heads); O is [BH, SEQ, D] float16. The spec's GPU
sizes are BH = 32, SEQ = 4096, D = 64. One program per (query block, batch*head): it walks the key
blocks, keeping a running row maximum and row sum in float32 and rescaling its accumulator, so the
[SEQ, SEQ] score matrix is never written. The head dimension is loaded whole (padded to a power of
two of at least 16 and masked). Honest but untuned: 32x32 tiles, num_warps=4, num_stages=1, no
autotune, plain exp (no exp2 trick); query and key tails are masked, so any sequence length works.

kforge eval --kernel problems/kernels/attention_fwd_fp16.py --entry attention_fwd_fp16 \
    --inputs problems/kernels/attention_fwd_fp16.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_M = 32  # query rows per program
BLOCK_N = 32  # key rows per step of the online softmax


@triton.jit
def attention_fwd_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
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
    stride_vh,
    stride_vn,
    stride_vd,
    stride_oh,
    stride_om,
    stride_od,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    mask_m = offs_m < seq_q
    mask_d = offs_d < head_dim

    q_ptrs = (
        q_ptr
        + head * stride_qh
        + offs_m[:, None].to(tl.int64) * stride_qm
        + offs_d[None, :].to(tl.int64) * stride_qd
    )
    q = tl.load(q_ptrs, mask=mask_m[:, None] & mask_d[None, :], other=0.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)

    for start_n in range(0, seq_k, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        mask_n = offs_n < seq_k
        kt_ptrs = (
            k_ptr
            + head * stride_kh
            + offs_n[None, :].to(tl.int64) * stride_kn
            + offs_d[:, None].to(tl.int64) * stride_kd
        )
        kt = tl.load(kt_ptrs, mask=mask_d[:, None] & mask_n[None, :], other=0.0)
        scores = tl.dot(q, kt) * scale
        scores = tl.where(mask_n[None, :], scores, float("-inf"))

        # The first block always holds a real key, so m_new is finite from then on.
        m_new = tl.maximum(m_i, tl.max(scores, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(scores - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)

        v_ptrs = (
            v_ptr
            + head * stride_vh
            + offs_n[:, None].to(tl.int64) * stride_vn
            + offs_d[None, :].to(tl.int64) * stride_vd
        )
        v = tl.load(v_ptrs, mask=mask_n[:, None] & mask_d[None, :], other=0.0)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new

    out = acc / l_i[:, None]
    o_ptrs = (
        o_ptr
        + head * stride_oh
        + offs_m[:, None].to(tl.int64) * stride_om
        + offs_d[None, :].to(tl.int64) * stride_od
    )
    tl.store(o_ptrs, out.to(o_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_d[None, :])


def attention_fwd_fp16(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    heads, seq_q, head_dim = q.shape
    seq_k = k.shape[1]
    o = torch.empty_like(q)
    grid = (triton.cdiv(seq_q, BLOCK_M), heads)
    attention_fwd_kernel[grid](
        q,
        k,
        v,
        o,
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
        v.stride(0),
        v.stride(1),
        v.stride(2),
        o.stride(0),
        o.stride(1),
        o.stride(2),
        HEAD_DIM=max(16, triton.next_power_of_2(head_dim)),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        num_warps=4,
        num_stages=1,
    )
    return o


##################################################################################################################################################


def test_attention_fwd_fp16():
    results = {}
    q = torch.randn(8, 256, 64, device="cuda", dtype=torch.float16)
    k = torch.randn(8, 256, 64, device="cuda", dtype=torch.float16)
    v = torch.randn(8, 256, 64, device="cuda", dtype=torch.float16)
    results["test_case_1"] = attention_fwd_fp16(q, k, v, 0.125)
    q = torch.randn(2, 45, 16, device="cuda", dtype=torch.float16)
    k = torch.randn(2, 45, 16, device="cuda", dtype=torch.float16)
    v = torch.randn(2, 45, 16, device="cuda", dtype=torch.float16)
    results["test_case_2"] = attention_fwd_fp16(q, k, v, 0.25)
    return results


result_gold = test_attention_fwd_fp16()
