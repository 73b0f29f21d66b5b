"""RMSNorm over the last dimension with a learnable weight. Float32.

out = x * rsqrt(mean(x^2, -1) + eps) * weight; the weight is drawn from the seeded RNG.
"""

import torch
import torch.nn as nn

BATCH = 8
SEQ = 2048
DIM = 2048
EPS = 1e-6

KFORGE_SMALL = {"BATCH": 3, "SEQ": 13, "DIM": 999}


class Model(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs() -> list[int | float]:
    return [DIM, EPS]
