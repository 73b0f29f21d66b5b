"""Honest candidate for starter/03_row_sum: split-K style two-kernel reduction.

Kernel 1 has a 2-D grid (row, chunk) and writes one float32 partial sum per chunk, which keeps
many more programs in flight than one-program-per-row when rows are few and long.
Kernel 2 sums each row's partials. Expected to be accepted.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_sum_kernel(x_ptr, partial_ptr, n_cols, n_chunks, stride_row, stride_col,
                       CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, CHUNK, BLOCK):
        idx = chunk * CHUNK + off + cols
        x = tl.load(x_ptr + row * stride_row + idx * stride_col, mask=idx < n_cols, other=0.0)
        acc += x.to(tl.float32)
    tl.store(partial_ptr + row * n_chunks + chunk, tl.sum(acc, axis=0))


@triton.jit
def finish_kernel(partial_ptr, out_ptr, n_chunks, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    p = tl.load(partial_ptr + row * n_chunks + offs, mask=offs < n_chunks, other=0.0)
    tl.store(out_ptr + row, tl.sum(p, axis=0))


class ModelNew(nn.Module):
    CHUNK = 2048
    BLOCK = 1024

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        n_chunks = triton.cdiv(cols, self.CHUNK)
        partial = torch.empty((rows, n_chunks), dtype=torch.float32, device=x.device)
        partial_sum_kernel[(rows, n_chunks)](
            x, partial, cols, n_chunks, x.stride(0), x.stride(1),
            CHUNK=self.CHUNK, BLOCK=self.BLOCK, num_warps=4,
        )
        out = torch.empty(rows, dtype=x.dtype, device=x.device)
        finish_kernel[(rows,)](partial, out, n_chunks, BLOCK=triton.next_power_of_2(n_chunks), num_warps=1)
        return out
