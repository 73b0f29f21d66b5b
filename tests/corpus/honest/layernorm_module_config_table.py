"""Honest LayerNorm whose launch configurations live in a module-level table.

`_CONFIGS` maps a row length to (block, warps): filled on first use by a helper, read on later
calls. It holds integers only; the statistics and the normalised values are computed by the kernel
on every call, with the module's own weight and bias.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_CONFIGS: dict[int, tuple[int, int]] = {}
_MAX_BLOCK = 4096


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    base = row * n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        acc += tl.load(x_ptr + base + idx, mask=idx < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    sq = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        v = tl.load(x_ptr + base + idx, mask=idx < n_cols, other=0.0)
        d = tl.where(idx < n_cols, v - mean, 0.0)
        sq += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        v = tl.load(x_ptr + base + idx, mask=mask, other=0.0)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0)
        b = tl.load(b_ptr + idx, mask=mask, other=0.0)
        tl.store(out_ptr + base + idx, (v - mean) * rstd * w + b, mask=mask)


def _config_for(n_cols: int) -> tuple[int, int]:
    config = _CONFIGS.get(n_cols)
    if config is None:
        block = min(triton.next_power_of_2(n_cols), _MAX_BLOCK)
        config = (block, 8 if block >= 2048 else 4)
        _CONFIGS[n_cols] = config
    return config


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_cols = x.shape[-1]
        block, warps = _config_for(n_cols)
        out = torch.empty_like(x)
        rows = x.numel() // n_cols
        layernorm_kernel[(rows,)](
            x, self.norm.weight, self.norm.bias, out, n_cols, self.norm.eps, BLOCK=block, num_warps=warps
        )
        return out
