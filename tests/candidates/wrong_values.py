"""Candidate for starter/01_scaled_add: does the arithmetic in float16 (precision downgrade).

Errors are about 1e-3 relative: small, but well above atol = rtol = 1e-4.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float16)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float16)
    ax = (x * alpha).to(tl.float16)  # rounded to float16 after the multiply ...
    tl.store(out_ptr + offs, (ax + y).to(tl.float32), mask=mask)  # ... and after the add


class ModelNew(nn.Module):
    def __init__(self, alpha: float) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        scaled_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, self.alpha, BLOCK=1024)
        return out
