"""`kforge eval --kernel ... --emit-kernel-files DIR`: kernel mode's problem and candidate as files, so
many kernel-mode evaluations (sizes, variants) can run as one batch (bench/timing_fidelity does)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO, run_kforge

ADD_RELU = REPO / "problems" / "kernels" / "scaled_add_relu.py"
ADD_RELU_INPUTS = REPO / "problems" / "kernels" / "scaled_add_relu.inputs.json"


def test_the_emitted_pair_is_what_kernel_mode_judges(tmp_path: Path) -> None:
    folder = tmp_path / "add-relu-4096"
    spec = json.loads(ADD_RELU_INPUTS.read_text())
    spec["sizes"] = {name: 4096 for name in spec["sizes"]}
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec))
    run = run_kforge(
        "eval",
        "--kernel",
        str(ADD_RELU),
        "--entry",
        "scaled_add_relu",
        "--inputs",
        str(spec_file),
        "--emit-kernel-files",
        str(folder),
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(folder / "problem.py"), str(folder / "candidate.py")]
    problem, candidate = (folder / "problem.py").read_text(), (folder / "candidate.py").read_text()
    assert "class Model(" in problem and "N = 4096" in problem and "result_gold" not in problem
    assert "class ModelNew(" in candidate
    # The pair runs as a batch sample: the file against itself, accepted (the CPU skips timing).
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        json.dumps({"problem": folder.name, "candidate": f"{folder.name}/candidate.py"}) + "\n"
    )
    results = tmp_path / "results.jsonl"
    batch = run_kforge(
        "eval",
        "--problems",
        str(tmp_path),
        "--samples",
        str(samples),
        "--results",
        str(results),
        "--device",
        "cpu",
        "--no-store",
        "--timeout",
        "60",
    )
    assert batch.returncode == 0, batch.stderr
    line = json.loads(results.read_text().splitlines()[0])
    assert line["outcome"] == "accepted", line["summary"]


def test_emitting_needs_kernel_mode(tmp_path: Path) -> None:
    run = run_kforge("eval", "--emit-kernel-files", str(tmp_path / "x"))
    assert run.returncode == 2
    assert "--emit-kernel-files needs --kernel" in run.stderr
