"""Untuned baseline for baseline/05_layernorm, a starting point for kforge's tuner.

One program per row, three passes over the row in chunks of BLOCK columns (masked tail):
pass 1 sums x for the mean, pass 2 sums (x - mean)^2 for the biased variance, pass 3 writes
(x - mean) * rstd * weight + bias. All statistics are float32. Knobs (deliberately modest):
BLOCK = 256 (class attribute), num_warps = 4, num_stages = 1 (launch literals). Correct for
any power-of-two BLOCK; the row offset is int64.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr, n_cols, stride_x_row, stride_out_row, eps, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x_row
    out_row = out_ptr + row * stride_out_row
    cols = tl.arange(0, BLOCK)

    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        acc += tl.load(x_row + idx, mask=idx < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols

    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)

    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(out_row + idx, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    BLOCK = 256

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        # Same construction, same RNG draws, same order as Model.
        self.norm = nn.LayerNorm(dim, eps=eps)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        x2 = x.reshape(-1, dim)
        if x2.stride(-1) != 1:
            x2 = x2.contiguous()
        rows = x2.shape[0]
        out = torch.empty((rows, dim), dtype=x.dtype, device=x.device)
        layernorm_kernel[(rows,)](
            x2,
            self.norm.weight,
            self.norm.bias,
            out,
            dim,
            x2.stride(0),
            out.stride(0),
            self.norm.eps,
            BLOCK=self.BLOCK,
            num_warps=4,
            num_stages=1,
        )
        return out.reshape(x.shape)
