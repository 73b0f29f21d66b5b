"""Candidate for starter/01_scaled_add: defines a @triton.jit kernel but forward computes with torch."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


def _grid(n: int) -> tuple[int]:
    return (triton.cdiv(n, 1024),)


class ModelNew(nn.Module):
    def __init__(self, alpha: float) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        # The kernel is referenced (and a grid is computed) but never launched.
        kernel = scaled_add_kernel
        _ = (kernel, _grid(x.numel()))
        return torch.add(y, x, alpha=self.alpha)
