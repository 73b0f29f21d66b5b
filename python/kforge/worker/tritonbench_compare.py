"""Execution accuracy of one TritonBench item: the values a model's test run produced against the gold's.

Both files come from kforge.worker.tritonbench_run and are read with torch.load(weights_only=True), so
a model's file cannot run code here. The structures must be the same (dict keys, list lengths, scalar
values); tensors must have the gold's shape and dtype and agree within kforge's dtype tolerances
(kforge.worker.correctness), NaN where the gold has NaN. The first difference is the reason.

  python -m kforge.worker.tritonbench_compare --gold GOLD.pt --model MODEL.pt --out RESULT.json
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


def first_difference(model: Any, gold: Any, where: str) -> str | None:
    """Where and how `model` differs from `gold`, or None when they agree."""
    if isinstance(gold, torch.Tensor):
        if not isinstance(model, torch.Tensor):
            return f"{where}: expected a tensor, got {type(model).__name__}"
        if model.shape != gold.shape or model.dtype != gold.dtype:
            return f"{where}: expected {gold.dtype} {list(gold.shape)}, got {model.dtype} {list(model.shape)}"
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
            found = first_difference(model[key], gold[key], f"{where}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(gold, list):
        if not isinstance(model, list) or len(model) != len(gold):
            return f"{where}: expected a list of {len(gold)}"
        for index, (item, expected) in enumerate(zip(model, gold, strict=True)):
            found = first_difference(item, expected, f"{where}[{index}]")
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


def compare(gold_path: Path, model_path: Path) -> dict[str, Any]:
    gold = torch.load(gold_path, weights_only=True)
    try:
        model = torch.load(model_path, weights_only=True)
    except Exception as failure:  # noqa: BLE001 - a model's values file may be anything
        return {"match": False, "reason": f"the model's values cannot be read: {type(failure).__name__}"}
    reason = first_difference(model, gold, "values")
    return {"match": reason is None, "reason": reason}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kforge.worker.tritonbench_compare", description=__doc__)
    parser.add_argument("--gold", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    arguments = parser.parse_args(argv)
    return write_answer(arguments.out, lambda: compare(Path(arguments.gold), Path(arguments.model)))


if __name__ == "__main__":
    sys.exit(main())
