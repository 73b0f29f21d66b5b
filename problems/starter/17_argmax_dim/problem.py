"""Argmax over the last dimension: out[i] = argmax_j x[i, j]. Float32 input, int64 output.

Ties go to the first index, as in torch.argmax (randn inputs make ties practically absent).
"""

import torch
import torch.nn as nn

ROWS = 8192
COLS = 8192

# COLS > 4096 so the solution's column loop runs twice, with a masked tail.
KFORGE_SMALL = {"ROWS": 37, "COLS": 5000}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=-1)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(ROWS, COLS)]


def get_init_inputs() -> list[int]:
    return []
