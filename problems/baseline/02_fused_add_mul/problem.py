"""Fused elementwise add and multiply: out = (x + y) * z. Three float32 inputs, 2^26 elements.

Memory bound: three reads and one write of 2^26 float32 (1074 MB moved).
"""

import torch
import torch.nn as nn

N = 2**26

# Odd, not a multiple of any block size: the last program is masked.
KFORGE_SMALL = {"N": 5001}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return (x + y) * z


def get_inputs() -> list[torch.Tensor]:
    # Float32.
    return [torch.randn(N), torch.randn(N), torch.randn(N)]


def get_init_inputs() -> list[int]:
    return []
