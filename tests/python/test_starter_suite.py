"""Every starter problem's reference Triton solution is accepted on the CPU interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_eval, starter_problems


@pytest.mark.parametrize("problem_dir", starter_problems(), ids=lambda path: path.name)
def test_solution_is_accepted(problem_dir: Path) -> None:
    run = run_eval(problem_dir / "problem.py", problem_dir / "solution.py", "--trials", "3")
    assert run.exit_code == 0, run.verdict["summary"]
    assert run.verdict["schema"] == "kforge.verdict/2"
    assert run.verdict["outcome"] == "accepted"
    assert [stage["status"] for stage in run.verdict["stages"]] == [
        "passed",
        "passed",
        "passed",
        "passed",
        "passed",
        "skipped",
    ]
    assert [stage["name"] for stage in run.verdict["stages"]][-2:] == ["runtime", "performance"]
    assert run.stage("performance")["summary"].startswith("skipped: no GPU")
    assert run.verdict["speedup"] is None
    trials = run.stage("correctness")["details"]["trials"]
    assert len(trials) == 3
    assert len({trial["seed"] for trial in trials}) == 3, "every trial must use fresh inputs"
    for trial in trials:
        for output in trial["outputs"]:
            assert output["passed"] and output["mismatched_elements"] == 0
            assert output["max_abs_error"] <= output["atol"] + output["rtol"] * 1e6
    assert run.stage("static")["details"]["launched_kernels"], "the solution's kernels must be found"
    runtime = run.stage("runtime")["details"]
    assert runtime["own_launches_per_call"] >= 1
    assert runtime["input_refresh"] == "passed"
    assert runtime["ghost_replay"].startswith("passed")
    assert not runtime["trace"]["aten_compute_ops"] and not runtime["trace"]["failed_launches"]


def test_starter_suite_has_enough_problems() -> None:
    assert len(starter_problems()) >= 8
