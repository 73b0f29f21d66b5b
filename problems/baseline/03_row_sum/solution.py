"""Untuned baseline for baseline/03_row_sum, a starting point for kforge's tuner.

One program per row. The program walks the row in chunks of BLOCK columns (masked tail),
keeping BLOCK per-lane float32 partial sums, and reduces them once at the end. Knobs
(deliberately modest): BLOCK = 256 (class attribute), num_warps = 4, num_stages = 1 (launch
literals). Correct for any power-of-two BLOCK; the row offset is int64.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride_row, stride_col, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_row
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        acc += tl.load(x_row + idx * stride_col, mask=idx < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    BLOCK = 256

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.reshape(-1, n_cols)
        rows = x2.shape[0]
        out = torch.empty(rows, dtype=x.dtype, device=x.device)
        row_sum_kernel[(rows,)](
            x2, out, n_cols, x2.stride(0), x2.stride(1), BLOCK=self.BLOCK, num_warps=4, num_stages=1
        )
        return out.reshape(x.shape[:-1])
