"""Reference Triton solution for starter/20_l2_normalize.

One program per row, two passes: per-lane float32 sums of squares, one tree reduction and a
square root give the norm; the second pass writes x / norm (divided, as the reference does,
rather than multiplied by a reciprocal). The second read of the row is normally served from L2.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def l2_normalize_kernel(x_ptr, out_ptr, n_cols, stride_x_row, stride_x_col, stride_out_row, stride_out_col,
                        BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x_row
    out_row = out_ptr + row * stride_out_row
    cols = tl.arange(0, BLOCK)

    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        x = tl.load(x_row + idx * stride_x_col, mask=idx < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    norm = tl.sqrt(tl.sum(acc, axis=0))

    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx * stride_x_col, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + idx * stride_out_col, x / norm, mask=mask)


class ModelNew(nn.Module):
    MAX_BLOCK = 4096

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty_like(x)
        block = min(triton.next_power_of_2(cols), self.MAX_BLOCK)
        l2_normalize_kernel[(rows,)](
            x, out, cols,
            x.stride(0), x.stride(1), out.stride(0), out.stride(1),
            BLOCK=block, num_warps=8,
        )
        return out
