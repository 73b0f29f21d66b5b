"""Fusion: residual add followed by LayerNorm over the last dimension. Float32.

out = LayerNorm(x + residual), with the affine parameters re-drawn from the seeded RNG in
__init__ (instead of the default ones/zeros). Only the normalised output is returned.
"""

import torch
import torch.nn as nn

BATCH = 4
SEQ = 2048
DIM = 4096
EPS = 1e-5

# DIM > 4096 so the solution's column loops run twice, with a masked tail.
KFORGE_SMALL = {"BATCH": 2, "SEQ": 7, "DIM": 5000}


class Model(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(x + residual)


def get_inputs() -> list[torch.Tensor]:
    # Non-zero mean and non-unit variance so that both statistics matter.
    return [0.5 + 2.0 * torch.randn(BATCH, SEQ, DIM), torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs() -> list[int | float]:
    return [DIM, EPS]
