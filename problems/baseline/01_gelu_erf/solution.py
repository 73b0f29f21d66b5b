"""Untuned baseline for baseline/01_gelu_erf, a starting point for kforge's tuner.

One flat elementwise kernel over the contiguous tensor: each program loads BLOCK elements,
evaluates 0.5 * x * (1 + erf(x / sqrt(2))) in float32 and stores them. Knobs (deliberately
modest): BLOCK = 256 (class attribute), num_warps = 4, num_stages = 1 (launch literals).
Correct for any power-of-two BLOCK (the tail is masked); offsets are int64.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_erf_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    BLOCK = 256

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, self.BLOCK),)
        gelu_erf_kernel[grid](x, out, n, BLOCK=self.BLOCK, num_warps=4, num_stages=1)
        return out
