"""Depthwise 1-D convolution with bias: nn.Conv1d(C, C, 7, padding=3, groups=C). Float32, memory bound.

Length-preserving ("same") padding; the weight (C, 1, 7) and bias (C) come from nn.Conv1d's
default initialisation, drawn from the seeded RNG in __init__.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 512
LENGTH = 8192
KERNEL_SIZE = 7

# LENGTH is not a multiple of the solution's 1024-wide block, and both zero-padded ends are hit.
KFORGE_SMALL = {"BATCH": 2, "CHANNELS": 5, "LENGTH": 2100}


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(
            channels, channels, kernel_size, padding=kernel_size // 2, groups=channels, bias=True
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs() -> list[int]:
    return [CHANNELS, KERNEL_SIZE]
