"""Reference Triton solution for starter/02_gelu_tanh.

Uses the identity 0.5 * (1 + tanh(u)) == sigmoid(2u), so
gelu_tanh(x) = x / (1 + exp(-2u)) with u = sqrt(2/pi) * (x + 0.044715 x^3).
This is the same formula as the reference, written without the 1 + tanh(u)
cancellation for negative x, and it saturates cleanly (exp overflow gives x / inf = -0).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)


@triton.jit
def gelu_tanh_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
    y = x / (1.0 + tl.exp(-2.0 * u))
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    BLOCK = 4096

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        gelu_tanh_kernel[(triton.cdiv(n, self.BLOCK),)](x, out, n, BLOCK=self.BLOCK, num_warps=8)
        return out
