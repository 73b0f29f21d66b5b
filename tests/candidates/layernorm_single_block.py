"""Honest candidate for starter/05_layernorm: the whole row stays in registers (one DRAM read).

Builds nn.LayerNorm and re-draws its parameters exactly as the problem's Model does, so seeded
construction yields the same weight and bias. Expected to be accepted.
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
    var = tl.sum(d * d, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride_out + cols, d * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        x2 = x.reshape(-1, dim).contiguous()
        out = torch.empty_like(x2)
        block = triton.next_power_of_2(dim)
        num_warps = 4 if block <= 1024 else (8 if block <= 4096 else 16)
        layernorm_row_kernel[(x2.shape[0],)](
            x2, self.norm.weight, self.norm.bias, out, dim, x2.stride(0), out.stride(0), self.norm.eps,
            BLOCK=block, num_warps=num_warps,
        )
        return out.view(x.shape)
