"""Inclusive prefix sum (cumsum) along the last dimension. Float32.

Inputs are uniform in [0, 1): prefix sums grow monotonically, so the comparison at
atol = rtol = 1e-4 measures the scan, not the cancellation of a random walk near zero.
GPU sizes: 4096 x 8192, 268 MB of minimum DRAM traffic (x read once, out written once).
"""

import torch
import torch.nn as nn

ROWS = 4096
COLS = 8192

# COLS is odd and not a multiple of any power-of-two block: the carried block loop runs more than
# once (three times at BLOCK = 256) and ends on a masked tail.
KFORGE_SMALL = {"ROWS": 37, "COLS": 601}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=-1)


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(ROWS, COLS)]


def get_init_inputs() -> list[int]:
    return []
