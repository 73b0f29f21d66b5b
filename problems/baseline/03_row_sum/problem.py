"""Row sum: out[i] = sum_j x[i, j], i.e. x.sum(-1). Float32 reduction over the last dimension.

Memory bound: one read of 8192 x 8192 float32 and a write of 8192 float32 (268 MB moved).
"""

import torch
import torch.nn as nn

ROWS = 8192
COLS = 8192

# Odd, not a multiple of any block size: the column loop ends in a masked tail.
KFORGE_SMALL = {"ROWS": 37, "COLS": 5001}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(-1)


def get_inputs() -> list[torch.Tensor]:
    # Float32.
    return [torch.randn(ROWS, COLS)]


def get_init_inputs() -> list[int]:
    return []
