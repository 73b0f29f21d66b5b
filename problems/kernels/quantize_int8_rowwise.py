"""Row-wise int8 quantization: scale[i] = max_j |x[i, j]| / 127, q[i, j] = round(x[i, j] / scale[i]).

x is [M, N] float16; returns (q, scales): q is [M, N] int8 in [-127, 127] (rounded half away from
zero), scales is [M] float32 (0 for an all-zero row, whose q is 0). The spec's GPU sizes are
M = N = 8192 (128 MiB read, 64 MiB written). Each program owns BLOCK_M rows and sweeps them twice in
BLOCK_N-wide chunks: once for the absmax, once to quantize. Honest but untuned: 8 x 64 blocks,
num_warps=4, no autotune; every row and column tail is masked, so any size is correct.

kforge eval --kernel problems/kernels/quantize_int8_rowwise.py --entry quantize_int8_rowwise \
    --inputs problems/kernels/quantize_int8_rowwise.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_M = 8  # rows per program
BLOCK_N = 64  # columns per chunk


@triton.jit
def quantize_rowwise_kernel(
    x_ptr,
    q_ptr,
    scale_ptr,
    M,
    N,
    stride_xm,
    stride_xn,
    stride_qm,
    stride_qn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    offs_m = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = offs_m < M
    x_rows = x_ptr + offs_m[:, None] * stride_xm
    q_rows = q_ptr + offs_m[:, None] * stride_qm

    absmax = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = mask_m[:, None] & (offs_n < N)[None, :]
        x = tl.load(x_rows + offs_n[None, :].to(tl.int64) * stride_xn, mask=mask, other=0.0)
        absmax = tl.maximum(absmax, tl.max(tl.abs(x.to(tl.float32)), axis=1))

    scale = absmax / 127.0
    inv_scale = tl.where(absmax > 0.0, 127.0 / tl.where(absmax > 0.0, absmax, 1.0), 0.0)
    tl.store(scale_ptr + offs_m, scale, mask=mask_m)

    for start in range(0, N, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = mask_m[:, None] & (offs_n < N)[None, :]
        x = tl.load(x_rows + offs_n[None, :].to(tl.int64) * stride_xn, mask=mask, other=0.0)
        v = x.to(tl.float32) * inv_scale[:, None]
        r = tl.where(v >= 0.0, tl.floor(v + 0.5), tl.ceil(v - 0.5))
        r = tl.minimum(tl.maximum(r, -127.0), 127.0)
        tl.store(q_rows + offs_n[None, :].to(tl.int64) * stride_qn, r.to(tl.int8), mask=mask)


def quantize_int8_rowwise(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, n = x.shape
    q = torch.empty((m, n), dtype=torch.int8, device=x.device)
    scales = torch.empty((m,), dtype=torch.float32, device=x.device)
    grid = (triton.cdiv(m, BLOCK_M),)
    quantize_rowwise_kernel[grid](
        x,
        q,
        scales,
        m,
        n,
        x.stride(0),
        x.stride(1),
        q.stride(0),
        q.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        num_warps=4,
    )
    return q, scales


##################################################################################################################################################


def test_quantize_int8_rowwise():
    results = {}
    x = torch.randn(512, 1024, device="cuda", dtype=torch.float16)
    results["test_case_1"] = quantize_int8_rowwise(x)
    x = torch.randn(37, 150, device="cuda", dtype=torch.float16)
    results["test_case_2"] = quantize_int8_rowwise(x)
    return results


result_gold = test_quantize_int8_rowwise()
