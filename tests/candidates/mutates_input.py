"""Candidate for starter/01_scaled_add: accumulates in place into its input y and returns y.

The returned values are right, but the caller's y has been overwritten.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def axpy_inplace_kernel(x_ptr, y_ptr, n_elements, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, alpha * x + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha: float) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        n = x.numel()
        axpy_inplace_kernel[(triton.cdiv(n, 1024),)](x, y, n, self.alpha, BLOCK=1024)
        return y  # saves an allocation, at the price of clobbering the input
