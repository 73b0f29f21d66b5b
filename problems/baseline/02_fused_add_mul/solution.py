"""Untuned baseline for baseline/02_fused_add_mul, a starting point for kforge's tuner.

One flat elementwise kernel: each program loads BLOCK elements of x, y and z and stores
(x + y) * z, rounding x + y to float32 before the multiply as the reference does. Knobs
(deliberately modest): BLOCK = 128 (class attribute), num_warps = 4, num_stages = 1 (launch
literals). Correct for any power-of-two BLOCK (the tail is masked); offsets are int64.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_mul_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    z = tl.load(z_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, (x + y) * z, mask=mask)


class ModelNew(nn.Module):
    BLOCK = 128

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = y.contiguous()
        z = z.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, self.BLOCK),)
        add_mul_kernel[grid](x, y, z, out, n, BLOCK=self.BLOCK, num_warps=4, num_stages=1)
        return out
