"""Batched matrix multiplication in bfloat16: C[b] = A[b] @ B[b] (torch.bmm). Compute bound (tensor cores)."""

import torch
import torch.nn as nn

BATCH = 32
M = 1024  # rows of each A[b] and C[b]
K = 1024  # columns of each A[b], rows of each B[b]
N = 1024  # columns of each B[b] and C[b]

# Not multiples of the 128/128/64 tiles: M, N and K tails are all masked, the K loop runs 3 times
# and every batch has more than one tile along M.
KFORGE_SMALL = {"BATCH": 3, "M": 140, "K": 150, "N": 72}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs() -> list[torch.Tensor]:
    return [
        torch.randn(BATCH, M, K, dtype=torch.bfloat16),
        torch.randn(BATCH, K, N, dtype=torch.bfloat16),
    ]


def get_init_inputs() -> list[int]:
    return []
