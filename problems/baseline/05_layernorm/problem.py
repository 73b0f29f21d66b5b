"""LayerNorm over the last dimension, nn.LayerNorm(4096), with learnable weight and bias. Float32.

The affine parameters are re-drawn from the seeded RNG in __init__ (uniform weight, then
uniform bias, instead of the default ones/zeros), so a candidate must build them exactly the
same way, in the same order, to get the same values.

Memory bound: one read and one write of 4 x 2048 x 4096 float32 (268 MB moved; the 32 KB of
parameters are negligible).
"""

import torch
import torch.nn as nn

BATCH = 4
SEQ = 2048
DIM = 4096
EPS = 1e-5

# DIM odd, not a multiple of any block size: the column loops end in a masked tail.
KFORGE_SMALL = {"BATCH": 2, "SEQ": 7, "DIM": 5001}


class Model(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs() -> list[torch.Tensor]:
    # Float32; non-zero mean and non-unit variance so that both statistics matter.
    return [0.5 + 2.0 * torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs() -> list[int | float]:
    return [DIM, EPS]
