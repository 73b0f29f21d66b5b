"""Softmax over the last dimension: torch.softmax(x, -1). Float32, 4096 rows of 16384 columns.

Memory bound: one read and one write of 4096 x 16384 float32 (537 MB moved).
"""

import torch
import torch.nn as nn

ROWS = 4096
COLS = 16384

# Odd, not a multiple of any block size: the column loops end in a masked tail.
KFORGE_SMALL = {"ROWS": 37, "COLS": 5001}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, -1)


def get_inputs() -> list[torch.Tensor]:
    # Float32; a spread of about +-12 so that the max subtraction matters.
    return [3.0 * torch.randn(ROWS, COLS)]


def get_init_inputs() -> list[int]:
    return []
