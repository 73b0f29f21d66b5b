"""problems/kernels: every file of the kernel-mode suite is accepted against itself on the interpreter at
its small sizes (its spec and wrapper work, its test block is left out), and has knobs for the tuner.

Each file's kernel-mode pair (`kforge eval --kernel ... --emit-kernel-files`: the generated reference
problem and the file as its candidate, the wrapper's written arguments probed as kernel mode does) is
judged in one batch (warm judges, candidates forked from the zygote; three trials, as the starter
suite's batch), shared by the pytest-xdist workers; each file's verdict is then checked on its own.
That the emitted pair is what a single `kforge eval --kernel` judges is test_emit_kernel_files.py's;
single kernel-mode runs are test_kernel_mode.py's."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, computed_once, run_kforge

KERNELS = REPO / "problems" / "kernels"
FILES = sorted(KERNELS.glob("*.py"))


def emit(kernel: Path, folder: Path) -> str:
    """Kernel mode's problem and candidate for `kernel` in folder/<stem>; "" when written, else why not."""
    run = run_kforge(
        *("eval", "--kernel", str(kernel), "--entry", kernel.stem),
        *("--inputs", str(kernel.with_suffix(".inputs.json")), "--device", "cpu", "--small", "--no-store"),
        *("--timeout", "120", "--emit-kernel-files", str(folder / kernel.stem)),
    )
    return "" if run.returncode == 0 else f"exit {run.returncode}: {run.stdout}{run.stderr}"


def judge_suite(folder: Path) -> dict[str, Any]:
    """Every kernel's emitted pair in one batch: {stem: {"emit_error": ..., "verdict": ...}}."""
    problems = folder / "problems"
    problems.mkdir()
    with ThreadPoolExecutor(max_workers=2) as pool:  # one Python start (the probe) each: both cores
        outcomes = pool.map(lambda kernel: emit(kernel, problems), FILES)
        errors = dict(zip([kernel.stem for kernel in FILES], outcomes, strict=True))
    samples = folder / "samples.jsonl"
    samples.write_text(
        "".join(
            json.dumps({"problem": stem, "candidate": str(problems / stem / "candidate.py"), "kernel": stem})
            + "\n"
            for stem, error in errors.items()
            if not error
        )
    )
    results = folder / "results.jsonl"
    run = run_kforge(
        "eval", "--problems", str(problems), "--samples", str(samples), "--device", "cpu", "--small",
        "--no-store", "--trials", "3", "--timeout", "120", "--results", str(results), "-j", "2", timeout=1200,
    )  # fmt: skip
    assert results.exists(), f"the batch wrote no results (exit {run.returncode}):\n{run.stderr}"
    verdicts = {line["kernel"]: line["verdict"] for line in map(json.loads, results.read_text().splitlines())}
    return {stem: {"emit_error": error, "verdict": verdicts.get(stem)} for stem, error in errors.items()}


@pytest.fixture(scope="module")
def suite_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return computed_once(tmp_path_factory, "kernel-suite", judge_suite)


def test_the_suite_has_at_least_twenty_kernels_each_with_a_spec() -> None:
    assert len(FILES) >= 20
    for kernel in FILES:
        assert kernel.with_suffix(".inputs.json").exists(), kernel


@pytest.mark.parametrize("kernel", FILES, ids=[path.stem for path in FILES])
def test_each_kernel_is_accepted_against_itself(kernel: Path, suite_verdicts: dict[str, Any]) -> None:
    found = suite_verdicts[kernel.stem]
    assert not found["emit_error"], found["emit_error"]
    verdict = found["verdict"]
    assert verdict is not None, f"the batch gave no verdict for {kernel.stem}"
    assert verdict["outcome"] == "accepted", verdict["summary"]
    knobs = json.loads(run_kforge("knobs", "--candidate", str(kernel), "--json").stdout)
    assert any(knob["kind"] == "block_size" for knob in knobs["knobs"]), kernel
