"""Execution accuracy of one TritonBench item: the values a model's test run produced against the gold's.

Both files come from kforge.worker.tritonbench_run and are read with torch.load(weights_only=True), so
a model's file cannot run code here. The structures must be the same (dict keys, list lengths, scalar
values); tensors must have the gold's shape and dtype and agree within kforge's dtype tolerances
(kforge.worker.correctness), NaN where the gold has NaN. The first difference is the reason.

With --gold-second (the gold's values from a run with a second poison, tritonbench_run --second-poison),
the elements whose value followed the poison are the ones the gold leaves undefined (a `torch.empty`
output it writes in part): they are not compared, and the answer counts them (`undefined_elements`).
Where the two gold runs differ in structure the second run says nothing and every element is compared.

  python -m kforge.worker.tritonbench_compare --gold GOLD.pt --model MODEL.pt --out RESULT.json
      [--gold-second GOLD2.pt]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import torch

from kforge.worker.answers import write_answer
from kforge.worker.correctness import compare_tensor, default_tolerance
from kforge.worker.uninitialized import may_hold_poison, undefined_elements


class UndefinedCount:
    """How many elements the gold leaves undefined were left out of the comparison."""

    def __init__(self) -> None:
        self.count = 0


def _undefined_mask(gold: torch.Tensor, second: Any) -> torch.Tensor | None:
    """The elements of `gold` whose value followed the poison (`second`: the same value under the second
    poison), or None when there are none to find."""
    if not isinstance(second, torch.Tensor) or second.shape != gold.shape or second.dtype != gold.dtype:
        return None
    if gold.dtype == torch.bool or not may_hold_poison(gold):
        return None
    return undefined_elements(gold, second, default_tolerance(gold.dtype))


def _child(second: Any, key: Any) -> Any:
    """The second run's value under `key`, or None where its structure differs."""
    try:
        return second[key]
    except (KeyError, IndexError, TypeError):
        return None


def first_difference(
    model: Any, gold: Any, where: str, second: Any = None, undefined: UndefinedCount | None = None
) -> str | None:
    """Where and how `model` differs from `gold`, or None when they agree. `second` is the gold's value
    under the second poison: elements that followed it are left out (and counted in `undefined`)."""
    if isinstance(gold, torch.Tensor):
        if not isinstance(model, torch.Tensor):
            return f"{where}: expected a tensor, got {type(model).__name__}"
        if model.shape != gold.shape or model.dtype != gold.dtype:
            return f"{where}: expected {gold.dtype} {list(gold.shape)}, got {model.dtype} {list(model.shape)}"
        left_out = _undefined_mask(gold, second)
        if left_out is not None and bool(left_out.any().item()):
            if undefined is not None:
                undefined.count += int(left_out.sum().item())
            model, gold = model[~left_out], gold[~left_out]
        if gold.dtype.is_floating_point or gold.is_complex():
            report = compare_tensor(model, gold, default_tolerance(gold.dtype))
            if not report["passed"]:
                return (
                    f"{where}: {report['mismatched_elements']} of {report['total_elements']} elements differ "
                    f"(max abs error {report['max_abs_error']:.3g})"
                )
            return None
        differing = int((model != gold).sum().item())
        return f"{where}: {differing} of {gold.numel()} elements differ" if differing else None
    if isinstance(gold, dict):
        if not isinstance(model, dict) or sorted(model) != sorted(gold):
            keys = sorted(model) if isinstance(model, dict) else type(model).__name__
            return f"{where}: expected keys {sorted(gold)}, got {keys}"
        for key in gold:
            found = first_difference(
                model[key], gold[key], f"{where}[{key!r}]", _child(second, key), undefined
            )
            if found:
                return found
        return None
    if isinstance(gold, list):
        if not isinstance(model, list) or len(model) != len(gold):
            return f"{where}: expected a list of {len(gold)}"
        for index, (item, expected) in enumerate(zip(model, gold, strict=True)):
            found = first_difference(item, expected, f"{where}[{index}]", _child(second, index), undefined)
            if found:
                return found
        return None
    if isinstance(gold, float) and isinstance(model, (int, float)):
        close = math.isclose(model, gold, rel_tol=1e-4, abs_tol=1e-6) or (
            math.isnan(gold) and math.isnan(model)
        )
        return None if close else f"{where}: expected {gold!r}, got {model!r}"
    return (
        None if model == gold and type(model) is type(gold) else f"{where}: expected {gold!r}, got {model!r}"
    )


def _second_values(path: Path | None) -> Any:
    """The gold's values under the second poison, or None (every element compared) when unreadable."""
    if path is None:
        return None
    try:
        return torch.load(path, weights_only=True)
    except Exception:  # noqa: BLE001 - the second run is an aid: without it the comparison is the strict one
        return None


def compare(gold_path: Path, model_path: Path, second_path: Path | None = None) -> dict[str, Any]:
    gold = torch.load(gold_path, weights_only=True)
    second = _second_values(second_path)
    undefined = UndefinedCount()
    try:
        model = torch.load(model_path, weights_only=True)
    except Exception as failure:  # noqa: BLE001 - a model's values file may be anything
        return {"match": False, "reason": f"the model's values cannot be read: {type(failure).__name__}"}
    reason = first_difference(model, gold, "values", second, undefined)
    return {"match": reason is None, "reason": reason, "undefined_elements": undefined.count}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kforge.worker.tritonbench_compare", description=__doc__)
    parser.add_argument("--gold", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--gold-second", default=None, help="the gold's values under the second poison")
    arguments = parser.parse_args(argv)
    second = Path(arguments.gold_second) if arguments.gold_second else None
    return write_answer(arguments.out, lambda: compare(Path(arguments.gold), Path(arguments.model), second))


if __name__ == "__main__":
    sys.exit(main())
