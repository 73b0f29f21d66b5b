"""Reference Triton solution for starter/18_log_softmax.

One program per row, two passes over the row: an online pass keeps a per-lane running max and
a rescaled running sum of exponentials (as in 04_softmax), giving lse = max + log(sum); the
second pass writes x - lse. The second read of the row is normally served from L2.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def log_softmax_kernel(x_ptr, out_ptr, n_cols, stride_x_row, stride_x_col, stride_out_row, stride_out_col,
                       BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x_row
    out_row = out_ptr + row * stride_out_row
    cols = tl.arange(0, BLOCK)

    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        x = tl.load(x_row + idx * stride_x_col, mask=idx < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # A lane that has only seen masked values has m_new == -inf; shift by 0 there to avoid inf - inf.
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - shift) + tl.exp(x - shift)
        m = m_new

    row_max = tl.max(m, axis=0)
    lse = row_max + tl.log(tl.sum(s * tl.exp(m - row_max), axis=0))

    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx * stride_x_col, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + idx * stride_out_col, x - lse, mask=mask)


class ModelNew(nn.Module):
    MAX_BLOCK = 8192

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty_like(x)
        block = min(triton.next_power_of_2(cols), self.MAX_BLOCK)
        log_softmax_kernel[(rows,)](
            x, out, cols,
            x.stride(0), x.stride(1), out.stride(0), out.stride(1),
            BLOCK=block, num_warps=8,
        )
        return out
