"""Untuned baseline for baseline/11_cumsum, the starting point for kforge's tuner.

One program per row walks the row in chunks of BLOCK elements: tl.cumsum scans a chunk in float32,
the running total of the previous chunks is added, and the chunk's sum is carried to the next one.
The last chunk is masked, so any power-of-two BLOCK and any row length are correct. Row offsets are
int64.

Knobs (deliberately modest, for the tuner to improve): the class attribute BLOCK = 256, and the
launch's num_warps = 4, num_stages = 1.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(
    x_ptr,
    out_ptr,
    n_cols,
    stride_x_row,
    stride_x_col,
    stride_out_row,
    stride_out_col,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x_row
    out_row = out_ptr + row * stride_out_row
    cols = tl.arange(0, BLOCK)
    # The running total, kept broadcast over the chunk so the loop-carried value is a plain vector.
    carry = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx * stride_x_col, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(out_row + idx * stride_out_col, y.to(out_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    BLOCK = 256

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty_like(x)
        cumsum_kernel[(rows,)](
            x,
            out,
            cols,
            x.stride(0),
            x.stride(1),
            out.stride(0),
            out.stride(1),
            BLOCK=self.BLOCK,
            num_warps=4,
            num_stages=1,
        )
        return out
