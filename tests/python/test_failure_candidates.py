"""Broken candidates get the verdict, stage and exit code their manifest entry names."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import CANDIDATES, STARTER, run_eval

MANIFEST: list[dict[str, Any]] = json.loads((CANDIDATES / "manifest.json").read_text())


@pytest.mark.parametrize("case", MANIFEST, ids=lambda case: case["candidate"])
def test_candidate_verdict(case: dict[str, Any]) -> None:
    problem = STARTER / case["problem"].removeprefix("starter/") / "problem.py"
    run = run_eval(problem, CANDIDATES / case["candidate"], "--trials", "2", *case.get("extra_args", []))
    verdict = run.verdict
    assert run.exit_code == case["expect_exit"], f"{case['why']}: {verdict['summary']}"
    stage = run.stage(case["expect_stage"])
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
