"""Reference Triton solution for starter/24_residual_layernorm.

One program per row; the sum h = x + residual is never written to memory. Pass 1 computes
the mean of h, pass 2 the centred (biased) variance, pass 3 normalises and applies the
affine parameters, recomputing h each time. Rows up to MAX_BLOCK columns are read from
DRAM once; the later passes hit L1/L2.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def residual_layernorm_kernel(x_ptr, r_ptr, w_ptr, b_ptr, out_ptr, n_cols, stride_x_row, stride_r_row,
                              stride_out_row, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x_row
    r_row = r_ptr + row * stride_r_row
    out_row = out_ptr + row * stride_out_row
    cols = tl.arange(0, BLOCK)

    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + idx, mask=mask, other=0.0).to(tl.float32)
        acc += x + r
    mean = tl.sum(acc, axis=0) / n_cols

    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + idx, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, x + r - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)

    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + idx, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + idx, (x + r - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    MAX_BLOCK = 4096

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        # Same construction, same RNG draws, same order as Model.
        self.norm = nn.LayerNorm(dim, eps=eps)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        x2 = x.reshape(-1, dim)
        r2 = residual.reshape(-1, dim)
        if x2.stride(-1) != 1:
            x2 = x2.contiguous()
        if r2.stride(-1) != 1:
            r2 = r2.contiguous()
        rows = x2.shape[0]
        out = torch.empty((rows, dim), dtype=x.dtype, device=x.device)
        block = min(triton.next_power_of_2(dim), self.MAX_BLOCK)
        residual_layernorm_kernel[(rows,)](
            x2, r2, self.norm.weight, self.norm.bias, out, dim,
            x2.stride(0), r2.stride(0), out.stride(0), self.norm.eps,
            BLOCK=block, num_warps=8,
        )
        return out.reshape(x.shape)
