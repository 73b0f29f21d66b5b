"""Every starter problem's reference Triton solution is accepted on the CPU interpreter.

The suite runs once, as `kforge bench` does it (warm judges, forked candidates), and each problem's
verdict is then checked on its own; single `kforge eval` runs have tests of their own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import STARTER, computed_once, run_kforge, starter_problems


@pytest.fixture(scope="module")
def suite_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return computed_once(tmp_path_factory, "starter-suite", run_suite)


def run_suite(folder: Path) -> dict[str, Any]:
    results = folder / "results.jsonl"
    run = run_kforge(
        "bench", str(STARTER), "--device", "cpu", "--no-store", "--trials", "3", "--timeout", "120",
        "-j", "2", "--results", str(results), "--json", timeout=1200,
    )  # fmt: skip
    assert results.exists(), f"kforge bench wrote no results (exit {run.returncode}):\n{run.stderr}"
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    return {line["problem"]: line["verdict"] for line in lines}


def stage(verdict: dict[str, Any], name: str) -> dict[str, Any]:
    return next(stage for stage in verdict["stages"] if stage["name"] == name)


@pytest.mark.parametrize("problem_dir", starter_problems(), ids=lambda path: path.name)
def test_solution_is_accepted(problem_dir: Path, suite_verdicts: dict[str, Any]) -> None:
    assert problem_dir.name in suite_verdicts, f"the batch gave no result for {problem_dir.name}"
    verdict = suite_verdicts[problem_dir.name]
    assert verdict["schema"] == "kforge.verdict/2"
    assert verdict["outcome"] == "accepted", verdict["summary"]
    assert [stage["status"] for stage in verdict["stages"]] == [
        "passed",
        "passed",
        "passed",
        "passed",
        "passed",
        "skipped",
    ]
    assert [stage["name"] for stage in verdict["stages"]][-2:] == ["runtime", "performance"]
    assert stage(verdict, "performance")["summary"].startswith("skipped: no GPU")
    assert verdict["speedup"] is None
    trials = stage(verdict, "correctness")["details"]["trials"]
    assert len(trials) == 3
    assert len({trial["seed"] for trial in trials}) == 3, "every trial must use fresh inputs"
    for trial in trials:
        for output in trial["outputs"]:
            assert output["passed"] and output["mismatched_elements"] == 0
            assert output["max_abs_error"] <= output["atol"] + output["rtol"] * 1e6
    assert stage(verdict, "static")["details"]["launched_kernels"], "the solution's kernels must be found"
    runtime = stage(verdict, "runtime")["details"]
    assert runtime["own_launches_per_call"] >= 1
    assert runtime["input_refresh"] == "passed"
    assert runtime["ghost_replay"].startswith("passed")
    assert not runtime["trace"]["aten_compute_ops"] and not runtime["trace"]["failed_launches"]


def test_starter_suite_has_enough_problems() -> None:
    assert len(starter_problems()) >= 8
