"""Fusion: linear layer + bias + exact (erf) GELU in bfloat16: out = gelu(x @ W^T + b).

Compute bound (tensor cores). The nn.Linear is built in float32 (default init) and
converted to bfloat16 in __init__; the inputs are bfloat16.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 4096  # rows of x (batch * tokens)
K = 4096  # in_features
N = 4096  # out_features

# Not multiples of the 128/128/64 tiles: M, N and K tails are all masked, and the K loop runs twice.
KFORGE_SMALL = {"M": 67, "K": 100, "N": 72}


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.linear(x))


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(M, K, dtype=torch.bfloat16)]


def get_init_inputs() -> list[int]:
    return [K, N]
