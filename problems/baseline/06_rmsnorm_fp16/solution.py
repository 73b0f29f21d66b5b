"""Untuned baseline for baseline/06_rmsnorm_fp16, a starting point for kforge's tuner.

One program per row, two passes over the row in chunks of BLOCK columns (masked tail):
pass 1 accumulates the float32 sum of squares, pass 2 writes x * rstd * w, computed in float32
and rounded to float16 once at the store. Knobs (deliberately modest): BLOCK = 256 (class
attribute), num_warps = 4, num_stages = 1 (launch literals). Correct for any power-of-two
BLOCK; the row offset is int64.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, n_cols, stride_x_row, stride_out_row, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x_row
    out_row = out_ptr + row * stride_out_row
    cols = tl.arange(0, BLOCK)

    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        x = tl.load(x_row + idx, mask=idx < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)

    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + idx, (x * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    BLOCK = 256

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        # Same construction, same RNG draws, same order as Model.
        self.eps = eps
        self.weight = nn.Parameter((torch.rand(dim) + 0.5).half())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        x2 = x.reshape(-1, dim)
        if x2.stride(-1) != 1:
            x2 = x2.contiguous()
        rows = x2.shape[0]
        out = torch.empty((rows, dim), dtype=x.dtype, device=x.device)
        rmsnorm_kernel[(rows,)](
            x2,
            self.weight,
            out,
            dim,
            x2.stride(0),
            out.stride(0),
            self.eps,
            BLOCK=self.BLOCK,
            num_warps=4,
            num_stages=1,
        )
        return out.reshape(x.shape)
