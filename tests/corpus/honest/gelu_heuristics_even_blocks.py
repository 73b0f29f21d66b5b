"""Honest GELU (tanh approximation), the op the reference writes as
F.gelu(x, approximate="tanh").

@triton.heuristics decides at launch time whether the element count is a multiple of the block
(EVEN): then the loads and stores are unmasked. The math uses
0.5 * (1 + tanh(u)) == sigmoid(2u), which avoids the 1 + tanh cancellation for negative x.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    y = x * tl.sigmoid(2.0 * u)
    if EVEN:
        tl.store(out_ptr + offs, y)
    else:
        tl.store(out_ptr + offs, y, mask=offs < n)


class ModelNew(nn.Module):
    BLOCK = 1024

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        gelu_kernel[(triton.cdiv(n, self.BLOCK),)](x, out, n, BLOCK=self.BLOCK, num_warps=4)
        return out
