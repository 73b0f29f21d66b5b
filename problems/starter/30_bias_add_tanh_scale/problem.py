"""Fusion: per-channel bias add, tanh, per-channel scale, on an NCHW tensor. Float32.

out = tanh(x + bias[c]) * scale[c]; bias and scale are drawn from the seeded RNG.
"""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 128
HEIGHT = 128
WIDTH = 128

# H * W = 323 is not a multiple of the solution's blocks (one masked block per plane).
KFORGE_SMALL = {"BATCH": 2, "CHANNELS": 3, "HEIGHT": 17, "WIDTH": 19}


class Model(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.bias = nn.Parameter(0.5 * torch.randn(channels))
        self.scale = nn.Parameter(1.0 + 0.5 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x + self.bias.view(1, -1, 1, 1)) * self.scale.view(1, -1, 1, 1)


def get_inputs() -> list[torch.Tensor]:
    return [2.0 * torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs() -> list[int]:
    return [CHANNELS]
