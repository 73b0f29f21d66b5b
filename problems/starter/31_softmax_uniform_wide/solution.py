"""Reference Triton solution for starter/31_softmax_uniform_wide.

One program per row. Inputs lie in [0, 1), so exp never overflows, but the kernel still subtracts
the row maximum (the same code is right for any input): pass 1 finds the maximum, pass 2 sums the
exponentials, pass 3 writes exp(x - max) / sum.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    cols = tl.arange(0, BLOCK)
    peak = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        peak = tl.maximum(peak, tl.load(x_row + idx, mask=idx < n_cols, other=float("-inf")))
    row_max = tl.max(peak, axis=0)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        total += tl.exp(tl.load(x_row + idx, mask=idx < n_cols, other=float("-inf")) - row_max)
    inv = 1.0 / tl.sum(total, axis=0)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx, mask=mask, other=float("-inf"))
        tl.store(out_ptr + row * stride_out + idx, tl.exp(x - row_max) * inv, mask=mask)


class ModelNew(nn.Module):
    MAX_BLOCK = 4096

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty_like(x)
        block = min(triton.next_power_of_2(cols), self.MAX_BLOCK)
        softmax_kernel[(rows,)](x, out, cols, x.stride(0), out.stride(0), BLOCK=block, num_warps=8)
        return out
