"""`kforge data sft --teacher llm`: a teacher's samples for each problem of a suite, each verified by
the full verdict pipeline (the CPU's Triton interpreter here), only the accepted ones kept, every other
one logged with its stage and reason. The teacher is a scripted OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
from conftest import STARTER, run_kforge
from scripted_chat_endpoint import scripted_endpoint
from scripted_suite_teacher import SuiteTeacher

PROBLEMS = ["01_scaled_add", "03_row_sum", "22_hardswish"]
DOWN = "22_hardswish"  # its requests always fail: every sample is a teacher error


def small_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    for name in PROBLEMS:
        shutil.copytree(STARTER / name, suite / name)
    return suite


def teacher() -> SuiteTeacher:
    return SuiteTeacher(STARTER, down=frozenset({DOWN}))


def sft(tmp_path: Path, endpoint_url: str, *extra: str) -> tuple[int, str]:
    result = run_kforge(
        "data", "sft", "--suite", str(small_suite(tmp_path)), "--teacher", "llm",
        "--samples-per-problem", "4", "--llm-url", endpoint_url, "--model", "scripted",
        "--llm-timeout", "20", "--device", "cpu", "--small", "--store", str(tmp_path / "store.sqlite"),
        *extra,
        timeout=900,
    )  # fmt: skip
    return result.returncode, result.stdout + result.stderr


def test_only_verified_samples_are_kept_and_every_other_is_logged_with_its_stage(tmp_path: Path) -> None:
    out = tmp_path / "sft.jsonl"
    with scripted_endpoint(teacher()) as endpoint:
        code, output = sft(tmp_path, endpoint.url, "--output", str(out))
    assert code == 0, output
    assert "2 of 12 samples accepted" in output, output

    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(row["problem"] for row in rows) == ["01_scaled_add", "03_row_sum"]
    prompts = {
        json.loads(line)["problem"]: json.loads(line) for line in _prompts(tmp_path).read_text().splitlines()
    }
    for row in rows:
        solution = (STARTER / row["problem"] / "solution.py").read_text()
        assert row["prompt"] == prompts[row["problem"]]["prompt"], "the prompt kforge data prompts writes"
        assert row["problem_id"] == prompts[row["problem"]]["problem_id"]
        [turn] = row["completion"]
        assert turn["role"] == "assistant"
        assert turn["content"] == row["answer"]
        assert row["answer"].endswith(f"```python\n{solution}```\n"), "exactly the verified code"
        assert row["instruction"] == row["prompt"][-1]["content"]
        assert row["teacher"] == "llm"
        assert row["verdict"]["outcome"] == "accepted" and row["verdict"]["device"] == "cpu"
        assert row["verdict"]["speedup"] is None, "the interpreter gives no timing"

    rejected = [json.loads(line) for line in (tmp_path / "sft.rejected.jsonl").read_text().splitlines()]
    stages = Counter((entry["problem"], entry["stage"]) for entry in rejected)
    for name in ("01_scaled_add", "03_row_sum"):
        assert stages[(name, "duplicate")] == 1
        assert stages[(name, "static")] == 1
        assert stages[(name, "extract")] == 1
    assert stages[(DOWN, "teacher")] == 4
    static = [entry for entry in rejected if entry["stage"] == "static"]
    assert all(entry["check"] == "threads-and-processes" for entry in static), static
    assert all("subprocess" in entry["text"] for entry in static)
    assert all("401" in entry["reason"] for entry in rejected if entry["stage"] == "teacher")

    summary = json.loads((tmp_path / "sft.summary.json").read_text())
    assert summary["teacher"] == "llm" and summary["model"] == "scripted"
    assert summary["samples"] == 12 and summary["accepted"] == 2
    assert summary["problems"] == 3 and summary["problems_with_accepted"] == 2
    assert summary["rejected_by_stage"] == {"duplicate": 2, "static": 2, "extract": 2, "teacher": 4}
    assert summary["speedup_of_kept"]["count"] == 0


def test_parquet_output_loads_with_the_same_rows(tmp_path: Path) -> None:
    out = tmp_path / "sft.parquet"
    with scripted_endpoint(teacher()) as endpoint:
        code, output = sft(tmp_path, endpoint.url, "--output", str(out))
    assert code == 0, output
    table = pq.read_table(out).to_pylist()
    assert sorted(row["problem"] for row in table) == ["01_scaled_add", "03_row_sum"]
    assert all(row["completion"][0]["role"] == "assistant" for row in table)
    assert (tmp_path / "sft.rejected.jsonl").is_file() and (tmp_path / "sft.summary.json").is_file()


def test_rows_that_cannot_be_written_as_parquet_are_kept_as_jsonl(tmp_path: Path) -> None:
    out = tmp_path / "sft.parquet"
    out.mkdir()  # pyarrow cannot write a file where a folder is
    with scripted_endpoint(teacher()) as endpoint:
        code, output = sft(tmp_path, endpoint.url, "--output", str(out))
    assert code == 2, output
    kept = tmp_path / "sft.jsonl.kept"
    assert f"the 2 kept rows are in {kept}" in output, output
    rows = [json.loads(line) for line in kept.read_text().splitlines()]
    assert sorted(row["problem"] for row in rows) == ["01_scaled_add", "03_row_sum"]
    assert (tmp_path / "sft.rejected.jsonl").is_file() and (tmp_path / "sft.summary.json").is_file()


def test_usage_errors_say_what_is_missing(tmp_path: Path) -> None:
    result = run_kforge("data", "sft", "--suite", str(STARTER), "--output", str(tmp_path / "x.jsonl"))
    assert result.returncode == 2
    assert "--llm-url" in result.stderr and "--model" in result.stderr
    result = run_kforge("data", "sft", "--llm-url", "http://127.0.0.1:9/v1", "--model", "m")
    assert result.returncode == 2 and "--suite" in result.stderr
    result = run_kforge("data", "sft", "--suite", str(STARTER), "--teacher", "gpt")
    assert result.returncode == 2 and "--teacher" in result.stderr
    assert not (tmp_path / "x.jsonl").exists()


def _prompts(tmp_path: Path) -> Path:
    out = tmp_path / "prompts.jsonl"
    result = run_kforge("data", "prompts", "--suite", str(tmp_path / "suite"), "--output", str(out))
    assert result.returncode == 0, result.stderr
    return out
