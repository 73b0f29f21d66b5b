"""Mean squared error loss, mean reduction: F.mse_loss(a, b). Float32; the output is a 0-d tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 8192
COLS = 8192

# 37 * 1999 elements: three partial-sum programs of 16 * 2048 elements, the last one ragged.
KFORGE_SMALL = {"ROWS": 37, "COLS": 1999}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(a, b)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(ROWS, COLS), 0.5 + torch.randn(ROWS, COLS)]


def get_init_inputs() -> list[int]:
    return []
