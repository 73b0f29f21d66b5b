"""Square matrix multiplication in float16: C = A @ B, float16 output. Compute bound (tensor cores).

GPU sizes: M = N = K = 4096, 2 * M * N * K = 137 GFLOP, 101 MB of minimum DRAM traffic.
"""

import torch
import torch.nn as nn

M = 4096  # rows of A and C
K = 4096  # columns of A, rows of B
N = 4096  # columns of B and C

# Odd sizes, not multiples of any power-of-two tile: the M, N and K tails are all masked, and with
# 16..64-wide tiles the K loop runs more than once and the grid has several tiles along M and N.
KFORGE_SMALL = {"M": 67, "K": 71, "N": 45}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs() -> list[int]:
    return []
