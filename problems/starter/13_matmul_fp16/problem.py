"""Square matrix multiplication in float16: C = A @ B. Compute bound (tensor cores)."""

import torch
import torch.nn as nn

M = 4096  # rows of A and C
K = 4096  # columns of A, rows of B
N = 4096  # columns of B and C

# Not multiples of the 128/128/64 tiles: M, N and K tails are all masked, the K loop runs 3 times
# and the grid has more than one tile along M and N.
KFORGE_SMALL = {"M": 300, "K": 150, "N": 200}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs() -> list[int]:
    return []
