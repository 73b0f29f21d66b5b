"""Honest row sum with a tiny dispatch table: rows that fit in one block use a single-load
kernel, longer rows a looped kernel. The table maps a strategy name to (kernel, launcher)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rowsum_one_block(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(v.to(tl.float32), axis=0))


@triton.jit
def rowsum_looped(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        acc += tl.load(x_ptr + row * stride_row + idx, mask=idx < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


_KERNELS = {
    "one_block": rowsum_one_block,
    "looped": rowsum_looped,
}


def _plan(cols: int) -> tuple[str, int]:
    block = triton.next_power_of_2(cols)
    return ("one_block", block) if block <= 2048 else ("looped", 2048)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        name, block = _plan(cols)
        out = torch.empty(rows, dtype=x.dtype, device=x.device)
        _KERNELS[name][(rows,)](x, out, cols, x.stride(0), BLOCK=block, num_warps=8)
        return out
