"""Out-of-place 2-D transpose: out = x.T, materialised contiguous. Float32, memory bound."""

import torch
import torch.nn as nn

ROWS = 8192
COLS = 8192

# Neither dimension is a multiple of the 64x64 tile.
KFORGE_SMALL = {"ROWS": 130, "COLS": 77}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(0, 1).contiguous()


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(ROWS, COLS)]


def get_init_inputs() -> list[int]:
    return []
