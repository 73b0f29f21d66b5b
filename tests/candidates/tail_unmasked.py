"""Candidate for starter/04_softmax: blocked online softmax that forgets the mask on its loads.

The stores are masked, so nothing is written out of bounds, but every block's loads run past the
row: for a row length that is not a multiple of BLOCK (10000 columns at KFORGE_SMALL sizes) the
tail lanes read the next row (and past the end of the buffer for the last row) and those values
enter the max and the sum, so every row is normalised by a wrong sum (visibly so on its larger
entries; most softmax outputs are below atol). At the GPU size (16384 = 16 * 1024 columns)
there is no tail and this candidate happens to be correct.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_row
    out_row = out_ptr + row * stride_row
    cols = tl.arange(0, BLOCK)
    row_max = float("-inf")
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols)  # BUG: no mask
        row_max = tl.maximum(row_max, tl.max(x, axis=0))
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols)  # BUG: no mask
        acc += tl.exp(x - row_max)
    inv_sum = 1.0 / tl.sum(acc, axis=0)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols)  # BUG: no mask
        tl.store(out_row + start + cols, tl.exp(x - row_max) * inv_sum, mask=start + cols < n_cols)


class ModelNew(nn.Module):
    BLOCK = 1024

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty_like(x)
        softmax_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK=self.BLOCK, num_warps=4)
        return out
