"""Untuned baseline for baseline/12_column_mean, the starting point for kforge's tuner.

Each program owns a block of BLOCK_N columns and loops over the rows in chunks of BLOCK_M,
adding each (BLOCK_M, BLOCK_N) tile into a float32 accumulator tile; at the end it sums the tile
over its rows and divides by the row count. Rows and columns are masked, so any power-of-two
BLOCK_M and BLOCK_N are correct. Row offsets are int64.

Knobs (deliberately modest, for the tuner to improve): the class attributes BLOCK_M = 32 and
BLOCK_N = 32, and the launch's num_warps = 4, num_stages = 1.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def column_mean_kernel(
    x_ptr,
    out_ptr,
    n_rows,
    n_cols,
    stride_x_row,
    stride_x_col,
    stride_out,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs_n < n_cols
    offs_m = tl.arange(0, BLOCK_M)
    col_ptrs = x_ptr + offs_n[None, :] * stride_x_col

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_M):
        rows = start + offs_m
        ptrs = col_ptrs + rows[:, None].to(tl.int64) * stride_x_row
        mask = (rows[:, None] < n_rows) & mask_n[None, :]
        acc += tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)

    mean = tl.sum(acc, axis=0) / n_rows
    tl.store(out_ptr + offs_n * stride_out, mean.to(out_ptr.dtype.element_ty), mask=mask_n)


class ModelNew(nn.Module):
    BLOCK_M = 32
    BLOCK_N = 32

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty((cols,), dtype=x.dtype, device=x.device)
        column_mean_kernel[(triton.cdiv(cols, self.BLOCK_N),)](
            x,
            out,
            rows,
            cols,
            x.stride(0),
            x.stride(1),
            out.stride(0),
            BLOCK_M=self.BLOCK_M,
            BLOCK_N=self.BLOCK_N,
            num_warps=4,
            num_stages=1,
        )
        return out
