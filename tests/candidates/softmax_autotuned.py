"""Honest candidate for starter/04_softmax: whole row in registers, num_warps chosen by @triton.autotune.

Expected to be accepted. Note for CPU mode: Triton 3.6's autotuner benchmarks through the active
GPU driver, so under TRITON_INTERPRET=1 on a machine without a GPU it raises
"0 active drivers" unless the worker gives the autotuner a CPU benchmarker (or picks a config).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({}, num_warps=8),
        triton.Config({}, num_warps=16),
        triton.Config({}, num_warps=32),
    ],
    key=["n_cols"],
)
@triton.jit
def softmax_row_kernel(x_ptr, out_ptr, n_cols, stride_x_row, stride_out_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * stride_out_row + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.stride(-1) != 1:
            x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
        block = triton.next_power_of_2(cols)
        softmax_row_kernel[(rows,)](x, out, cols, x.stride(0), out.stride(0), BLOCK=block)
        return out
