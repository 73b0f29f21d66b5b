"""Embedding lookup: out[b, s, :] = weight[indices[b, s], :]. Float32 table, int64 indices."""

import torch
import torch.nn as nn

NUM_EMBEDDINGS = 32000
DIM = 1024
BATCH = 8
SEQ = 4096

KFORGE_SMALL = {"NUM_EMBEDDINGS": 100, "DIM": 300, "BATCH": 3, "SEQ": 7}


class Model(nn.Module):
    def __init__(self, num_embeddings: int, dim: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(num_embeddings, dim)

    def forward(self, indices: torch.Tensor) -> torch.Tensor:
        return self.embedding(indices)


def get_inputs() -> list[torch.Tensor]:
    return [torch.randint(0, NUM_EMBEDDINGS, (BATCH, SEQ))]


def get_init_inputs() -> list[int]:
    return [NUM_EMBEDDINGS, DIM]
