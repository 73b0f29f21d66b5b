"""Matrix-vector product: y = A @ x with A (M, K) and x (K, 1). Float32, memory bound (A is read once)."""

import torch
import torch.nn as nn

M = 16384  # rows of A
K = 8192  # columns of A, length of x

# K > 2 * 512 so the solution's K loop runs three times with a masked tail; M is not a multiple of 8.
KFORGE_SMALL = {"M": 37, "K": 1100}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, x)


def get_inputs() -> list[torch.Tensor]:
    # x is scaled by 1/sqrt(K) so that y has unit variance: with plain randn, |y| ~ 90 and the
    # rounding error of a float32 sum over K = 8192 terms (about 4e-4 for a sequential sum, as
    # CPU gemv does) exceeds atol = 1e-4 wherever y happens to be near zero.
    return [torch.randn(M, K), torch.randn(K, 1) / K**0.5]


def get_init_inputs() -> list[int]:
    return []
