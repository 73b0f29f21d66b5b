"""Log-softmax over the last dimension: x - logsumexp(x). Float32, rows of 16384 columns."""

import torch
import torch.nn as nn

ROWS = 4096
COLS = 16384

# COLS > 8192 so the solution's column loop runs twice, with a masked tail.
KFORGE_SMALL = {"ROWS": 37, "COLS": 10000}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1)


def get_inputs() -> list[torch.Tensor]:
    # Spread of about +-12 so that the max subtraction matters.
    return [3.0 * torch.randn(ROWS, COLS)]


def get_init_inputs() -> list[int]:
    return []
