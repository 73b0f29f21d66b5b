"""The judge's check of sampled elements of every timed output (kforge.worker.timed_outputs).

An element passes under the same rule as a whole output (kforge.worker.correctness): NaN exactly where
the reference has NaN, infinities matching with their sign, finite elements within atol + rtol * |ref|.
"""

from __future__ import annotations

import torch

from kforge.worker.correctness import Tolerance
from kforge.worker.values import dtype_name


def sampled_reference(
    references: list[torch.Tensor], positions: torch.Tensor, rows_shape: torch.Size
) -> torch.Tensor | str:
    """The reference's elements at `positions` for each timed call (one reference per call, in order),
    as a [calls, positions] tensor; or why the candidate's sampled rows cannot be compared."""
    if positions.dtype != torch.int64 or positions.dim() != 1:
        return f"sampled positions are {dtype_name(positions.dtype)} of {positions.dim()} dimension(s)"
    if tuple(rows_shape) != (len(references), positions.numel()):
        return f"{list(rows_shape)} sampled elements kept, expected {[len(references), positions.numel()]}"
    if not references:
        return "no timed call was kept"
    numel = references[0].numel()
    if positions.numel() and (int(positions.min()) < 0 or int(positions.max()) >= max(1, numel)):
        return f"sampled positions outside the reference's {numel} elements"
    where = positions.to(references[0].device)
    sampled: dict[int, torch.Tensor] = {}
    rows = []
    for reference in references:
        key = id(reference)
        if key not in sampled:
            sampled[key] = reference.reshape(-1).index_select(0, where)
        rows.append(sampled[key])
    return torch.stack(rows)


def sampled_undefined(
    undefined: list[torch.Tensor | None], positions: torch.Tensor, rows_shape: torch.Size
) -> torch.Tensor | None:
    """Per timed call, which sampled positions the reference leaves unwritten (not compared), as a
    [calls, positions] mask; None when the reference writes every element of every call's output."""
    if all(mask is None for mask in undefined) or tuple(rows_shape) != (len(undefined), positions.numel()):
        return None
    rows = []
    for mask in undefined:
        if mask is None:
            rows.append(torch.zeros(positions.numel(), dtype=torch.bool))
        else:
            rows.append(mask.reshape(-1).index_select(0, positions.to(mask.device)).cpu())
    return torch.stack(rows)


def mismatch_mask(out: torch.Tensor, ref: torch.Tensor, tolerance: Tolerance) -> torch.Tensor:
    """Elementwise: True where out fails the comparison rule against ref (same shape)."""
    if out.is_complex() or ref.is_complex():
        out, ref = torch.view_as_real(out), torch.view_as_real(ref)
    out64, ref64 = out.to(torch.float64), ref.to(torch.float64)
    nan_mismatch = torch.isnan(out64) != torch.isnan(ref64)
    inf_mismatch = torch.isinf(out64) != torch.isinf(ref64)
    sign_mismatch = torch.isinf(out64) & torch.isinf(ref64) & (torch.sign(out64) != torch.sign(ref64))
    finite = torch.isfinite(out64) & torch.isfinite(ref64)
    allowed = tolerance.atol + tolerance.rtol * ref64.abs()
    too_far = finite & ((out64 - ref64).abs() > allowed)
    mask = nan_mismatch | inf_mismatch | sign_mismatch | too_far
    return mask.reshape(mask.shape[0], -1) if mask.dim() > 0 else mask


def first_wrong_row(
    rows: torch.Tensor, expected: torch.Tensor, tolerance: Tolerance, ignored: torch.Tensor | None = None
) -> int | None:
    """Index of the first timed call whose sampled elements fail, or None when all pass (same dtype);
    `ignored` marks elements the reference leaves unwritten."""
    mask = mismatch_mask(rows.to(expected.device), expected, tolerance)
    if ignored is not None:
        mask = mask & ~ignored.to(mask.device).reshape(mask.shape)
    wrong = mask.reshape(mask.shape[0], -1).any(dim=1).nonzero()
    return int(wrong[0, 0]) if wrong.numel() else None
