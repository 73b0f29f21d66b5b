"""Scaled add (AXPY): out = alpha * x + y. Float32, purely memory bound."""

import torch
import torch.nn as nn

N = 1 << 25  # 33,554,432 elements per tensor
ALPHA = 0.75

KFORGE_SMALL = {"N": 1000}


class Model(nn.Module):
    def __init__(self, alpha: float) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.alpha * x + y


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs() -> list[float]:
    return [ALPHA]
