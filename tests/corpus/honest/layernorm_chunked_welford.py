"""Honest LayerNorm with a chunked Welford/Chan merge of the statistics.

Each block of a row contributes (count, mean, M2) computed in registers; the running
statistics are merged with Chan's formula, so the variance never subtracts two large sums.
A second pass normalises and applies self.norm.weight / self.norm.bias (the parameters are
built exactly as nn.LayerNorm + the reference's re-draws). Inputs are validated with asserts.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_welford_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, stride_x, stride_out, eps,
                             BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x_row = x_ptr + row * stride_x
    count = 0.0
    mean = 0.0
    m2 = 0.0
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        v = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        n_b = tl.sum(mask.to(tl.float32), axis=0)
        mean_b = tl.sum(v, axis=0) / n_b
        d = tl.where(mask, v - mean_b, 0.0)
        m2_b = tl.sum(d * d, axis=0)
        total = count + n_b
        delta = mean_b - mean
        mean = mean + delta * (n_b / total)
        m2 = m2 + m2_b + delta * delta * (count * n_b / total)
        count = total
    rstd = 1.0 / tl.sqrt(m2 / count + eps)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        v = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * stride_out + idx, (v - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    BLOCK = 2048

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = self.norm.normalized_shape[0]
        assert x.shape[-1] == dim, f"last dimension must be {dim}, got {x.shape[-1]}"
        assert x.is_floating_point(), "LayerNorm expects a floating-point input"
        x2 = x.reshape(-1, dim)
        if x2.stride(-1) != 1:
            x2 = x2.contiguous()
        out = torch.empty((x2.shape[0], dim), dtype=x.dtype, device=x.device)
        layernorm_welford_kernel[(x2.shape[0],)](
            x2, self.norm.weight, self.norm.bias, out, dim, x2.stride(0), out.stride(0), self.norm.eps,
            BLOCK=min(self.BLOCK, triton.next_power_of_2(dim)), num_warps=8,
        )
        return out.view(x.shape)
