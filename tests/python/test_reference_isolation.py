"""The candidate process never has the judge's reference outputs in its memory (CPU run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import kforge_binary
from isolation_probe import run_probe

pytestmark = pytest.mark.serial  # runs alone: it scans the candidate's memory under a timeout


def test_candidate_memory_never_holds_reference_outputs(tmp_path: Path) -> None:
    result = run_probe(kforge_binary(), "cpu", tmp_path)
    assert result["host"]["input"] > 0, "positive control: the shared input must be visible to the scan"
    assert result["host"]["reference"] == 0, "the reference output leaked into the candidate process"
    assert result["outcome"] == "rejected" and result["failed_stage"] == "correctness"
