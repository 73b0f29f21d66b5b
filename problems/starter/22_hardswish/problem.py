"""Hardswish: x * relu6(x + 3) / 6 (F.hardswish). Float32, elementwise, memory bound."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8192
DIM = 8192

KFORGE_SMALL = {"BATCH": 3, "DIM": 3333}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardswish(x)


def get_inputs() -> list[torch.Tensor]:
    # Scaled so that all three pieces occur often: x <= -3 (0), -3 < x < 3 (curve), x >= 3 (x).
    return [4.0 * torch.randn(BATCH, DIM)]


def get_init_inputs() -> list[int]:
    return []
