"""Reference Triton solution for starter/26_scaled_masked_softmax.

Each program takes a tile of ROWS consecutive score rows (query position i = row % q_len).
Only the first min(i + 1, k_len) columns of a row survive the causal mask, so the online
max / sum pass stops at the tile's longest kept prefix and never loads masked columns; the
second pass writes exp(s - max) / sum for the kept columns and exact zeros (what exp(-inf)
gives the reference) for the masked ones, again loading only the kept columns. The scale is
applied in float32 before the max, as in the reference.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def causal_softmax_kernel(x_ptr, out_ptr, n_rows, q_len, k_len, scale, stride_x_row, stride_out_row,
                          ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < n_rows
    n_keep = tl.where(row_ok, tl.minimum(rows % q_len + 1, k_len), 0)
    keep_end = tl.max(n_keep, axis=0)
    x_rows = x_ptr + rows[:, None] * stride_x_row
    out_rows = out_ptr + rows[:, None] * stride_out_row
    cols = tl.arange(0, BLOCK)

    m = tl.full([ROWS, BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([ROWS, BLOCK], dtype=tl.float32)
    for start in range(0, keep_end, BLOCK):
        idx = start + cols
        keep = idx[None, :] < n_keep[:, None]
        x = tl.load(x_rows + idx[None, :], mask=keep, other=float("-inf")).to(tl.float32) * scale
        m_new = tl.maximum(m, x)
        # A lane that has only seen masked values has m_new == -inf; shift by 0 there to avoid inf - inf.
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - shift) + tl.exp(x - shift)
        m = m_new

    row_max = tl.max(m, axis=1)
    # Rows past n_rows keep nothing (row_max == -inf); they are never stored, shift them by 0.
    row_max = tl.where(row_max == float("-inf"), 0.0, row_max)
    row_sum = tl.sum(s * tl.exp(m - row_max[:, None]), axis=1)
    inv_sum = 1.0 / row_sum

    for start in range(0, k_len, BLOCK):
        idx = start + cols
        keep = idx[None, :] < n_keep[:, None]
        x = tl.load(x_rows + idx[None, :], mask=keep, other=float("-inf")).to(tl.float32) * scale
        y = tl.where(keep, tl.exp(x - row_max[:, None]) * inv_sum[:, None], 0.0)
        tl.store(out_rows + idx[None, :], y, mask=row_ok[:, None] & (idx[None, :] < k_len))


class ModelNew(nn.Module):
    ROWS = 4
    MAX_BLOCK = 256

    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q_len, k_len = x.shape[-2], x.shape[-1]
        x2 = x.reshape(-1, k_len)
        if x2.stride(-1) != 1:
            x2 = x2.contiguous()
        n_rows = x2.shape[0]
        out = torch.empty((n_rows, k_len), dtype=x.dtype, device=x.device)
        block = min(triton.next_power_of_2(k_len), self.MAX_BLOCK)
        causal_softmax_kernel[(triton.cdiv(n_rows, self.ROWS),)](
            x2, out, n_rows, q_len, k_len, self.scale, x2.stride(0), out.stride(0),
            ROWS=self.ROWS, BLOCK=block, num_warps=4,
        )
        return out.reshape(x.shape)
