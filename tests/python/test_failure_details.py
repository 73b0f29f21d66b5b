"""The evidence in a rejection: trimmed tracebacks, crash signals, timeouts, and no leftovers."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import CANDIDATES, STARTER, run_eval

# The tests that count kforge's worker processes and /dev/shm files machine-wide run alone (marker
# serial); the others beside the rest of the suite.

SCALED_ADD = STARTER / "01_scaled_add" / "problem.py"


def worker_processes() -> set[int]:
    result = subprocess.run(
        ["pgrep", "-f", r"-m kforge\.worker\.(judge|candidate)"], capture_output=True, text=True, check=False
    )
    return {int(pid) for pid in result.stdout.split()}


def shared_memory_files() -> set[str]:
    """The per-evaluation transfer folders kforge makes on /dev/shm (removed when the evaluation ends)."""
    return {name for name in os.listdir("/dev/shm") if name.startswith("kforge-")}


def owner_exited(name: str) -> bool:
    """A transfer folder is kforge-<pid of the kforge that made it>-XXXXXX: left behind only once that
    kforge has exited (a running one belongs to another test run on a shared machine)."""
    pid = name.split("-")[1]
    return not (pid.isdigit() and Path(f"/proc/{pid}").exists())


def candidate_for(name: str) -> tuple[Path, Path]:
    import json

    manifest = json.loads((CANDIDATES / "manifest.json").read_text())
    case = next(case for case in manifest if case["candidate"] == name)
    return STARTER / case["problem"].removeprefix("starter/") / "problem.py", CANDIDATES / name


def test_traceback_is_trimmed_to_candidate_frames() -> None:
    problem, candidate = candidate_for("raises_in_forward.py")
    run = run_eval(problem, candidate, "--trials", "1")
    error = run.stage("correctness")["details"]["error"]
    assert error["exception"] == "ValueError"
    assert error["frames"], "the candidate's own frames must be reported"
    assert all(frame["line"] > 0 for frame in error["frames"])
    assert "kforge/worker" not in error["traceback"]
    assert "site-packages" not in error["traceback"]


def test_segfault_names_the_signal() -> None:
    problem, candidate = candidate_for("segfault.py")
    run = run_eval(problem, candidate, "--trials", "1", "--profile", "lenient")  # past the native-code rule
    summary = run.stage("correctness")["summary"]
    assert "SIGSEGV" in summary
    assert run.exit_code == 1


@pytest.mark.serial
def test_hang_is_stopped_by_the_timeout_and_reaped() -> None:
    before = worker_processes()
    problem, candidate = candidate_for("hangs.py")
    run = run_eval(problem, candidate, "--trials", "1", "--timeout", "5")
    assert run.exit_code == 1
    assert "no reply within 5 s" in run.stage("correctness")["summary"]
    assert worker_processes() <= before, "no worker may outlive kforge"


@pytest.mark.serial
def test_no_shared_memory_or_processes_left_behind() -> None:
    before_files, before_workers = shared_memory_files(), worker_processes()
    for name in ("segfault.py", "abort.py", "wrong_values.py"):
        problem, candidate = candidate_for(name)
        run_eval(problem, candidate, "--trials", "1", "--profile", "lenient")
    left_behind = {name for name in shared_memory_files() - before_files if owner_exited(name)}
    assert not left_behind
    assert worker_processes() <= before_workers


@pytest.mark.serial
def test_the_candidate_worker_starts_while_the_judge_loads_and_goes_when_the_problem_fails(
    tmp_path: Path,
) -> None:
    problem, candidate = candidate_for("wrong_values.py")
    run = run_eval(problem, candidate, "--trials", "1", "--profile", "lenient")
    assert run.stage("compile")["details"]["candidate_worker"] == "started while the judge loaded the problem"
    before = worker_processes()
    broken = tmp_path / "problem.py"
    broken.write_text(problem.read_text() + "\nraise RuntimeError('the problem cannot be imported')\n")
    failed = run_eval(broken, candidate, "--trials", "1", "--profile", "lenient")
    assert failed.exit_code == 2 and "cannot be imported" in failed.verdict["error"]["message"]
    assert worker_processes() <= before, "the worker started beside the judge must not outlive kforge"


def test_input_mutation_is_rejected() -> None:
    problem, candidate = candidate_for("mutates_input.py")
    run = run_eval(problem, candidate, "--trials", "1")
    assert run.exit_code == 1
    assert "modified" in run.stage("correctness")["summary"]


def test_error_statistics_are_reported() -> None:
    problem, candidate = candidate_for("wrong_values.py")
    run = run_eval(problem, candidate, "--trials", "1", "--profile", "lenient")  # past the precision rule
    output = run.stage("correctness")["details"]["trials"][0]["outputs"][0]
    for key in ("max_abs_error", "max_rel_error", "rel_l2_error", "mismatched_elements"):
        assert key in output
    assert output["mismatched_elements"] > 0 and not output["passed"]


def test_llm_response_lines_map_back() -> None:
    problem, candidate = candidate_for("llm_response_ok.md")
    run = run_eval(problem, candidate, "--trials", "1")
    assert run.exit_code == 0
    assert run.verdict["candidate"]["extracted_from_markdown"] is True
    assert run.verdict["candidate"]["code_line_offset"] > 1
