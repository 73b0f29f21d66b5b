"""Output comparison and input-mutation checks, run by the judge only.

Default tolerances follow the output dtype's precision (documented in docs/verdict.md):
float64 1e-7, float32 1e-4 (KernelBench's value: room for reordered reductions and fused multiply-add,
not for TF32 or half-precision shortcuts), float16 1e-2 (about ten units in the last place),
bfloat16 2e-2 (eight mantissa bits: one unit in the last place at 1.0 is 7.8e-3), 8-bit floats 1e-1,
integers and booleans exact. An element passes when |out - ref| <= atol + rtol * |ref|.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from kforge.worker.values import describe, dtype_name

DEFAULT_TOLERANCES: dict[torch.dtype, float] = {
    torch.float64: 1e-7,
    torch.float32: 1e-4,
    torch.float16: 1e-2,
    torch.bfloat16: 2e-2,
    torch.float8_e4m3fn: 1e-1,
    torch.float8_e5m2: 1e-1,
    torch.complex128: 1e-7,
    torch.complex64: 1e-4,
}


MAX_OUTPUTS = 64  # more outputs than this is a container of values, not a model's outputs


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


def default_tolerance(dtype: torch.dtype) -> Tolerance:
    value = DEFAULT_TOLERANCES.get(dtype, 0.0)
    return Tolerance(atol=value, rtol=value)


def resolve_tolerance(dtype: torch.dtype, atol: float | None, rtol: float | None) -> Tolerance:
    """User overrides win; an unset one keeps the dtype default."""
    default = default_tolerance(dtype)
    return Tolerance(atol=default.atol if atol is None else atol, rtol=default.rtol if rtol is None else rtol)


def flatten_outputs(value: Any) -> list[Any]:
    """A forward returns a tensor or a tuple/list of them, possibly nested (`(o, (h, c))`, as real wrappers
    return): the leaves in depth-first order, compared element by element."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in flatten_outputs(item)]
    return [value]


def is_plain_value(item: Any) -> bool:
    """None or a bool, int, float or string: what a wrapper may return beside its tensors (exact types, so
    no subclass brings its own comparison)."""
    return item is None or type(item) in (bool, int, float, str)


def overlaps_itself(tensor: torch.Tensor) -> bool:
    """A stride-0 expand: several elements share one memory location."""
    return any(stride == 0 and size > 1 for size, stride in zip(tensor.shape, tensor.stride(), strict=True))


def aliased_input(output: torch.Tensor, inputs: list[Any]) -> int | None:
    """The index of the first tensor input whose storage the output shares (a view of it), or None."""
    if output.numel() == 0:
        return None
    low = output.untyped_storage().data_ptr()
    high = low + output.untyped_storage().nbytes()
    for index, value in enumerate(inputs):
        if isinstance(value, torch.Tensor) and value.numel() > 0 and value.device == output.device:
            other_low = value.untyped_storage().data_ptr()
            if low < other_low + value.untyped_storage().nbytes() and other_low < high:
                return index
    return None


def _nonfinite_mismatch(out: torch.Tensor, ref: torch.Tensor) -> int:
    """NaN must sit exactly where the reference has NaN, and infinities must match with their sign."""
    nan_mismatch = torch.isnan(out) != torch.isnan(ref)
    inf_mismatch = torch.isinf(out) != torch.isinf(ref)
    both_inf = torch.isinf(out) & torch.isinf(ref)
    sign_mismatch = both_inf & (torch.sign(out) != torch.sign(ref))
    return int((nan_mismatch | inf_mismatch | sign_mismatch).sum().item())


# Elements compared at a time: the statistics are computed in float64, and whole-tensor temporaries of a
# 6 GiB float32 output (KernelBench level 1 at its sizes) took the judge past 70 GiB of GPU memory.
CHUNK_ELEMENTS = 1 << 24


def float64_chunks(
    out: torch.Tensor, ref: torch.Tensor
) -> Iterator[tuple[slice, torch.Tensor, torch.Tensor]]:
    """out and ref (same shape, complex as pairs of reals) flattened, in float64 pieces of at most
    CHUNK_ELEMENTS elements, each with its place in the flattened tensor."""
    if out.is_complex() or ref.is_complex():
        out, ref = torch.view_as_real(out), torch.view_as_real(ref)
    if out.shape != ref.shape:
        out, ref = torch.broadcast_tensors(out, ref)
    flat_out, flat_ref = out.reshape(-1), ref.reshape(-1)
    for start in range(0, flat_ref.numel(), CHUNK_ELEMENTS):
        piece = slice(start, start + CHUNK_ELEMENTS)
        yield piece, flat_out[piece].to(torch.float64), flat_ref[piece].to(torch.float64)


def _finite(value: float) -> float:
    """Error statistics travel as JSON, which has no infinity: an overflowing error (garbage int64
    against an exact-match tolerance) is reported as the largest float instead."""
    return value if math.isfinite(value) else sys.float_info.max


def compare_tensor(out: torch.Tensor, ref: torch.Tensor, tolerance: Tolerance) -> dict[str, Any]:
    """Error statistics of one output against its reference; 'passed' says if it is within tolerance."""
    report: dict[str, Any] = {
        "dtype": dtype_name(ref.dtype),
        "shape": list(ref.shape),
        "atol": tolerance.atol,
        "rtol": tolerance.rtol,
    }
    floor = max(tolerance.atol, torch.finfo(torch.float64).tiny)
    nonfinite = mismatched = 0
    ref_square = diff_square = max_abs = max_rel = 0.0
    for _, out64, ref64 in float64_chunks(out, ref):
        nonfinite += _nonfinite_mismatch(out64, ref64)
        finite = torch.isfinite(out64) & torch.isfinite(ref64)
        zero = torch.zeros((), dtype=torch.float64, device=out64.device)
        diff = torch.where(finite, (out64 - ref64).abs(), zero)
        ref_abs = torch.where(finite, ref64.abs(), zero)
        mismatched += int((diff > tolerance.atol + tolerance.rtol * ref_abs).sum().item())
        ref_square += float(ref_abs.square().sum().item())
        diff_square += float(diff.square().sum().item())
        max_abs = max(max_abs, float(diff.max().item()))
        # Relative to max(|ref|, atol): elements near zero are judged by atol, so they must not blow it up.
        max_rel = max(max_rel, float((diff / ref_abs.clamp_min(floor)).max().item()))
    mismatched += nonfinite
    ref_norm, diff_norm = math.sqrt(ref_square), math.sqrt(diff_square)
    report.update(
        max_abs_error=_finite(max_abs),
        max_rel_error=_finite(max_rel),
        rel_l2_error=_finite(diff_norm / ref_norm if ref_norm > 0 else diff_norm),
        mismatched_elements=mismatched,
        nonfinite_mismatches=nonfinite,
        total_elements=ref.numel(),
        passed=mismatched == 0,
    )
    return report


# Relative-variation criterion (docs/verdict.md, "Variation"): an output must follow the reference's own
# variation, not only sit within atol of it. ratio = ||out - ref|| / ||ref - mean(ref)|| over the finite
# elements; any constant output has ratio >= 1 (the mean is the closest constant), so a kernel that
# writes one value everywhere fails however small the reference's spread is next to atol. The bounds
# are per dtype, far above what honest kernels reach (the measurement is in docs/benchmarks.md).
VARIATION_BOUNDS: dict[torch.dtype, float] = {
    torch.float64: 1e-3,
    torch.float32: 1e-2,
    torch.float16: 0.1,
    torch.bfloat16: 0.2,
    torch.float8_e4m3fn: 0.5,
    torch.float8_e5m2: 0.5,
    torch.complex128: 1e-3,
    torch.complex64: 1e-2,
}
# A reference whose spread is within this many units in the last place of its own magnitude is
# treated as constant: rounding, not the kernel, would decide the ratio.
VARIATION_FLOOR_ULPS = 64.0
MIN_VARIATION_ELEMENTS = 2


# What variation_check adds to an output's report.
VARIATION_KEYS = (
    "variation",
    "reference_spread",
    "rel_variation_error",
    "variation_slope",
    "variation_follows",
    "variation_bound",
    "variation_passed",
)


def _epsilon(dtype: torch.dtype) -> float:
    if dtype.is_complex:
        dtype = torch.float64 if dtype == torch.complex128 else torch.float32
    return float(torch.finfo(dtype).eps)


def _variation_skipped(why: str) -> dict[str, Any]:
    return {"variation": f"skipped: {why}", "rel_variation_error": None, "variation_passed": True}


def variation_check(
    out: torch.Tensor, ref: torch.Tensor, bound: float | None = None, rtol: float = 0.0
) -> dict[str, Any]:
    """How far out is from ref relative to ref's own spread around its mean.

    Returns `rel_variation_error` (None when the criterion does not apply), `variation_slope` (the
    least-squares slope of out on ref: 1 when out follows ref, 0 for any constant) and `variation`
    ("checked", or why it was skipped: an exact dtype, fewer than two finite elements, a constant
    reference). `variation_passed` is False only when the ratio is over the dtype's bound and out does not
    `variation_follows` ref either: a slope within the bound of 1 with an L2 error within `rtol` of ref's
    own norm. Rounding in long sums grows with the values, not with their spread, so a reference whose
    mean dwarfs its spread (a matmul of positive inputs) can sit far from an honest output in units of
    spread while both agree to rtol and vary together."""
    dtype = ref.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        return _variation_skipped("exact dtype")
    limit = VARIATION_BOUNDS.get(dtype) if bound is None else bound
    if limit is None:
        return _variation_skipped("no bound for this dtype")
    count, total, total_out, ref_square = 0, 0.0, 0.0, 0.0
    for _, out64, ref64 in float64_chunks(out, ref):  # first pass: the finite elements' count and means
        finite = torch.isfinite(out64) & torch.isfinite(ref64)
        kept = ref64[finite]
        count += kept.numel()
        total += float(kept.sum().item())
        total_out += float(out64[finite].sum().item())
        ref_square += float(kept.square().sum().item())
    if count < MIN_VARIATION_ELEMENTS:
        return _variation_skipped("fewer than 2 finite elements")
    mean, mean_out = total / count, total_out / count
    spread_square, error_square, covariance = 0.0, 0.0, 0.0
    for _, out64, ref64 in float64_chunks(out, ref):  # second pass: spread, error, how out moves with ref
        finite = torch.isfinite(out64) & torch.isfinite(ref64)
        kept_out, kept_ref = out64[finite], ref64[finite]
        spread_square += float((kept_ref - mean).square().sum().item())
        error_square += float((kept_out - kept_ref).square().sum().item())
        covariance += float(((kept_out - mean_out) * (kept_ref - mean)).sum().item())
    spread = math.sqrt(spread_square)
    floor = VARIATION_FLOOR_ULPS * _epsilon(dtype) * math.sqrt(ref_square)
    if spread <= floor:
        return _variation_skipped("constant reference")
    ratio = math.sqrt(error_square) / spread
    slope = covariance / spread_square
    follows = abs(1.0 - slope) <= limit and math.sqrt(error_square) <= rtol * math.sqrt(ref_square)
    return {
        "variation": "checked",
        "reference_spread": _finite(spread),
        "rel_variation_error": _finite(ratio),
        "variation_slope": _finite(slope),
        "variation_follows": follows,
        "variation_bound": limit,
        "variation_passed": ratio <= limit or follows,
    }


def check_structure(out: Any, ref: torch.Tensor, index: int) -> str | None:
    """Why out cannot be compared with ref, or None if type, shape, dtype and device agree."""
    if type(out) is not torch.Tensor:
        return f"output {index} is {describe(out)}, expected a torch.Tensor"
    if out.shape != ref.shape:
        return f"output {index} has shape {list(out.shape)}, expected {list(ref.shape)}"
    if out.dtype != ref.dtype:
        return f"output {index} has dtype {dtype_name(out.dtype)}, expected {dtype_name(ref.dtype)}"
    if out.device != ref.device:
        return f"output {index} is on {out.device}, expected {ref.device}"
    return None


def mutated_inputs(shared: list[Any], pristine: list[Any]) -> list[int]:
    """Indices of tensor inputs whose bytes changed during the candidate's call."""
    changed = []
    for index, (now, before) in enumerate(zip(shared, pristine, strict=True)):
        if isinstance(before, torch.Tensor) and before.numel() > 0:
            same = torch.equal(now.reshape(-1).view(torch.uint8), before.reshape(-1).view(torch.uint8))
            if not same:
                changed.append(index)
    return changed


def defined_elements(
    out: torch.Tensor, ref: torch.Tensor, undefined: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The elements of out and ref (flattened) where the reference wrote its output: `undefined` marks
    those it left unwritten (kforge.worker.uninitialized), which no criterion may hold against a candidate."""
    defined = ~undefined.to(ref.device)
    return out[defined], ref[defined]
