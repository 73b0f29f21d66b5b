"""Honest scaled add (out = alpha * x + y): one fused load-FMA-store pass, int64 offsets."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


class ModelNew(nn.Module):
    BLOCK = 2048

    def __init__(self, alpha: float) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x, y = x.contiguous(), y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        axpy_kernel[(triton.cdiv(n, self.BLOCK),)](x, y, out, n, self.alpha, BLOCK=self.BLOCK, num_warps=4)
        return out
