"""`kforge optimize` on a machine without a GPU: every way it cannot tune is a clear error with its exit
code. The tuning itself needs GPU timings: scripts/gpu-check optimize (docs/optimize.md); the search
and the report are tested in C++ (ctest -R "KnobTuner|OptimizeReport|TunableKnobs")."""

from __future__ import annotations

from pathlib import Path

from conftest import CANDIDATES, REPO, STARTER, run_kforge

ADD_MUL = REPO / "problems" / "baseline" / "02_fused_add_mul"


def optimize(*args: str) -> tuple[int, str]:
    run = run_kforge("optimize", "--device", "cpu", "--small", "--no-store", *args)
    return run.returncode, run.stdout + run.stderr


def test_an_accepted_start_on_the_cpu_is_not_tuned_and_says_why(tmp_path: Path) -> None:
    code, output = optimize(
        "-p", str(ADD_MUL / "problem.py"), "--from", str(ADD_MUL / "solution.py"), "--out", str(tmp_path)
    )
    assert code == 2
    assert "tuning needs a GPU" in output
    assert "the start is accepted" in output


def test_a_rejected_start_is_not_tuned() -> None:
    problem = STARTER / "04_softmax" / "problem.py"
    code, output = optimize("-p", str(problem), "--from", str(CANDIDATES / "nan_output.py"))
    assert code == 1
    assert "the starting candidate is not accepted" in output


def test_usage_errors(tmp_path: Path) -> None:
    code, output = optimize("-p", str(ADD_MUL / "problem.py"), "--from", str(tmp_path / "missing.py"))
    assert code == 2
    assert "cannot read the starting candidate" in output
    code, output = optimize(
        "-p", str(ADD_MUL / "problem.py"), "--from", str(ADD_MUL / "solution.py"), "--proposers", "llm"
    )
    assert code == 2
    assert "only --proposers tune" in output
    assert run_kforge("optimize", "-p", str(ADD_MUL / "problem.py")).returncode == 2  # no --from
