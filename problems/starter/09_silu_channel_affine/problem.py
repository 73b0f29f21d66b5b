"""Fusion: SiLU followed by a per-channel affine, on an NCHW tensor. Float32.

out = x * sigmoid(x) * scale[c] + shift[c]
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 128
HEIGHT = 128
WIDTH = 128

KFORGE_SMALL = {"BATCH": 2, "CHANNELS": 3, "HEIGHT": 17, "WIDTH": 19}


class Model(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.scale = nn.Parameter(1.0 + 0.5 * torch.randn(channels))
        self.shift = nn.Parameter(0.5 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * torch.sigmoid(x)
        return y * self.scale.view(1, -1, 1, 1) + self.shift.view(1, -1, 1, 1)


def get_inputs() -> list[torch.Tensor]:
    return [2.0 * torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs() -> list[int]:
    return [CHANNELS]
