"""The reference's own rounding (kforge.worker.rounding_slack and the judge's comparison): a float32
reference that is far from its own float64 answer (a variance as E[x^2] - E[x]^2 over values near 40)
gives an honest, more precise candidate that much room, and no more: a wrong or constant answer still
fails."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from conftest import run_eval
from kforge.worker import rounding_slack
from kforge.worker.correctness import Tolerance

PROBLEM = '''"""Per-row variance as E[x^2] - E[x]^2: in float32, over values near 40, it is off by 5e-4."""

import torch
import torch.nn as nn

ROWS = 64
COLS = 1024


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * x).mean(dim=1) - x.mean(dim=1) ** 2


def get_inputs() -> list[torch.Tensor]:
    return [40.0 + torch.rand(ROWS, COLS)]


def get_init_inputs() -> list[object]:
    return []
'''

CANDIDATE = """import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_variance(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * cols + offsets, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / cols
    centred = tl.where(mask, x - mean, 0.0)
    tl.store(out_ptr + row, VALUE)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, cols = x.shape
        out = torch.empty(rows, device=x.device, dtype=x.dtype)
        _row_variance[(rows,)](x.contiguous(), out, cols, BLOCK=triton.next_power_of_2(cols))
        return out
"""


VARIANCE = "tl.sum(centred * centred, axis=0) / cols"


def write_case(folder: Path, value: str) -> tuple[Path, Path]:
    problem, candidate = folder / "problem.py", folder / f"candidate_{len(list(folder.iterdir()))}.py"
    if not problem.exists():
        problem.write_text(PROBLEM)
    candidate.write_text(CANDIDATE.replace("VALUE", value))
    return problem, candidate


def test_the_room_is_the_reference_distance_from_float64_and_never_shrinks() -> None:
    slack = rounding_slack.measured(
        [torch.tensor([1.0, 2.0, float("nan")]), torch.ones(2, dtype=torch.float16), torch.ones(2)],
        [torch.tensor([1.0, 2.001, float("nan")], dtype=torch.float64), torch.ones(2), torch.ones(2)],
    )
    first = slack[0]
    assert first is not None and abs(first.max_abs - 0.001) < 1e-6 and abs(first.norm - 0.001) < 1e-6
    assert slack[1:] == [None, None]  # float16; an output that did not run wider
    default = Tolerance(atol=1e-4, rtol=1e-4)
    assert rounding_slack.widened(default, first).atol == pytest.approx(4 * 0.001, rel=1e-5)
    assert rounding_slack.widened(default, rounding_slack.RoundingSlack(1e-9, 1e-9)) == default
    # The variation bound grows with the reference's error, up to half its spread and never past it.
    assert rounding_slack.variation_bound(0.01, rounding_slack.RoundingSlack(1.0, 1.0), 100.0) == 0.04
    assert rounding_slack.variation_bound(0.01, rounding_slack.RoundingSlack(1.0, 50.0), 100.0) == 0.5
    # Judged again from what the criterion measured: the ratio against the raised bound.
    checked = {"variation": "checked", "reference_spread": 100.0, "rel_variation_error": 0.03}
    checked.update(variation_bound=0.01, variation_passed=False)
    again = rounding_slack.with_variation_room(checked, rounding_slack.RoundingSlack(1.0, 1.0))
    assert again["variation_bound"] == 0.04 and again["variation_passed"]
    skipped = {"variation": "skipped: exact dtype", "rel_variation_error": None, "variation_passed": True}
    assert rounding_slack.with_variation_room(skipped, rounding_slack.RoundingSlack(1.0, 1.0)) == skipped


def test_a_more_precise_honest_kernel_is_accepted_and_a_wrong_one_is_not(tmp_path: Path) -> None:
    problem, honest = write_case(tmp_path, VARIANCE)
    run = run_eval(problem, honest, "--no-small", "--no-generalisation")
    correctness = run.stage("correctness")
    assert run.verdict["outcome"] == "accepted", run.verdict["summary"]
    output = correctness["details"]["trials"][0]["outputs"][0]
    room = output["rounding_slack"]
    assert room["max_abs"] > 1e-4  # the reference is this far from float64: more than float32's atol
    assert output["atol"] == pytest.approx(4 * room["max_abs"])

    # Off by 0.01 (five times the room), and the true variance of U[0,1) written whatever the input.
    for value in (VARIANCE + " + 0.01", "1.0 / 12.0 + 0.0 * mean"):
        _, wrong = write_case(tmp_path, value)
        run = run_eval(problem, wrong, "--no-small", "--no-generalisation")
        assert run.verdict["outcome"] == "rejected", (value, run.verdict["summary"])
        assert run.verdict["failed_stage"] == "correctness"
        assert "rounding_slack" in run.stage("correctness")["details"]["trials"][0]["outputs"][0]
