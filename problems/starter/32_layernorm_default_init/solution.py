"""Reference Triton solution for starter/32_layernorm_default_init.

One program per row: mean, centred variance, then normalise and apply the LayerNorm's own weight and
bias (read from the module every call, whatever their values).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, stride_x, stride_out, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        acc += tl.load(x_row + idx, mask=idx < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        d = tl.where(mask, tl.load(x_row + idx, mask=mask, other=0.0) - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx, mask=mask, other=0.0)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0)
        b = tl.load(b_ptr + idx, mask=mask, other=0.0)
        tl.store(out_ptr + row * stride_out + idx, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    MAX_BLOCK = 4096

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(dim, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty_like(x)
        block = min(triton.next_power_of_2(cols), self.MAX_BLOCK)
        layernorm_kernel[(rows,)](
            x, self.ln.weight, self.ln.bias, out, cols, x.stride(0), out.stride(0), self.ln.eps,
            BLOCK=block, num_warps=8,
        )
        return out
