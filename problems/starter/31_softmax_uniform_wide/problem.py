"""Softmax over the last dimension of uniform [0, 1) inputs, 8192 columns. Float32.

Every output is within a factor e of 1/8192 (about 1.2e-4), so the whole output lies within the
default atol of 1e-4 of the constant 1/COLS: an elementwise tolerance alone cannot tell a kernel
that reads the input from one that writes 1/COLS everywhere. kforge's relative-variation criterion
(docs/verdict.md) can.
"""

import torch
import torch.nn as nn

ROWS = 4096
COLS = 8192

# COLS stays at 8192 in the small sizes: the near-constant output is the point of the problem.
KFORGE_SMALL = {"ROWS": 5, "COLS": 8192}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(ROWS, COLS)]


def get_init_inputs() -> list[int]:
    return []
