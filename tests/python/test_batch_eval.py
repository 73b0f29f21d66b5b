"""Batch evaluation, the result store and suite validity on the CPU interpreter."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from conftest import REPO, kforge_binary, run_kforge

STARTER = REPO / "problems" / "starter"
CANDIDATES = REPO / "tests" / "candidates"


def write_samples(path: Path, lines: list[object]) -> None:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))


def read_results(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def batch_args(samples: Path, results: Path, store: Path, *extra: str, jobs: int = 2) -> list[str]:
    return [
        "eval", "--suite", str(STARTER), "--samples", str(samples), "--device", "cpu", "--small",
        "--timeout", "30", "--results", str(results), "--store", str(store), "-j", str(jobs), *extra,
    ]  # fmt: skip


def test_batch_writes_a_result_per_line_and_kernelbench_metrics(tmp_path: Path) -> None:
    solution = (STARTER / "01_scaled_add" / "solution.py").read_text()
    write_samples(
        tmp_path / "samples.jsonl",
        [
            {"problem": "01_scaled_add", "code": solution, "sample_id": 0},
            {"problem": "01_scaled_add", "completion": f"Sure:\n```python\n{solution}\n```", "sample_id": 1},
            {
                "problem": "01_scaled_add",
                "candidate": str(CANDIDATES / "raises_in_forward.py"),
                "sample_id": 2,
            },
            {"problem": "no_such_problem", "code": "x = 1"},
            "{broken json",
        ],
    )
    results, store = tmp_path / "results.jsonl", tmp_path / "store.sqlite"
    run = run_kforge(*batch_args(tmp_path / "samples.jsonl", results, store, "--json"), timeout=600)
    assert run.returncode == 2, "two lines are input errors: " + run.stderr
    assert "2 of 5 lines" in run.stderr and "left out of the metrics" in run.stderr
    lines = read_results(results)
    assert sorted(line["index"] for line in lines) == [0, 1, 2, 3, 4], "every input line gets a result"
    by_index = {line["index"]: line for line in lines}
    assert by_index[0]["outcome"] == "accepted" and by_index[1]["outcome"] == "accepted"
    assert by_index[2]["outcome"] == "rejected" and by_index[2]["failed_stage"] is not None
    assert by_index[3]["outcome"] == "error" and "unknown problem" in by_index[3]["input_error"]
    assert by_index[4]["outcome"] == "error" and "not valid JSON" in by_index[4]["summary"]
    metrics = json.loads(run.stdout)
    assert metrics["samples"] == 3 and metrics["correct_rate"] == 2 / 3, "the input errors are no samples"
    assert metrics["fast_p"]["fast_0"] == 2 / 3 and metrics["fast_p"]["fast_1"] is None, "no GPU: unknown"
    assert "pass@1" in metrics["pass_at_k"]

    again = run_kforge(*batch_args(tmp_path / "samples.jsonl", results, store, "--json"), timeout=120)
    assert again.returncode == 2, again.stderr
    evaluated = [line for line in read_results(results) if line["index"] < 3]
    assert all(line["from_store"] for line in evaluated), "the same evaluation comes from the store"
    assert [line["outcome"] for line in sorted(evaluated, key=lambda x: x["index"])] == [
        "accepted",
        "accepted",
        "rejected",
    ]


def test_single_eval_is_served_from_the_store(tmp_path: Path) -> None:
    problem = STARTER / "03_row_sum" / "problem.py"
    solution = STARTER / "03_row_sum" / "solution.py"
    args = ["eval", "-p", str(problem), "-c", str(solution), "--device", "cpu", "--small", "--json"]
    first = run_kforge(*args, "--store", str(tmp_path / "s.sqlite"))
    assert first.returncode == 0, first.stderr
    assert "stored" not in json.loads(first.stdout)
    start = time.monotonic()
    second = run_kforge(*args, "--store", str(tmp_path / "s.sqlite"))
    assert second.returncode == 0 and json.loads(second.stdout)["stored"]["key"]
    assert time.monotonic() - start < 5, "a stored verdict needs no worker"
    fresh = run_kforge(*args, "--store", str(tmp_path / "s.sqlite"), "--fresh")
    assert "stored" not in json.loads(fresh.stdout)


def test_store_survives_a_kill_mid_run(tmp_path: Path) -> None:
    names = ["01_scaled_add", "02_gelu_tanh", "03_row_sum", "04_softmax", "05_layernorm", "07_rmsnorm"]
    write_samples(
        tmp_path / "samples.jsonl",
        [{"problem": name, "candidate": str(STARTER / name / "solution.py")} for name in names],
    )
    results, store = tmp_path / "results.jsonl", tmp_path / "store.sqlite"
    log = (tmp_path / "stderr.log").open("w")  # a file, not a pipe: a full pipe would stall kforge
    process = subprocess.Popen(
        [str(kforge_binary()), *batch_args(tmp_path / "samples.jsonl", results, store, jobs=1)],
        stdout=subprocess.DEVNULL,
        stderr=log,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and (not results.exists() or len(results.read_text().splitlines()) < 2):
        assert process.poll() is None, f"kforge stopped early: {(tmp_path / 'stderr.log').read_text()}"
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)  # kforge and its workers, mid-evaluation
    process.wait()
    log.close()
    text = results.read_text()
    # A kill can land while a line is being written: only whole lines count as finished results.
    finished = [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines()]
    assert len(finished) >= 2, "the batch was killed after two results"
    assert len(finished) < len(names) or process.returncode == 0, "killed while the batch was still running"
    with sqlite3.connect(store) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = connection.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]
    assert stored >= len(finished), "every finished result is in the store"
    rerun = run_kforge(*batch_args(tmp_path / "samples.jsonl", results, store), timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    lines = read_results(results)
    assert len(lines) == len(names) and all(line["outcome"] == "accepted" for line in lines)
    assert sum(line["from_store"] for line in lines) >= len(finished)


def test_bench_suite_reports_validity(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    for name in ("01_scaled_add", "04_softmax"):
        (suite / name).mkdir(parents=True)
        for file in ("problem.py", "solution.py"):
            (suite / name / file).write_text((STARTER / name / file).read_text())
    (suite / "04_softmax" / "solution.py").write_text((CANDIDATES / "wrong_shape.py").read_text())
    results = str(tmp_path / "r.jsonl")
    run = run_kforge(
        "bench", str(suite), "--device", "cpu", "--no-store", "--results", results, "--json", timeout=600
    )  # fmt: skip
    report = json.loads(run.stdout)
    assert run.returncode == 1, "a suite whose reference solution fails is invalid"
    assert report["valid"] is False and report["accepted"] == 1 and report["problems"] == 2


def judge_beside_scaled_add(tmp_path: Path, name: str, problem: str) -> dict[str, dict]:
    """A suite of `problem` (as NAME) and the starter's 01_scaled_add, each judged on scaled_add's
    solution in one batch on two evaluation slots; the result lines by problem."""
    problems = tmp_path / "problems"
    good = STARTER / "01_scaled_add"
    for folder, text in ((name, problem), (good.name, (good / "problem.py").read_text())):
        (problems / folder).mkdir(parents=True)
        (problems / folder / "problem.py").write_text(text)
    solution = (good / "solution.py").read_text()
    samples = tmp_path / "samples.jsonl"
    write_samples(samples, [{"problem": folder, "code": solution} for folder in (name, good.name)])
    results = tmp_path / "results.jsonl"
    run = run_kforge(
        "eval", "--suite", str(problems), "--samples", str(samples), "--device", "cpu", "--small",
        "--no-store", "--results", str(results), "-j", "2", timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return {line["problem"]: line for line in read_results(results)}


def test_a_problem_that_fails_to_load_gets_an_error_line_and_the_batch_goes_on(tmp_path: Path) -> None:
    lines = judge_beside_scaled_add(tmp_path, "broken", "import a_module_that_does_not_exist\n")
    assert lines["broken"]["outcome"] == "error"
    assert "a_module_that_does_not_exist" in lines["broken"]["summary"]
    assert lines["01_scaled_add"]["outcome"] == "accepted"


def test_a_problem_the_machine_had_no_memory_for_loads_again_and_is_judged(tmp_path: Path) -> None:
    """Out of memory while the judge loads is the machine's state, not the problem's: the job is retried
    with a new judge (run alone on its device) instead of answering the cached load failure again."""
    loads = tmp_path / "squeezed-loads.txt"
    squeezed = (
        (STARTER / "01_scaled_add" / "problem.py")
        .read_text()
        .replace(
            "        super().__init__()\n",
            "        super().__init__()\n"
            f"        loads = __import__('pathlib').Path({str(loads)!r})\n"
            "        first = not loads.exists()\n"
            "        loads.write_text(loads.read_text() + 'x' if loads.exists() else 'x')\n"
            "        if first:\n"
            "            raise torch.OutOfMemoryError('no room for the model yet')\n",
        )
    )
    lines = judge_beside_scaled_add(tmp_path, "squeezed", squeezed)
    assert lines["squeezed"]["outcome"] == "accepted", lines["squeezed"]["summary"]
    assert lines["squeezed"]["attempts"] == 2
    assert len(loads.read_text()) >= 2  # a second judge built the model again (and its generalisation)
    assert lines["01_scaled_add"]["outcome"] == "accepted"
    assert lines["01_scaled_add"]["attempts"] == 1
