"""Honest two-kernel LayerNorm: kernel 1 writes float32 mean and 1/std per row, kernel 2 runs on
a (row, column-block) grid and applies the normalisation and affine parameters, so wide rows
are spread over many programs in the second, bandwidth-heavy pass."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_stats_kernel(x_ptr, mean_ptr, rstd_ptr, n_cols, stride_x, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        acc += tl.load(x_ptr + row * stride_x + idx, mask=idx < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        v = tl.load(x_ptr + row * stride_x + idx, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, v - mean, 0.0)
        acc += d * d
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps))


@triton.jit
def apply_kernel(x_ptr, mean_ptr, rstd_ptr, w_ptr, b_ptr, out_ptr, n_cols, stride_x, stride_out,
                 BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    idx = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n_cols
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    v = tl.load(x_ptr + row * stride_x + idx, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + idx, mask=mask, other=0.0)
    b = tl.load(b_ptr + idx, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride_out + idx, (v - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    STATS_BLOCK = 2048
    APPLY_BLOCK = 1024

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        x2 = x.reshape(-1, dim).contiguous()
        rows = x2.shape[0]
        mean = torch.empty(rows, dtype=torch.float32, device=x.device)
        rstd = torch.empty(rows, dtype=torch.float32, device=x.device)
        row_stats_kernel[(rows,)](x2, mean, rstd, dim, x2.stride(0), self.norm.eps, BLOCK=self.STATS_BLOCK)
        out = torch.empty_like(x2)
        grid = (rows, triton.cdiv(dim, self.APPLY_BLOCK))
        apply_kernel[grid](x2, mean, rstd, self.norm.weight, self.norm.bias, out, dim, x2.stride(0), out.stride(0),
                           BLOCK=self.APPLY_BLOCK)
        return out.reshape(x.shape)
