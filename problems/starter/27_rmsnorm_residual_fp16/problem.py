"""Fusion: residual add followed by RMSNorm, float16 in and out, float32 statistics.

h = x + residual (float16, as a residual stream stores it); out = h * rsqrt(mean(h^2) + eps) * w,
computed in float32 and rounded to float16 once. The float16 weight is drawn from the seeded
RNG. Only the normalised output is returned (not the updated residual).
"""

import torch
import torch.nn as nn

ROWS = 16384
DIM = 4096
EPS = 1e-6

# DIM > 4096 so the solution's column loops run twice, with a masked tail.
KFORGE_SMALL = {"ROWS": 37, "DIM": 5000}


class Model(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(dim)).to(torch.float16))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = (x + residual).float()
        normed = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (normed * self.weight.float()).to(x.dtype)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(ROWS, DIM, dtype=torch.float16), torch.randn(ROWS, DIM, dtype=torch.float16)]


def get_init_inputs() -> list[int | float]:
    return [DIM, EPS]
