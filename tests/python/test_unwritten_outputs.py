"""Outputs the reference leaves partly unwritten (torch.empty, then only some elements written): the judge
runs the reference under the candidate's allocation poisoning, and again with a second poison when an
output holds poison; the elements that follow the poison are not compared and are counted, and an output
that is never written at all is the problem's error. Both kinds of reference: a PyTorch Model and a Triton
wrapper (kernel mode). The same second run, made once per problem in any case, shows a reference that
disagrees with itself on the same inputs: the problem's error too."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import torch
from conftest import run_eval
from test_kernel_mode import kernel_eval

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from kforge.worker.judge import _written_copies_apart
from kforge.worker.timed_outputs import Spacers, cloned_apart

# A PyTorch reference that fills only the first half of each row of a torch.empty output.
HALF_COLUMNS_PROBLEM = """import torch

ROWS = 8
COLS = 48


class Model(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        out[:, : x.shape[1] // 2] = x[:, : x.shape[1] // 2] * 3.0
        return out


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
"""

HALF_COLUMNS_CANDIDATE = """import torch
import triton
import triton.language as tl


@triton.jit
def _triple_kernel(x_ptr, out_ptr, cols, half, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < LIMIT
    x = tl.load(x_ptr + row * cols + offsets, mask=mask)
    tl.store(out_ptr + row * cols + offsets, x * 3.0, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        half = x.shape[1] // 2
        _triple_kernel[(x.shape[0],)](x, out, x.shape[1], half, BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
"""


def correctness(verdict: dict) -> dict:
    return next(stage for stage in verdict["stages"] if stage["name"] == "correctness")


def test_a_pytorch_reference_that_leaves_part_of_its_output_unwritten(tmp_path: Path) -> None:
    problem = tmp_path / "problem.py"
    problem.write_text(HALF_COLUMNS_PROBLEM)
    # The candidate writes what the reference writes: accepted, the 8 x 24 unwritten elements not compared.
    candidate = tmp_path / "candidate.py"
    candidate.write_text(HALF_COLUMNS_CANDIDATE.replace("LIMIT", "half"))
    run = run_eval(problem, candidate, "--no-small")
    assert run.verdict["outcome"] == "accepted", run.verdict["summary"]
    assert correctness(run.verdict)["details"]["undefined_elements"] == 8 * 24
    # Writing less than the reference is still wrong: its NaN-poisoned gaps are compared.
    short = tmp_path / "short.py"
    short.write_text(HALF_COLUMNS_CANDIDATE.replace("LIMIT", "half - 1"))
    run = run_eval(problem, short, "--no-small")
    assert run.verdict["failed_stage"] == "correctness", run.verdict["summary"]
    assert "8 NaN/Inf mismatches" in run.verdict["summary"]


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("_ = ", "never written"),  # torch.empty, then nothing
        # A softmax over rows masked out entirely: NaN everywhere, which a candidate that launches
        # nothing (its torch.empty output poisoned with NaN) would match.
        ("out = torch.softmax(torch.full_like(x, -math.inf), dim=1)\n        _ = ", "NaN in every element"),
    ],
)
def test_a_pytorch_reference_whose_output_holds_nothing_to_compare_is_the_problems_error(
    tmp_path: Path, written: str, message: str
) -> None:
    problem = tmp_path / "problem.py"
    body = HALF_COLUMNS_PROBLEM.replace("out[:, : x.shape[1] // 2] = ", written)
    problem.write_text("import math\n" + body)
    candidate = tmp_path / "candidate.py"
    candidate.write_text(HALF_COLUMNS_CANDIDATE.replace("LIMIT", "half"))
    run = run_eval(problem, candidate, "--no-small")
    assert run.exit_code == 2
    assert run.verdict["outcome"] == "error" and run.verdict["error"]["kind"] == "problem"
    assert "reference output 0" in run.verdict["error"]["message"]
    assert message in run.verdict["error"]["message"]


# A Triton wrapper (kernel mode) that computes only the first half of the rows of its output.
HALF_ROWS_KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def double_rows_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offsets, mask=offsets < cols, other=0.0)
    tl.store(out_ptr + row * cols + offsets, x * 2, mask=offsets < cols)


def double_first_rows(x):
    out = torch.empty_like(x)
    double_rows_kernel[(ROWS_WRITTEN,)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def get_inputs():
    return [torch.randn(6, 40)]
"""


def test_a_triton_reference_that_leaves_rows_unwritten(tmp_path: Path) -> None:
    kernel = tmp_path / "half_rows.py"
    kernel.write_text(HALF_ROWS_KERNEL.replace("ROWS_WRITTEN", "x.shape[0] // 2"))
    args = ("--kernel", str(kernel), "--entry", "double_first_rows", "--no-small")
    code, verdict, err = kernel_eval(*args)
    assert code == 0, err
    assert verdict is not None
    assert correctness(verdict)["details"]["undefined_elements"] == 3 * 40
    fewer = tmp_path / "fewer.py"
    fewer.write_text(HALF_ROWS_KERNEL.replace("ROWS_WRITTEN", "x.shape[0] // 3"))
    code, verdict, err = kernel_eval(*args, "--candidate", str(fewer))
    assert code == 1, err
    assert verdict is not None and verdict["failed_stage"] == "correctness"
    never = tmp_path / "never.py"
    never.write_text(HALF_ROWS_KERNEL.replace("ROWS_WRITTEN", "0"))
    code, verdict, err = kernel_eval("--kernel", str(never), "--entry", "double_first_rows", "--no-small")
    assert code == 2
    assert verdict is not None and verdict["error"]["kind"] == "problem", verdict


def test_a_reference_that_disagrees_with_itself_is_the_problems_error(tmp_path: Path) -> None:
    # State kept between calls stands in for what real references do on a GPU (races, reads outside
    # their inputs): the second run on the same inputs gives other values for some elements.
    problem = tmp_path / "problem.py"
    problem.write_text(
        HALF_COLUMNS_PROBLEM.replace(
            "    def forward(self, x):\n        out = torch.empty_like(x)",
            "    calls = 0\n\n    def forward(self, x):\n        type(self).calls += 1\n"
            "        out = torch.zeros_like(x)\n        out[0, -1] = float(type(self).calls)",
        )
    )
    candidate = tmp_path / "candidate.py"
    candidate.write_text(HALF_COLUMNS_CANDIDATE.replace("LIMIT", "half"))
    run = run_eval(problem, candidate, "--no-small")
    assert run.exit_code == 2, run.verdict
    assert run.verdict["outcome"] == "error" and run.verdict["error"]["kind"] == "problem"
    message = run.verdict["error"]["message"]
    assert "disagrees with itself" in message and "differed in 1 of 384 elements" in message, message


# A Triton wrapper whose kernel reads past the end of its input (as decay_cumsum's gold does, through a
# wrong head stride): what it reads there is other memory, so its own answer changes with where its
# arguments lie.
READS_PAST_ITS_INPUT = """import torch
import triton
import triton.language as tl


@triton.jit
def _shifted_copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets + n // 2, mask=mask), mask=mask)


def shifted_copy(x):
    out = torch.empty_like(x)
    _shifted_copy_kernel[(1,)](x, out, x.numel(), BLOCK=triton.next_power_of_2(x.numel()))
    return out


def get_inputs():
    return [torch.randn(64)]
"""


def test_a_reference_that_reads_past_its_inputs_is_the_problems_error(tmp_path: Path) -> None:
    kernel = tmp_path / "shifted.py"
    kernel.write_text(READS_PAST_ITS_INPUT)
    code, verdict, err = kernel_eval("--kernel", str(kernel), "--entry", "shifted_copy", "--no-small")
    assert code == 2, err
    assert verdict is not None and verdict["outcome"] == "error", verdict
    assert verdict["error"]["kind"] == "problem"
    assert "reads memory outside its inputs" in verdict["error"]["message"]


def test_the_references_second_run_moves_its_arguments_among_bytes_that_show_writes() -> None:
    x, flag = torch.randn(100), 3
    copies, spacers = cloned_apart([x, flag])
    assert torch.equal(copies[0], x) and copies[0].data_ptr() != x.data_ptr() and copies[1] == flag
    assert [(index, side) for index, side, _ in spacers.around] == [(0, "before"), (0, "after")]
    assert spacers.written() == []
    # A write past the end of argument 0 lands in its "after" spacer (on a GPU's caching allocator the
    # next allocation of the same pool; here written by hand).
    spacers.around[1][2][:8] = 0
    assert spacers.written() == ["after argument 0"]


def test_a_kernel_mode_adapters_copies_of_written_arguments_are_moved_too() -> None:
    # The adapter copies each argument the wrapper writes (`_kf_private_copy`); in the moved run those
    # copies get spacers as well, so a wrapper writing past its output argument shows.
    problem = types.ModuleType("generated_problem")

    def plain_copy(tensor: torch.Tensor, index: int) -> torch.Tensor:
        return tensor.clone()

    problem.__dict__["_kf_private_copy"] = plain_copy
    spacers = Spacers()
    with _written_copies_apart(problem, spacers):
        copy = problem.__dict__["_kf_private_copy"](torch.ones(4), 1)
    assert torch.equal(copy, torch.ones(4))
    assert [(index, side) for index, side, _ in spacers.around] == [(1, "before"), (1, "after")]
    assert problem.__dict__["_kf_private_copy"] is plain_copy
