"""Candidate for starter/05_layernorm: __init__ loads a lookup table from a file that is not there.

Importing the module works; constructing ModelNew raises FileNotFoundError.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_row_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, stride_x, stride_out, eps,
                         BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride_out + cols, d * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)
        # Tuned launch table "shipped next to the kernel" -- but no such file exists.
        self.register_buffer("launch_table", torch.load("layernorm_launch_table.pt"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        x2 = x.reshape(-1, dim).contiguous()
        out = torch.empty_like(x2)
        layernorm_row_kernel[(x2.shape[0],)](
            x2, self.norm.weight, self.norm.bias, out, dim, x2.stride(0), out.stride(0), self.norm.eps,
            BLOCK=triton.next_power_of_2(dim), num_warps=8,
        )
        return out.view(x.shape)
