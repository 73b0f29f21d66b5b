"""Honest cumsum (torch.cumsum(x, -1)) with tl.associative_scan and a user-defined combine
function; the running total of earlier blocks is carried across the loop."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def scan_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    carry = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        v = tl.load(x_ptr + row * stride_x + idx, mask=mask, other=0.0).to(tl.float32)
        scanned = tl.associative_scan(v, 0, _add)
        tl.store(out_ptr + row * stride_out + idx, scanned + carry, mask=mask)
        carry += tl.sum(v, axis=0)


class ModelNew(nn.Module):
    BLOCK = 512

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
        scan_kernel[(rows,)](x, out, cols, x.stride(0), out.stride(0), BLOCK=self.BLOCK, num_warps=4)
        return out
