"""Untuned baseline for baseline/04_softmax, a starting point for kforge's tuner.

One program per row, two passes over the row in chunks of BLOCK columns (masked tail). Pass 1
is online: per-lane running max and running sum of exp(x - max), rescaled when the max grows;
the lanes are then combined into the row max and row sum. Pass 2 writes exp(x - max) / sum.
Knobs (deliberately modest): BLOCK = 256 (class attribute), num_warps = 4, num_stages = 1
(launch literals). Correct for any power-of-two BLOCK; the row offset is int64.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_x_row, stride_out_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x_row
    out_row = out_ptr + row * stride_out_row
    cols = tl.arange(0, BLOCK)

    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        x = tl.load(x_row + idx, mask=idx < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # A lane that has seen only masked values has m_new == -inf: shift by 0 to avoid inf - inf.
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - shift) + tl.exp(x - shift)
        m = m_new

    row_max = tl.max(m, axis=0)
    row_sum = tl.sum(s * tl.exp(m - row_max), axis=0)
    inv_sum = 1.0 / row_sum

    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - row_max) * inv_sum
        tl.store(out_row + idx, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    BLOCK = 256

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.reshape(-1, n_cols)
        if x2.stride(-1) != 1:
            x2 = x2.contiguous()
        rows = x2.shape[0]
        out = torch.empty((rows, n_cols), dtype=x.dtype, device=x.device)
        softmax_kernel[(rows,)](
            x2, out, n_cols, x2.stride(0), out.stride(0), BLOCK=self.BLOCK, num_warps=4, num_stages=1
        )
        return out.reshape(x.shape)
