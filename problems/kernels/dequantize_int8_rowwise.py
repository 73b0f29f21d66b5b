"""Row-wise int8 dequantization: out[i, j] = q[i, j] * scale[i], in float32, stored as float16.

q is [M, N] int8, scales is [M] float32; out is [M, N] float16. The spec's GPU sizes are M = N = 8192
(64 MiB of int8 read, 128 MiB of float16 written). A 2-D grid of BLOCK_M x BLOCK_N tiles (rows on
axis 0, columns on axis 1). Honest but untuned: 16 x 64 tiles, num_warps=4, no autotune; row and
column tails are masked, so any size is correct.

kforge eval --kernel problems/kernels/dequantize_int8_rowwise.py --entry dequantize_int8_rowwise \
    --inputs problems/kernels/dequantize_int8_rowwise.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_M = 16
BLOCK_N = 64


@triton.jit
def dequantize_rowwise_kernel(
    q_ptr,
    scale_ptr,
    out_ptr,
    M,
    N,
    stride_qm,
    stride_qn,
    stride_om,
    stride_on,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = offs_m < M
    mask = mask_m[:, None] & (offs_n < N)[None, :]

    q = tl.load(q_ptr + offs_m[:, None] * stride_qm + offs_n[None, :] * stride_qn, mask=mask, other=0)
    scale = tl.load(scale_ptr + offs_m, mask=mask_m, other=0.0)
    out = q.to(tl.float32) * scale[:, None]
    tl.store(
        out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
        out.to(out_ptr.dtype.element_ty),
        mask=mask,
    )


def dequantize_int8_rowwise(q: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    m, n = q.shape
    scales = scales.contiguous()
    out = torch.empty((m, n), dtype=torch.float16, device=q.device)
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    dequantize_rowwise_kernel[grid](
        q,
        scales,
        out,
        m,
        n,
        q.stride(0),
        q.stride(1),
        out.stride(0),
        out.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        num_warps=4,
    )
    return out


##################################################################################################################################################


def test_dequantize_int8_rowwise():
    results = {}
    q = torch.randint(-127, 128, (512, 1024), device="cuda", dtype=torch.int8)
    scales = torch.rand(512, device="cuda", dtype=torch.float32) * 0.02
    results["test_case_1"] = dequantize_int8_rowwise(q, scales)
    q = torch.randint(-127, 128, (37, 150), device="cuda", dtype=torch.int8)
    scales = torch.rand(37, device="cuda", dtype=torch.float32) * 0.02
    results["test_case_2"] = dequantize_int8_rowwise(q, scales)
    return results


result_gold = test_dequantize_int8_rowwise()
