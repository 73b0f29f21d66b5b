"""Inclusive prefix sum (cumsum) along the last dimension. Float32.

Inputs are uniform in [0, 1): prefix sums grow monotonically, so the comparison at
atol = rtol = 1e-4 measures the scan, not the cancellation of a random walk near zero.
"""

import torch
import torch.nn as nn

ROWS = 4096
COLS = 8192

# COLS > 1024 so the solution's carried block loop runs three times, with a masked tail.
KFORGE_SMALL = {"ROWS": 37, "COLS": 2500}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=-1)


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(ROWS, COLS)]


def get_init_inputs() -> list[int]:
    return []
