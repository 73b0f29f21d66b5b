"""Candidate for starter/04_softmax: a launch-planning helper three calls deep raises ValueError."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_WARPS_BY_BLOCK = {1024: 4, 2048: 8, 4096: 16}


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride_row + cols, e / tl.sum(e, axis=0), mask=mask)


def _pick_num_warps(block: int) -> int:
    if block not in _WARPS_BY_BLOCK:
        raise ValueError(f"no launch configuration for BLOCK={block}; known: {sorted(_WARPS_BY_BLOCK)}")
    return _WARPS_BY_BLOCK[block]


def _plan(n_cols: int) -> tuple[int, int]:
    block = triton.next_power_of_2(n_cols)
    return block, _pick_num_warps(block)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def _launch(self, x: torch.Tensor, out: torch.Tensor) -> None:
        rows, cols = x.shape
        block, num_warps = _plan(cols)  # BLOCK 16384 for both 10000 (small) and 16384 (GPU) columns: raises
        softmax_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK=block, num_warps=num_warps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        self._launch(x, out)
        return out
