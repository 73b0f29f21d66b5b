"""Reference Triton solution for starter/33_scale_shift_constants.

A flat elementwise kernel over every element, masked at the tail, with the constructor's scale and
shift passed as arguments.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_shift_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale + shift, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float, shift: float) -> None:
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        scale_shift_kernel[(triton.cdiv(n, 1024),)](x, out, n, self.scale, self.shift, BLOCK=1024)
        return out
