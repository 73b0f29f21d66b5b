"""Honest softmax that keeps a per-shape launch plan on self.

The launch plan (grid, block size, warp count) depends only on the input's shape and dtype, so
forward computes it once per shape and keeps it in a dict on the module. Nothing computed from the
input's values is kept: every call runs the kernel on the current input.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x_row = x_ptr + row * stride_x
    running_max = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        v = tl.load(x_row + idx, mask=idx < n_cols, other=float("-inf"))
        running_max = tl.maximum(running_max, v)
    row_max = tl.max(running_max, axis=0)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        v = tl.load(x_row + idx, mask=idx < n_cols, other=float("-inf"))
        total += tl.exp(v - row_max)
    inv = 1.0 / tl.sum(total, axis=0)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        v = tl.load(x_row + idx, mask=mask, other=float("-inf"))
        tl.store(out_ptr + row * stride_out + idx, tl.exp(v - row_max) * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self._plans: dict = {}

    def _plan(self, x: torch.Tensor) -> tuple:
        rows, cols = x.shape
        key = (rows, cols, x.dtype)
        plan = self._plans.get(key)
        if plan is None:
            block = min(triton.next_power_of_2(cols), 2048)
            plan = ((rows,), block, 8 if block >= 2048 else 4)
            self._plans[key] = plan
        return plan

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        grid, block, warps = self._plan(x)
        out = torch.empty_like(x)
        softmax_rows_kernel[grid](x, out, x.shape[1], x.stride(0), out.stride(0), BLOCK=block, num_warps=warps)
        return out
