"""Candidate for starter/01_scaled_add: stores 2**40 elements past the output, with no mask.

On a GPU this is an illegal memory access (the CUDA context is lost). Under TRITON_INTERPRET=1
the interpreter really writes to that host address, so the process dies with SIGSEGV.
"""

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
    far = offs.to(tl.int64) + (1 << 40)  # an indexing bug: a huge stray offset
    tl.store(out_ptr + far, alpha * x + y)


class ModelNew(nn.Module):
    def __init__(self, alpha: float) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        scaled_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, self.alpha, BLOCK=1024)
        return out
