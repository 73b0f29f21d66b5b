"""2-D max pooling, 2x2 window, stride 2, no padding (nn.MaxPool2d(2, 2)) on NCHW. Float32, memory bound."""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
HEIGHT = 256
WIDTH = 256
KERNEL_SIZE = 2
STRIDE = 2

# Odd HEIGHT and WIDTH: the last input row and column belong to no window (floor mode). The
# output (18 x 150) is not a multiple of the solution's 8 x 128 tile and needs two tiles per row.
KFORGE_SMALL = {"BATCH": 2, "CHANNELS": 3, "HEIGHT": 37, "WIDTH": 301}


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int) -> None:
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs() -> list[int]:
    return [KERNEL_SIZE, STRIDE]
