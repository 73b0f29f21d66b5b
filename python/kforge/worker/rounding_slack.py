"""How far a float32 reference's own answer is from the same computation in float64, so that an honest
candidate is not held to more precision than the reference has (docs/verdict.md, "The reference's own
rounding").

A long float32 reduction (a matrix-vector product over a million columns, a variance as E[x^2] - E[x]^2)
carries a rounding error that depends on the order of its additions. An honest kernel that adds in another
order (a split reduction, a tree instead of a loop) lands as far from the exact answer as the reference
does, in another direction, and can be outside float32's default tolerance of the reference. When a
float32 output fails its comparison, the judge runs the reference once more in float64 on the same inputs
(a copy of the model with float64 parameters) and widens the output's criteria by what that shows:

- elementwise: atol at least SLACK_FACTOR times the reference's largest distance from float64;
- variation: ||out - ref|| may reach SLACK_FACTOR times ||ref - ref64||, but never VARIATION_CAP of the
  reference's spread, so an output that ignores the inputs (a constant scores at least 1) still fails.

A wrong answer stays wrong: the room is the reference's own error, measured, not a looser default.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

import torch

from kforge.worker.correctness import Tolerance, float64_chunks

SLACK_FACTOR = 4.0  # the candidate's rounding adds to the reference's, in another order
VARIATION_CAP = 0.5  # of the reference's spread: a constant output (ratio >= 1) never passes
# The dtypes given room, each with the wider dtype its reference is measured against.
WIDER = {torch.float32: torch.float64, torch.complex64: torch.complex128}


@dataclass(frozen=True)
class RoundingSlack:
    """One output's reference against float64: the largest elementwise distance and the L2 distance."""

    max_abs: float
    norm: float
    measured_against: str = "float64"  # or "autotune configs": the reference under its other configs

    def as_json(self) -> dict[str, Any]:
        return {
            "max_abs": self.max_abs,
            "norm": self.norm,
            "factor": SLACK_FACTOR,
            "measured_against": self.measured_against,
        }


def applies_to(dtype: torch.dtype) -> bool:
    return dtype in WIDER


def in_float64(value: Any) -> Any:
    """The inputs with every float32 (complex64) tensor as float64 (complex128), nested sequences too."""
    if isinstance(value, torch.Tensor):
        return value.to(WIDER[value.dtype]) if applies_to(value.dtype) else value.clone()
    if isinstance(value, list | tuple):
        return type(value)(in_float64(item) for item in value)
    return value


def float64_model(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of the model whose floating-point parameters and buffers are float64."""
    return copy.deepcopy(model).double()


def roomable(dtype: torch.dtype) -> bool:
    """Outputs whose comparison may get room for the reference's own variability (float64 or autotuning)."""
    return dtype.is_floating_point or dtype.is_complex


def distance(ref: Any, other: Any) -> RoundingSlack | None:
    """The largest elementwise and the L2 distance between two floating tensors of one shape over their
    finite differences (None where they cannot be compared)."""
    if (
        not isinstance(ref, torch.Tensor)
        or not isinstance(other, torch.Tensor)
        or not roomable(ref.dtype)
        or other.shape != ref.shape
        or ref.numel() == 0
    ):
        return None
    max_abs, square = 0.0, 0.0
    for _, ref64, other64 in float64_chunks(ref, other):
        gap = (ref64 - other64).abs()
        gap = gap[torch.isfinite(gap)]
        if gap.numel():
            max_abs = max(max_abs, float(gap.max().item()))
            square += float(gap.square().sum().item())
    return RoundingSlack(max_abs, math.sqrt(square))


def widest(
    first: list[RoundingSlack | None], second: list[RoundingSlack | None]
) -> list[RoundingSlack | None]:
    """Per output, the larger room of two measurements (None where neither measured one)."""
    merged: list[RoundingSlack | None] = []
    for index in range(max(len(first), len(second))):
        one = first[index] if index < len(first) else None
        two = second[index] if index < len(second) else None
        if one is None or two is None:
            merged.append(one or two)
        else:
            larger = one if one.max_abs >= two.max_abs else two
            merged.append(RoundingSlack(larger.max_abs, max(one.norm, two.norm), larger.measured_against))
    return merged


def measured(reference: list[Any], exact: list[Any]) -> list[RoundingSlack | None]:
    """Per output, the reference's distance from its float64 run (None where the float64 run did not give
    a wider tensor of the same shape: that output ran in float32 anyway, or is not a float32 tensor)."""
    slack: list[RoundingSlack | None] = []
    for index, ref in enumerate(reference):
        other = exact[index] if index < len(exact) else None
        wider = isinstance(ref, torch.Tensor) and applies_to(ref.dtype)
        if not wider or not isinstance(other, torch.Tensor) or other.dtype != WIDER[ref.dtype]:
            slack.append(None)
            continue
        slack.append(distance(ref, other))
    return slack


def widened(tolerance: Tolerance, slack: RoundingSlack) -> Tolerance:
    return Tolerance(atol=max(tolerance.atol, SLACK_FACTOR * slack.max_abs), rtol=tolerance.rtol)


def variation_bound(bound: float, slack: RoundingSlack, spread: float) -> float:
    """The variation criterion's bound with room for the reference's own rounding, capped."""
    if spread <= 0:
        return bound
    return max(bound, min(VARIATION_CAP, SLACK_FACTOR * slack.norm / spread))


def with_variation_room(variation: dict[str, Any], slack: RoundingSlack) -> dict[str, Any]:
    """correctness.variation_check's result judged again against the bound with room: the ratio and the
    reference's spread it measured decide, without another pass over the tensors."""
    if variation.get("variation") != "checked":
        return variation
    bound = variation_bound(variation["variation_bound"], slack, variation["reference_spread"])
    passed = variation["rel_variation_error"] <= bound or bool(variation.get("variation_follows"))
    return {**variation, "variation_bound": bound, "variation_passed": passed}
