"""Cross-entropy loss (mean over the batch) from float32 logits and int64 class targets.

Targets are drawn from [0, CLASSES), so ignore_index never occurs. The output is a 0-d tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8192
CLASSES = 4096

KFORGE_SMALL = {"BATCH": 37, "CLASSES": 1000}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)


def get_inputs() -> list[torch.Tensor]:
    return [3.0 * torch.randn(BATCH, CLASSES), torch.randint(0, CLASSES, (BATCH,))]


def get_init_inputs() -> list[int]:
    return []
