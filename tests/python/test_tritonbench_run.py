"""kforge.worker.tritonbench_run, the program TritonBench's call accuracy runs, called in-process: the
file runs as TritonBench's scripts run it (a plain `python file.py`), not under the worker's own
compiler flags."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from kforge.worker.tritonbench_run import run

SEPARATOR = "#" * 146
TEST_BLOCK = (
    f"\n{SEPARATOR}\nimport torch\n\n\ndef test_twice():\n    return twice(torch.ones(3))\n\n\n"
    "result_gold = test_twice()\n"
)


def test_an_annotation_naming_what_the_code_never_imported_fails_the_call(tmp_path: Path) -> None:
    # The worker's own `from __future__ import annotations` must not reach the file: `python file.py`
    # evaluates this annotation and fails, so TritonBench counts no call.
    path = tmp_path / "twice.py"
    path.write_text("def twice(x: torch.Tensor) -> torch.Tensor:\n    return x * 2\n" + TEST_BLOCK)
    answer = run(path, tmp_path / "values.pt", False, 0)
    assert not answer["ok"] and answer["stage"] == "run"
    assert "NameError: name 'torch' is not defined" in answer["error"]


def test_the_same_file_importing_what_it_names_runs(tmp_path: Path) -> None:
    path = tmp_path / "twice.py"
    path.write_text(
        "import torch\n\n\ndef twice(x: torch.Tensor) -> torch.Tensor:\n    return x * 2\n" + TEST_BLOCK
    )
    answer = run(path, tmp_path / "values.pt", False, 0)
    assert answer["ok"], answer
    assert answer["values"] == ["result_gold"]


def test_what_the_file_leaves_unwritten_is_nan_on_every_run(tmp_path: Path) -> None:
    # A gold that allocates with torch.empty and writes part of it: the rest must not be whatever memory
    # held (which differs between the gold's run and an answer's), but the same poison on both.
    path = tmp_path / "half.py"
    path.write_text(
        "import torch\n\n\ndef half(x):\n    out = torch.empty(4)\n    out[:2] = x[:2]\n    return out\n"
        + TEST_BLOCK.replace("twice(torch.ones(3))", "half(torch.ones(4))")
    )
    answer = run(path, tmp_path / "values.pt", False, 0)
    assert answer["ok"], answer
    values = torch.load(tmp_path / "values.pt", weights_only=True)["result_gold"]
    assert values[:2].tolist() == [1.0, 1.0]
    assert torch.isnan(values[2:]).all()
