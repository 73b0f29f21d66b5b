"""A forward of three launches: row statistics (mean, rstd), normalise with weight and bias, then
gelu(v) mixed `iters` rounds plus the residual x. Each launch depends on the one before."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_stats_kernel(x_ptr, mean_ptr, rstd_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    squares = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        v = tl.load(x_ptr + row * stride + idx, mask=idx < n_cols, other=0.0)
        total += v
        squares += v * v
    mean = tl.sum(total, axis=0) / n_cols
    var = tl.maximum(tl.sum(squares, axis=0) / n_cols - mean * mean, 0.0)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, 1.0 / tl.sqrt(var + eps))


@triton.jit
def normalize_kernel(x_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    block = tl.program_id(1)
    idx = block * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n_cols
    v = tl.load(x_ptr + row * stride + idx, mask=mask, other=0.0)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    w = tl.load(w_ptr + idx, mask=mask, other=0.0)
    b = tl.load(b_ptr + idx, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride + idx, (v - mean) * rstd * w + b, mask=mask)


@triton.jit
def gelu_residual_kernel(h_ptr, x_ptr, out_ptr, n, iters, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    h = tl.load(h_ptr + offs, mask=mask, other=0.0)
    v = h / (1.0 + tl.exp(-1.5957691216057308 * (h + 0.044715 * h * h * h)))
    for _ in range(iters):
        v = 0.999 * v + 0.01 * tl.sin(v)
    tl.store(out_ptr + offs, v + tl.load(x_ptr + offs, mask=mask, other=0.0), mask=mask)


def three_launch(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, iters: int) -> torch.Tensor:
    rows, cols = x.shape
    mean = torch.empty(rows, dtype=torch.float32, device=x.device)
    rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
    block = min(triton.next_power_of_2(cols), 2048)
    row_stats_kernel[(rows,)](x, mean, rstd, cols, x.stride(0), 1e-5, BLOCK=block, num_warps=8)
    normed = torch.empty_like(x)
    normalize_kernel[(rows, triton.cdiv(cols, 1024))](
        x, weight, bias, mean, rstd, normed, cols, x.stride(0), BLOCK=1024, num_warps=4
    )
    out = torch.empty_like(x)
    n = x.numel()
    gelu_residual_kernel[(triton.cdiv(n, 1024),)](normed, x, out, n, iters, BLOCK=1024, num_warps=4)
    return out
