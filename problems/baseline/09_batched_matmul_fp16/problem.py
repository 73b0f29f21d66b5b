"""Batched matrix multiplication in float16: C[b] = A[b] @ B[b] (torch.bmm), float16 output.

Compute bound (tensor cores). GPU sizes: 32 x (1024 x 1024 @ 1024 x 1024),
2 * BATCH * M * N * K = 68.7 GFLOP, 201 MB of minimum DRAM traffic.
"""

import torch
import torch.nn as nn

BATCH = 32
M = 1024  # rows of each A[b] and C[b]
K = 1024  # columns of each A[b], rows of each B[b]
N = 1024  # columns of each B[b] and C[b]

# Odd sizes, not multiples of any power-of-two tile: the M, N and K tails are all masked, and with
# 16..64-wide tiles the K loop runs more than once; three batches exercise the batch offsets.
KFORGE_SMALL = {"BATCH": 3, "M": 37, "K": 71, "N": 45}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(BATCH, M, K, dtype=torch.float16), torch.randn(BATCH, K, N, dtype=torch.float16)]


def get_init_inputs() -> list[int]:
    return []
