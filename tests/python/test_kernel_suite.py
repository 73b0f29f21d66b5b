"""problems/kernels: every file of the kernel-mode suite is accepted against itself on the interpreter at
its small sizes (its spec and wrapper work, its test block is left out), and has knobs for the tuner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, run_kforge

KERNELS = REPO / "problems" / "kernels"
FILES = sorted(KERNELS.glob("*.py"))


def test_the_suite_has_at_least_twenty_kernels_each_with_a_spec() -> None:
    assert len(FILES) >= 20
    for kernel in FILES:
        assert kernel.with_suffix(".inputs.json").exists(), kernel


@pytest.mark.parametrize("kernel", FILES, ids=[path.stem for path in FILES])
def test_each_kernel_is_accepted_against_itself(kernel: Path) -> None:
    run = run_kforge(
        *("eval", "--kernel", str(kernel), "--entry", kernel.stem),
        *("--inputs", str(kernel.with_suffix(".inputs.json")), "--device", "cpu", "--small", "--no-store"),
        *("--json", "--timeout", "120"),
    )
    verdict = json.loads(run.stdout)
    assert verdict["outcome"] == "accepted", verdict["summary"]
    knobs = json.loads(run_kforge("knobs", "--candidate", str(kernel), "--json").stdout)
    assert any(knob["kind"] == "block_size" for knob in knobs["knobs"]), kernel
