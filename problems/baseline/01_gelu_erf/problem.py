"""Exact (erf) GELU: out = 0.5 * x * (1 + erf(x / sqrt(2))), i.e. F.gelu(x). Float32, elementwise.

Memory bound: one read and one write of 8192 x 8192 float32 (537 MB moved).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8192
DIM = 8192

# Odd, not a multiple of any block size: the last program is masked.
KFORGE_SMALL = {"BATCH": 37, "DIM": 129}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


def get_inputs() -> list[torch.Tensor]:
    # Float32; scaled so that both saturated tails and the curved middle are exercised.
    return [2.0 * torch.randn(BATCH, DIM)]


def get_init_inputs() -> list[int]:
    return []
