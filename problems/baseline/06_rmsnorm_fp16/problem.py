"""RMSNorm over the last dimension, float16 in and out, float32 arithmetic.

out = x * rsqrt(mean(x.float()^2, -1) + eps) * w, computed in float32 and rounded to float16
once. The float16 weight w is drawn from the seeded RNG in __init__ (uniform in [0.5, 1.5),
then cast to float16), so a candidate must build it the same way to get the same values.

Memory bound: one read and one write of 16384 x 4096 float16 (268 MB moved; the 8 KB weight is
negligible).
"""

import torch
import torch.nn as nn

ROWS = 16384
DIM = 4096
EPS = 1e-6

# DIM odd, not a multiple of any block size: the column loops end in a masked tail.
KFORGE_SMALL = {"ROWS": 37, "DIM": 5001}


class Model(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((torch.rand(dim) + 0.5).half())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        normed = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (normed * self.weight.float()).to(x.dtype)


def get_inputs() -> list[torch.Tensor]:
    # Float16.
    return [torch.randn(ROWS, DIM, dtype=torch.float16)]


def get_init_inputs() -> list[int | float]:
    return [DIM, EPS]
