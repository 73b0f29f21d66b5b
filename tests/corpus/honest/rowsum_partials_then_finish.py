"""Honest two-kernel row sum (x.sum(-1)): kernel 1 writes one float32 partial sum per
(row, chunk) so that short-and-wide inputs still fill the GPU; kernel 2 adds each row's
partials. Chunk count and block sizes are computed in Python from the shape."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_sum_kernel(x_ptr, part_ptr, n_cols, stride_row, chunk_cols, n_chunks, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    start_col = chunk * chunk_cols
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, chunk_cols, BLOCK):
        idx = start_col + start + offs
        mask = (start + offs < chunk_cols) & (idx < n_cols)
        acc += tl.load(x_ptr + row * stride_row + idx, mask=mask, other=0.0).to(tl.float32)
    tl.store(part_ptr + row * n_chunks + chunk, tl.sum(acc, axis=0))


@triton.jit
def finish_kernel(part_ptr, out_ptr, n_chunks, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    parts = tl.load(part_ptr + row * n_chunks + offs, mask=offs < n_chunks, other=0.0)
    tl.store(out_ptr + row, tl.sum(parts, axis=0))


class ModelNew(nn.Module):
    CHUNK_COLS = 2048
    BLOCK = 512

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 2, "row sum expects a 2-D input"
        rows, cols = x.shape
        n_chunks = triton.cdiv(cols, self.CHUNK_COLS)
        partials = torch.empty((rows, n_chunks), dtype=torch.float32, device=x.device)
        partial_sum_kernel[(rows, n_chunks)](x, partials, cols, x.stride(0), self.CHUNK_COLS, n_chunks,
                                             BLOCK=self.BLOCK, num_warps=4)
        out = torch.empty(rows, dtype=x.dtype, device=x.device)
        finish_kernel[(rows,)](partials, out, n_chunks, BLOCK=triton.next_power_of_2(n_chunks), num_warps=1)
        return out
