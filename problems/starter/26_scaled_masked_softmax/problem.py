"""Fusion: scaled, causally masked softmax over attention scores. Float32.

out = softmax(x * scale + mask, -1) for x of shape [BATCH, HEADS, SEQ, SEQ], where the
additive causal mask is -inf at key positions j > query position i and 0 elsewhere, and
scale = HEAD_DIM ** -0.5. Every row keeps at least its diagonal, so no row is all -inf.
"""

import torch
import torch.nn as nn

BATCH = 8
HEADS = 16
SEQ = 1024
HEAD_DIM = 64

# SEQ > 256 so the column loops run twice (the first one for rows past 256), with a masked tail;
# 2 * 301 rows is not a multiple of the solution's 4-row tiles, and one tile spans two heads.
KFORGE_SMALL = {"BATCH": 1, "HEADS": 2, "SEQ": 301}


class Model(nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q_len, k_len = x.shape[-2], x.shape[-1]
        mask = torch.full((q_len, k_len), float("-inf"), device=x.device).triu(1)
        return torch.softmax(x * self.scale + mask, dim=-1)


def get_inputs() -> list[torch.Tensor]:
    # Raw q.k scores of unit-variance q and k with HEAD_DIM 64 have std 8; 3x that, so the
    # scaled scores have std 3 and the max subtraction matters.
    return [24.0 * torch.randn(BATCH, HEADS, SEQ, SEQ)]


def get_init_inputs() -> list[float]:
    return [HEAD_DIM**-0.5]
