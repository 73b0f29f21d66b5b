"""Reference Triton solution for starter/29_mse_loss.

Two kernels, deterministic (no atomics): kernel 1 gives each program a contiguous chunk of
BLOCK * BLOCKS_PER_PROGRAM elements and writes the float32 sum of (a - b)^2 over it to a
partials buffer; kernel 2 (one program) adds the partials in a fixed order and divides by
the element count.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sq_diff_partial_kernel(a_ptr, b_ptr, partial_ptr, n, BLOCK: tl.constexpr,
                           BLOCKS_PER_PROGRAM: tl.constexpr):
    pid = tl.program_id(0)
    chunk_start = pid.to(tl.int64) * (BLOCK * BLOCKS_PER_PROGRAM)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(BLOCKS_PER_PROGRAM):
        idx = chunk_start + i * BLOCK + offs
        mask = idx < n
        a = tl.load(a_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        d = a - b
        acc += d * d
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def mean_kernel(x_ptr, out_ptr, n_partials, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_partials, BLOCK):
        idx = start + offs
        acc += tl.load(x_ptr + idx, mask=idx < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    BLOCK = 2048
    BLOCKS_PER_PROGRAM = 16
    MEAN_BLOCK = 1024

    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a1 = a.contiguous().reshape(-1)
        b1 = b.contiguous().reshape(-1)
        n = a1.numel()
        n_partials = triton.cdiv(n, self.BLOCK * self.BLOCKS_PER_PROGRAM)
        partials = torch.empty(n_partials, dtype=torch.float32, device=a.device)
        sq_diff_partial_kernel[(n_partials,)](a1, b1, partials, n, BLOCK=self.BLOCK,
                                              BLOCKS_PER_PROGRAM=self.BLOCKS_PER_PROGRAM, num_warps=8)
        out = torch.empty((), dtype=a.dtype, device=a.device)
        mean_kernel[(1,)](partials, out, n_partials, n, BLOCK=self.MEAN_BLOCK, num_warps=4)
        return out
