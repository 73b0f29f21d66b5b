"""LayerNorm over the last dimension with nn.LayerNorm's default initialisation (weight 1, bias 0),
as KernelBench's problems build it. Float32.

On a freshly built model the affine step is the identity, so a kernel that skips it is exact there;
kforge perturbs the parameters before the trials (docs/verdict.md) so that it is not.
"""

import torch
import torch.nn as nn

BATCH = 16
DIM = 8192
EPS = 1e-5

KFORGE_SMALL = {"BATCH": 6, "DIM": 1000}


class Model(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(dim, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(BATCH, DIM)]


def get_init_inputs() -> list[int | float]:
    return [DIM, EPS]
