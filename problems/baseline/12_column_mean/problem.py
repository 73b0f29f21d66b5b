"""Mean over the leading (strided) dimension: out = x.mean(dim=0). Float32.

x has shape (ROWS, COLS); out has shape (COLS,). A reduction over the strided dimension: each
output element averages one column.
GPU sizes: 16384 x 4096, 268 MB of minimum DRAM traffic (x read once; the 16 KB output is negligible).
"""

import torch
import torch.nn as nn

ROWS = 16384
COLS = 4096

# Odd sizes, not multiples of any power-of-two block: the row loop runs more than once (twice at
# BLOCK_M = 256) and ends on a masked tail, and the last column block is masked.
KFORGE_SMALL = {"ROWS": 301, "COLS": 150}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=0)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(ROWS, COLS)]


def get_init_inputs() -> list[int]:
    return []
