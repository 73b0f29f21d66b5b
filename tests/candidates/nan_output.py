"""Candidate for starter/04_softmax: correct softmax, except that the first column of every
fourth row is written as NaN (where the reference is finite)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    y = tl.where((cols == 0) & (row % 4 == 3), float("nan"), y)
    tl.store(out_ptr + row * stride_row + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty_like(x)
        softmax_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols), num_warps=16)
        return out
