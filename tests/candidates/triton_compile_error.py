"""Candidate for starter/01_scaled_add: tl.arange with a runtime (non-constexpr) bound.

On a GPU, Triton rejects this when it compiles the kernel at its first launch
(triton.compiler.errors.CompilationError: "arange's arguments must be of type tl.constexpr").
Under TRITON_INTERPRET=1 the same check fires when the kernel runs, as
triton.runtime.errors.InterpreterError wrapping a ValueError.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, alpha, block):
    offs = tl.program_id(0) * block + tl.arange(0, block)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha: float) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        scaled_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, self.alpha, 1024)
        return out
