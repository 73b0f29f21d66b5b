"""How far a float32 reference's own answer moves with TF32, which PyTorch leaves on for cuDNN
convolutions by default (`torch.backends.cudnn.allow_tf32`): such a reference is only as precise as a
10-bit mantissa, and an honest candidate that computes the convolution another way (an Inductor
template, full float32) differs from it by more than float32's default tolerance (docs/verdict.md,
"TF32 in the reference")."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from kforge.worker.correctness import Tolerance

SLACK_FACTOR = 4.0  # the candidate's own TF32 rounding may add to the reference's, in another order
TF32_DTYPES = (torch.float32, torch.complex64)


def tf32_in_use() -> bool:
    """Whether float32 convolutions or matmuls may run as TF32 in this process."""
    return (
        bool(torch.backends.cudnn.allow_tf32)
        or bool(torch.backends.cuda.matmul.allow_tf32)
        or torch.get_float32_matmul_precision() != "highest"
    )


def has_tf32_outputs(outputs: list[Any]) -> bool:
    return any(isinstance(value, torch.Tensor) and value.dtype in TF32_DTYPES for value in outputs)


@contextmanager
def tf32_disabled() -> Iterator[None]:
    """Full float32 for cuDNN and matmuls while the block runs; the process's settings after."""
    cudnn, matmul = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    precision = torch.get_float32_matmul_precision()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = cudnn, matmul
        torch.set_float32_matmul_precision(precision)


def output_slack(outputs: list[Any], full_precision: list[Any]) -> list[float]:
    """Per output, the largest finite difference between the reference as it runs and the same call in
    full float32 (0 for outputs of other dtypes, or that do not line up)."""
    slack: list[float] = []
    for index, value in enumerate(outputs):
        other = full_precision[index] if index < len(full_precision) else None
        if (
            not isinstance(value, torch.Tensor)
            or value.dtype not in TF32_DTYPES
            or not isinstance(other, torch.Tensor)
            or other.shape != value.shape
            or other.dtype != value.dtype
            or value.numel() == 0
        ):
            slack.append(0.0)
            continue
        gap = (value - other).abs()
        finite = gap[torch.isfinite(gap)]
        slack.append(float(finite.max().item()) if finite.numel() else 0.0)
    return slack


def widened(tolerance: Tolerance, slack: float) -> Tolerance:
    """The output's tolerance with room for TF32: atol at least SLACK_FACTOR times the reference's own
    TF32 difference."""
    return Tolerance(atol=max(tolerance.atol, SLACK_FACTOR * slack), rtol=tolerance.rtol)
