"""Fusion: rotary position embedding (RoPE), rotate-half convention. Float32.

q has shape [BATCH, SEQ, HEADS, HEAD_DIM]; cos and sin have shape [SEQ, HEAD_DIM / 2] (the
standard base-10000 frequencies, built deterministically in get_inputs). With q1, q2 the first
and second halves of the last dimension:
out = cat(q1 * cos - q2 * sin, q2 * cos + q1 * sin), cos / sin broadcast over batch and heads.
"""

import torch
import torch.nn as nn

BATCH = 8
SEQ = 2048
HEADS = 32
HEAD_DIM = 128
BASE = 10000.0

# HEADS is not a multiple of the solution's 16-head tiles (the head loop runs twice, masked), and
# HEAD_DIM / 2 = 12 is not a power of two (masked half-dimension).
KFORGE_SMALL = {"BATCH": 2, "SEQ": 7, "HEADS": 19, "HEAD_DIM": 24}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        half = q.shape[-1] // 2
        q1 = q[..., :half]
        q2 = q[..., half:]
        c = cos[None, :, None, :]
        s = sin[None, :, None, :]
        return torch.cat([q1 * c - q2 * s, q2 * c + q1 * s], dim=-1)


def get_inputs() -> list[torch.Tensor]:
    inv_freq = BASE ** (-torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM)
    angles = torch.arange(SEQ, dtype=torch.float32)[:, None] * inv_freq[None, :]
    return [torch.randn(BATCH, SEQ, HEADS, HEAD_DIM), torch.cos(angles), torch.sin(angles)]


def get_init_inputs() -> list[int]:
    return []
