"""Fusion: linear layer + bias + ReLU in bfloat16: out = relu(x @ W^T + b), bfloat16 output.

Compute bound (tensor cores). The nn.Linear is built in float32 (default init) and converted to
bfloat16 in __init__; the input is bfloat16.
GPU sizes: M = N = K = 4096, 2 * M * N * K = 137 GFLOP, 101 MB of minimum DRAM traffic.
"""

import torch
import torch.nn as nn

M = 4096  # rows of x (batch * tokens)
K = 4096  # in_features
N = 4096  # out_features

# Odd sizes, not multiples of any power-of-two tile: the M, N and K tails are all masked, and with
# 16..64-wide tiles the K loop runs more than once and the grid has several tiles along M and N.
KFORGE_SMALL = {"M": 67, "K": 71, "N": 45}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(M, K, dtype=torch.bfloat16)]


def get_init_inputs() -> list[int]:
    return [K, N]
