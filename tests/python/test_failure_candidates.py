"""Broken candidates get the verdict, stage and exit code their manifest entry names.

The candidates are judged as a batch (`kforge eval --problems --samples`: one warm judge per problem,
candidates forked from the zygote), one batch per set of extra arguments, shared by the pytest-xdist
workers; each candidate's verdict is then checked on its own. A single `kforge eval` of a failing
candidate (fresh worker, its exit code) has tests of its own in test_failure_details.py."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CANDIDATES, STARTER, computed_once, run_kforge

MANIFEST: list[dict[str, Any]] = json.loads((CANDIDATES / "manifest.json").read_text())
EXIT_CODES = {"accepted": 0, "rejected": 1, "error": 2}  # what `kforge eval` exits with, per outcome


def extra_args(case: dict[str, Any]) -> list[str]:
    return list(case.get("extra_args", []))


def judge_batch(extra: list[str], folder: Path) -> dict[str, Any]:
    """Every manifest candidate with these extra arguments, in one batch; their verdicts by file name."""
    samples = folder / "samples.jsonl"
    cases = [case for case in MANIFEST if extra_args(case) == extra]
    samples.write_text(
        "".join(
            json.dumps(
                {
                    "problem": case["problem"].removeprefix("starter/"),
                    "candidate": str(CANDIDATES / case["candidate"]),
                    "case": case["candidate"],
                }
            )
            + "\n"
            for case in cases
        )
    )
    results = folder / "results.jsonl"
    timeout = [] if "--timeout" in extra else ["--timeout", "20"]
    run = run_kforge(
        "eval", "--problems", str(STARTER), "--samples", str(samples), "--device", "cpu", "--small",
        "--trials", "2", "--no-store", "--results", str(results), "-j", "2", *timeout, *extra, timeout=1200,
    )  # fmt: skip
    assert results.exists(), f"the batch wrote no results (exit {run.returncode}):\n{run.stderr}"
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    return {line["case"]: line["verdict"] for line in lines}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every candidate's verdict, computed once per test run whichever worker asks first."""
    groups = sorted({json.dumps(extra_args(case)) for case in MANIFEST})
    found: dict[str, Any] = {}
    for index, group in enumerate(groups):
        compute = functools.partial(judge_batch, json.loads(group))
        found.update(computed_once(tmp_path_factory, f"failure-candidates-{index}", compute))
    return found


def stage_of(verdict: dict[str, Any], name: str) -> dict[str, Any]:
    return next(stage for stage in verdict["stages"] if stage["name"] == name)


@pytest.mark.parametrize("case", MANIFEST, ids=lambda case: case["candidate"])
def test_candidate_verdict(case: dict[str, Any], verdicts: dict[str, Any]) -> None:
    assert case["candidate"] in verdicts, f"the batch gave no verdict for {case['candidate']}"
    verdict = verdicts[case["candidate"]]
    assert EXIT_CODES[verdict["outcome"]] == case["expect_exit"], f"{case['why']}: {verdict['summary']}"
    stage = stage_of(verdict, case["expect_stage"])
    assert stage["status"] == case["expect_status"], f"{case['why']}: {verdict['summary']}"
    if case["expect_status"] == "failed":
        assert verdict["outcome"] == "rejected"
        assert verdict["failed_stage"] == case["expect_stage"]
        assert stage["summary"], "a failed stage must say why"
        later = [s for s in verdict["stages"] if verdict["stages"].index(s) > verdict["stages"].index(stage)]
        assert all(s["status"] == "not_run" for s in later), "the first failing stage stops the pipeline"
    else:
        assert verdict["outcome"] == "accepted"


def test_manifest_covers_the_failure_kinds() -> None:
    stages = {case["expect_stage"] for case in MANIFEST if case["expect_status"] == "failed"}
    assert {"extract", "static", "compile", "correctness"} <= stages


def test_a_batchs_candidates_are_forked_from_the_warm_zygote(verdicts: dict[str, Any]) -> None:
    started = {
        name: stage_of(verdict, "compile")["details"].get("candidate_worker")
        for name, verdict in verdicts.items()
        if "candidate_worker" in stage_of(verdict, "compile").get("details", {})
    }
    assert started, "no candidate reached its worker"
    assert set(started.values()) == {"forked from the warm zygote"}, started
