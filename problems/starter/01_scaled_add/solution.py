"""Reference Triton solution for starter/01_scaled_add: one fused load-FMA-store pass."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, alpha, BLOCK: tl.constexpr):
    # int64 base so that sizes past 2**31 elements stay addressable.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


class ModelNew(nn.Module):
    BLOCK = 4096

    def __init__(self, alpha: float) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, self.BLOCK),)
        scaled_add_kernel[grid](x, y, out, n, self.alpha, BLOCK=self.BLOCK, num_warps=8)
        return out
