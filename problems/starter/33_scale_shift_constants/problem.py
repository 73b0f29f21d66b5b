"""y = x * scale + shift with the scale and shift given to the constructor (1.5 and 0.25), on a
4096 x 8192 float32 tensor.

Both the constants and the shape are the problem's, not the operation's: kforge's generalisation trial
(docs/verdict.md) runs the problem at other sizes and with other constants, so a kernel that bakes in
1.5, 0.25 or 4096 x 8192 fails there.
"""

import torch
import torch.nn as nn

ROWS = 4096
COLS = 8192
SCALE = 1.5
SHIFT = 0.25

KFORGE_SMALL = {"ROWS": 16, "COLS": 1024}


class Model(nn.Module):
    def __init__(self, scale: float, shift: float) -> None:
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale + self.shift


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(ROWS, COLS)]


def get_init_inputs() -> list[float]:
    return [SCALE, SHIFT]
