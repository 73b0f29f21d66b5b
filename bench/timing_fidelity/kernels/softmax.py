"""Row softmax of h(x), h = `iters` rounds of v = 0.999 v + 0.01 sin(v) (iters = 0: plain softmax).

One program per row, two passes: an online max and rescaled sum, then exp(v - max) / sum.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _mix(v, iters):
    for _ in range(iters):
        v = 0.999 * v + 0.01 * tl.sin(v)
    return v


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, iters, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        v = tl.load(x_ptr + row * stride + idx, mask=idx < n_cols, other=float("-inf"))
        v = tl.where(idx < n_cols, _mix(v, iters), float("-inf"))
        m_new = tl.maximum(m, v)
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - shift) + tl.exp(v - shift)
        m = m_new
    row_max = tl.max(m, axis=0)
    inv_sum = 1.0 / tl.sum(s * tl.exp(m - row_max), axis=0)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        v = _mix(tl.load(x_ptr + row * stride + idx, mask=mask, other=0.0), iters)
        tl.store(out_ptr + row * stride + idx, tl.exp(v - row_max) * inv_sum, mask=mask)


def softmax(x: torch.Tensor, iters: int) -> torch.Tensor:
    rows, cols = x.shape
    out = torch.empty_like(x)
    block = min(triton.next_power_of_2(cols), 2048)
    softmax_kernel[(rows,)](x, out, cols, x.stride(0), iters, BLOCK=block, num_warps=8)
    return out
