"""kforge.worker.tritonbench_run, the program TritonBench's call accuracy runs, called in-process: the
file runs as TritonBench's scripts run it (a plain `python file.py`), not under the worker's own
compiler flags."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from kforge.worker.tritonbench_compare import compare
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


HALF = "import torch\n\n\ndef half(x):\n    out = torch.empty(4)\n    out[:2] = x[:2]\n    return out\n"


def half_file(tmp_path: Path, code: str = HALF, name: str = "half.py") -> Path:
    path = tmp_path / name
    path.write_text(code + TEST_BLOCK.replace("twice(torch.ones(3))", "half(torch.ones(4))"))
    return path


def test_a_gold_holding_the_poison_says_so_and_its_second_run_holds_another_value(tmp_path: Path) -> None:
    path = half_file(tmp_path)
    first = run(path, tmp_path / "first.pt", False, 0)
    assert first["ok"] and first["may_hold_poison"], first
    second = run(path, tmp_path / "second.pt", False, 0, second_poison=True)
    assert second["ok"], second
    values = torch.load(tmp_path / "second.pt", weights_only=True)["result_gold"]
    assert values.tolist() == [1.0, 1.0, 3.25, 3.25]  # the unwritten half follows the second poison
    # Every element written: nothing can be undefined, and kforge runs the gold once.
    whole = half_file(tmp_path, HALF.replace("out[:2] = x[:2]", "out[:] = x"), "whole.py")
    assert not run(whole, tmp_path / "whole.pt", False, 0)["may_hold_poison"]


def test_the_elements_a_gold_leaves_undefined_are_not_compared_and_are_counted(tmp_path: Path) -> None:
    gold = half_file(tmp_path)
    run(gold, tmp_path / "gold.pt", False, 0)
    run(gold, tmp_path / "gold2.pt", False, 0, second_poison=True)
    # An answer that writes zeros where the gold leaves memory unwritten: equal where the gold is defined.
    zeros = half_file(tmp_path, HALF.replace("torch.empty(4)", "torch.zeros(4)"), "zeros.py")
    run(zeros, tmp_path / "zeros.pt", False, 0)
    without_second = compare(tmp_path / "gold.pt", tmp_path / "zeros.pt")
    assert not without_second["match"] and "2 of 4 elements differ" in without_second["reason"]
    with_second = compare(tmp_path / "gold.pt", tmp_path / "zeros.pt", tmp_path / "gold2.pt")
    assert with_second == {"match": True, "reason": None, "undefined_elements": 2}
    # Wrong where the gold is defined: still a difference, named on the elements compared.
    wrong = half_file(tmp_path, HALF.replace("out[:2] = x[:2]", "out[:2] = x[:2] * 3"), "wrong.py")
    run(wrong, tmp_path / "wrong.pt", False, 0)
    differs = compare(tmp_path / "gold.pt", tmp_path / "wrong.pt", tmp_path / "gold2.pt")
    assert not differs["match"] and "2 of 2 elements differ" in differs["reason"], differs


def test_a_nan_the_gold_computes_is_defined_and_must_be_matched(tmp_path: Path) -> None:
    # log(-1) is NaN in both gold runs: the gold computes it, so an answer writing 0 there is wrong.
    code = "import torch\n\n\ndef half(x):\n    return torch.log(x - 2)\n"
    gold = half_file(tmp_path, code)
    assert run(gold, tmp_path / "gold.pt", False, 0)["may_hold_poison"]
    run(gold, tmp_path / "gold2.pt", False, 0, second_poison=True)
    zeros = half_file(tmp_path, code.replace("torch.log(x - 2)", "torch.zeros(4)"), "zeros.py")
    run(zeros, tmp_path / "zeros.pt", False, 0)
    result = compare(tmp_path / "gold.pt", tmp_path / "zeros.pt", tmp_path / "gold2.pt")
    assert not result["match"] and result["undefined_elements"] == 0, result


def test_an_unreadable_second_run_leaves_every_element_compared(tmp_path: Path) -> None:
    gold = half_file(tmp_path)
    run(gold, tmp_path / "gold.pt", False, 0)
    (tmp_path / "gold2.pt").write_bytes(b"not a torch file")
    zeros = half_file(tmp_path, HALF.replace("torch.empty(4)", "torch.zeros(4)"), "zeros.py")
    run(zeros, tmp_path / "zeros.pt", False, 0)
    result = compare(tmp_path / "gold.pt", tmp_path / "zeros.pt", tmp_path / "gold2.pt")
    assert not result["match"] and result["undefined_elements"] == 0, result
