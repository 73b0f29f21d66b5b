"""Kernel mode: a Triton file is its own reference (`--kernel FILE --entry NAME`). The original wrapper's
outputs on generated inputs define correctness; a variant is judged against them by the full pipeline."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO, run_kforge

KERNELS = REPO / "problems" / "kernels"
ADD_RELU = KERNELS / "scaled_add_relu.py"
ADD_RELU_INPUTS = KERNELS / "scaled_add_relu.inputs.json"


def kernel_eval(*args: str) -> tuple[int, dict | None, str]:
    small = [] if "--no-small" in args else ["--small"]
    args = tuple(arg for arg in args if arg != "--no-small")
    run = run_kforge("eval", "--device", "cpu", *small, "--no-store", "--json", "--timeout", "60", *args)
    try:
        verdict = json.loads(run.stdout)
    except json.JSONDecodeError:
        verdict = None
    return run.returncode, verdict, run.stderr


def add_relu(*extra: str) -> tuple[int, dict | None, str]:
    return kernel_eval(
        "--kernel", str(ADD_RELU), "--entry", "scaled_add_relu", "--inputs", str(ADD_RELU_INPUTS), *extra
    )


def test_the_original_is_accepted_against_itself_with_its_test_block_left_out() -> None:
    code, verdict, err = add_relu()
    assert code == 0, err
    assert verdict is not None and verdict["outcome"] == "accepted"
    # The test block allocates on "cuda": had it run on import, the CPU run would have failed.
    problem = Path(verdict["problem"]["path"]).read_text()
    assert "result_gold" not in problem
    assert "def scaled_add_relu(" in problem


def test_a_wrong_variant_is_rejected_and_a_right_one_accepted(tmp_path: Path) -> None:
    source = ADD_RELU.read_text()
    wrong = tmp_path / "wrong.py"
    wrong.write_text(source.replace("x + alpha * y", "x - alpha * y"))
    code, verdict, _ = add_relu("--candidate", str(wrong))
    assert code == 1
    assert verdict is not None and verdict["outcome"] == "rejected"
    assert verdict["failed_stage"] == "correctness"

    faster = tmp_path / "faster.py"
    faster.write_text(source.replace("BLOCK_SIZE = 128", "BLOCK_SIZE = 1024"))
    code, verdict, err = add_relu("--candidate", str(faster))
    assert code == 0, err


def test_a_variant_that_calls_torch_instead_of_a_kernel_is_rejected(tmp_path: Path) -> None:
    cheat = tmp_path / "cheat.py"
    cheat.write_text(
        ADD_RELU.read_text().replace(
            "def scaled_add_relu(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:\n",
            "def scaled_add_relu(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:\n"
            "    return torch.relu(x + alpha * y)\n",
        )
    )
    code, verdict, _ = add_relu("--candidate", str(cheat))
    assert code == 1
    assert verdict is not None and verdict["outcome"] == "rejected"


# ROWS = 8: one interpreted program per row; no check below depends on the count (64 took 11 s more).
ROW_LOSS = """import torch
import triton
import triton.language as tl

ROWS = 8
COLS = 200


@triton.jit
def _row_squares(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x * x, axis=0))


def row_loss(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    per_row = torch.empty(rows, device=x.device, dtype=torch.float32)
    _row_squares[(rows,)](x, per_row, cols, BLOCK=triton.next_power_of_2(cols))
    return per_row.sum() / rows


def get_inputs():
    return [torch.randn(ROWS, COLS)]
"""


def test_pytorch_work_the_reference_runs_too_is_allowed_and_no_more(tmp_path: Path) -> None:
    # A kernel-mode file that averages its kernel's per-row results in PyTorch, as many real files do.
    original = tmp_path / "row_loss.py"
    original.write_text(ROW_LOSS)
    code, verdict, err = kernel_eval("--no-small", "--kernel", str(original), "--entry", "row_loss")
    assert code == 0, err
    assert verdict is not None and verdict["outcome"] == "accepted"
    static, runtime = (next(s for s in verdict["stages"] if s["name"] == n) for n in ("static", "runtime"))
    assert [f["severity"] for f in static["findings"] if f["rule"] == "torch-compute-in-forward"] == ["warn"]
    parity = [f for f in runtime["findings"] if f["rule"] == "reference-parity"]
    assert len(parity) == 1 and "sum x" in parity[0]["message"], runtime["findings"]
    assert runtime["details"]["reference_parity"]["aten_compute_ops"] == {"sum": 1, "div": 1}

    # The same `sum`, on the whole input instead of the kernel's 8 results: PyTorch doing the work.
    cheat = tmp_path / "cheat.py"
    cheat.write_text(ROW_LOSS.replace("return per_row.sum() / rows", "return (x * x).sum() / rows"))
    code, verdict, _ = kernel_eval(
        "--no-small", "--kernel", str(original), "--entry", "row_loss", "--candidate", str(cheat)
    )
    assert code == 1
    assert verdict is not None and verdict["failed_stage"] == "runtime"
    runtime = next(s for s in verdict["stages"] if s["name"] == "runtime")
    assert "torch-compute-at-runtime" in runtime["summary"]
    assert "beyond what the reference" in runtime["summary"] and "mul x" in runtime["summary"]


def test_a_reference_that_prints_allows_as_many_prints_whatever_their_values(tmp_path: Path) -> None:
    # Real files print their tensors (TritonBench's cross_entropy2). torch runs value-dependent ATen ops
    # to format a tensor, so the allowance is the reference's number of printed tensors per call.
    launch = "    _row_squares[(rows,)](x, per_row, cols, BLOCK=triton.next_power_of_2(cols))\n"
    printing = tmp_path / "printing.py"
    printing.write_text(ROW_LOSS.replace(launch, launch + "    print('per row', per_row)\n"))
    code, verdict, err = kernel_eval("--no-small", "--kernel", str(printing), "--entry", "row_loss")
    assert code == 0, err
    assert verdict is not None and verdict["outcome"] == "accepted"
    runtime = next(s for s in verdict["stages"] if s["name"] == "runtime")
    parity = [f for f in runtime["findings"] if f["rule"] == "reference-parity"]
    assert len(parity) == 1 and "printing tensors" in parity[0]["message"], runtime["findings"]
    assert runtime["details"]["reference_parity"]["formatted_tensors"] == 1

    more = tmp_path / "more.py"
    more.write_text(ROW_LOSS.replace(launch, launch + "    print('per row', per_row, 'x', x)\n"))
    code, verdict, _ = kernel_eval(
        "--no-small", "--kernel", str(printing), "--entry", "row_loss", "--candidate", str(more)
    )
    assert code == 1
    assert verdict is not None and verdict["failed_stage"] == "runtime"
    runtime = next(s for s in verdict["stages"] if s["name"] == "runtime")
    assert "into text" in runtime["summary"] and "the reference formats 1 per call" in runtime["summary"]


def test_a_wrapper_that_draws_its_own_random_operands_is_a_problem_error(tmp_path: Path) -> None:
    # Its output follows the random generator, not its inputs: no candidate process can be given the
    # judge's draws without the secret seeds, so it is the file's defect, not a rejection of the candidate.
    draws = tmp_path / "draws.py"
    draws.write_text(
        ROW_LOSS.replace(
            "    rows, cols = x.shape\n",
            "    x = x + torch.rand(x.shape, device=x.device)\n    rows, cols = x.shape\n",
        )
    )
    code, verdict, _ = kernel_eval("--no-small", "--kernel", str(draws), "--entry", "row_loss")
    assert code == 2
    assert verdict is not None and verdict["outcome"] == "error"
    assert verdict["error"]["kind"] == "problem"
    assert "draws its own random numbers" in verdict["error"]["message"]


def test_a_file_with_its_own_get_inputs_needs_no_spec(tmp_path: Path) -> None:
    kernel = tmp_path / "row_sum.py"
    kernel.write_text(
        """import torch
import triton
import triton.language as tl

ROWS = 4096
COLS = 512
KFORGE_SMALL = {"ROWS": 5, "COLS": 37}


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offsets, mask=offsets < cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


def row_sum(x, out):
    row_sum_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.empty(ROWS)]
"""
    )
    # The wrapper returns None: its outputs are the tensors it was given, written in place.
    code, verdict, err = kernel_eval("--kernel", str(kernel), "--entry", "row_sum", "--writes", "1")
    assert code == 0, err
    assert verdict is not None and verdict["outcome"] == "accepted"


def test_what_cannot_be_used_is_a_usage_error_that_says_why(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    cases: list[tuple[list[str], str]] = [
        (
            ["--kernel", str(ADD_RELU), "--entry", "nope", "--inputs", str(ADD_RELU_INPUTS)],
            "no module-level function nope",
        ),
        (["--kernel", str(ADD_RELU), "--entry", "scaled_add_relu"], "has no get_inputs(); give --inputs"),
        (["--kernel", str(ADD_RELU)], "--kernel needs --entry NAME"),
        (
            ["--entry", "scaled_add_relu"],
            "--entry, --inputs, --inputs-from-test, --test-case and --writes need --kernel FILE",
        ),
        (
            ["--inputs-from-test"],
            "--entry, --inputs, --inputs-from-test, --test-case and --writes need --kernel FILE",
        ),
        (
            ["--kernel", str(ADD_RELU), "--entry", "scaled_add_relu", "--problem", str(ADD_RELU)],
            "not both",
        ),
    ]
    for args, message in cases:
        code, _, err = kernel_eval(*args)
        assert code == 2, args
        assert message in err, (args, err)
    specs = {
        '{"inputs": [{"shape": [4], "dtype": "float8"}]}': 'dtype "float8" is not one of',
        '{"inputs": [{"shape": ["M"], "dtype": "float32"}]}': 'a name from "sizes"',
        '{"sizes": {"scaled_add_relu": 4}, "inputs": []}': "also a module-level name",
        '{"inputs": [{"shape": [4], "dtype": "float32", "low": 0}]}': "give both low and high",
        "[1, 2]": 'expected an object with "inputs"',
        "{not json": "is not JSON",
    }
    for text, message in specs.items():
        spec.write_text(text)
        code, _, err = kernel_eval(
            "--kernel", str(ADD_RELU), "--entry", "scaled_add_relu", "--inputs", str(spec)
        )
        assert code == 2, text
        assert message in err, (text, err)


def test_optimize_takes_a_kernel_file_and_needs_a_gpu_to_tune() -> None:
    run = run_kforge(
        "optimize",
        *("--kernel", str(ADD_RELU), "--entry", "scaled_add_relu", "--inputs", str(ADD_RELU_INPUTS)),
        *("--device", "cpu", "--small", "--no-store"),
    )
    assert run.returncode == 2
    assert "tuning needs a GPU" in run.stderr
    assert "the start is accepted" in run.stderr


def test_a_bfloat16_kernel_matches_itself_exactly_on_the_interpreter() -> None:
    # The reference is Triton too: the judge runs it with the same interpreter fixes as the candidate.
    swiglu = KERNELS / "swiglu.py"
    code, verdict, err = kernel_eval(
        "--kernel", str(swiglu), "--entry", "swiglu", "--inputs", str(swiglu.with_suffix(".inputs.json"))
    )
    assert code == 0, err
    assert verdict is not None
    correctness = next(stage for stage in verdict["stages"] if stage["name"] == "correctness")
    assert "max abs error 0.00e+00" in correctness["summary"], correctness


def test_an_index_bound_may_name_a_size() -> None:
    embedding = KERNELS / "embedding_lookup.py"
    spec = json.loads(embedding.with_suffix(".inputs.json").read_text())
    assert spec["inputs"][1]["high"] == "V"
    code, verdict, err = kernel_eval(
        "--kernel",
        str(embedding),
        "--entry",
        "embedding_lookup",
        "--inputs",
        str(embedding.with_suffix(".inputs.json")),
    )
    assert code == 0, err
    assert verdict is not None and verdict["outcome"] == "accepted"


TWO_CALLS = """import torch
import triton
import triton.language as tl


@triton.jit
def negate_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, -tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


def negate(x, scale=1):
    out = torch.empty_like(x)
    negate_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


######################################################################
def test_negate():
    return {"small": negate(torch.randn(100)), "large": negate(torch.rand(300) * 4, scale=2)}


result_gold = test_negate()
"""


def test_inputs_can_come_from_the_files_own_test_block(tmp_path: Path) -> None:
    kernel = tmp_path / "negate.py"
    kernel.write_text(TWO_CALLS)
    code, verdict, err = kernel_eval(
        "--kernel", str(kernel), "--entry", "negate", "--inputs-from-test", "--no-small"
    )
    assert code == 0, err
    assert verdict is not None
    problem = Path(verdict["problem"]["path"]).read_text()
    assert 'shape\\":[300]' in problem  # the largest call, by default; keywords and defaults bound in order
    assert 'value\\":2}' in problem
    code, verdict, err = kernel_eval(
        "--kernel", str(kernel), "--entry", "negate", "--inputs-from-test", "--test-case", "0", "--no-small"
    )
    assert code == 0, err
    assert verdict is not None
    assert 'shape\\":[100]' in Path(verdict["problem"]["path"]).read_text()


def test_a_test_function_the_block_defines_and_never_calls_is_called_for_the_inputs(tmp_path: Path) -> None:
    # Some TritonBench gold files define `def test_x():` and never call it (TritonBench's scripts only
    # compare stdout, which is empty on both sides); kforge calls it, as pytest would, and says so.
    kernel = tmp_path / "negate.py"
    kernel.write_text(TWO_CALLS.replace("result_gold = test_negate()\n", ""))
    code, verdict, err = kernel_eval(
        "--kernel", str(kernel), "--entry", "negate", "--inputs-from-test", "--no-small"
    )
    assert code == 0, err
    assert verdict is not None and verdict["kernel_mode"]["called_tests"] == ["test_negate"]
    assert 'shape\\":[300]' in Path(verdict["problem"]["path"]).read_text()
    # One that fails when called is the file's error, named.
    kernel.write_text(
        TWO_CALLS.replace("result_gold = test_negate()\n", "").replace(
            "    return {", "    raise ValueError('boom')\n    return {"
        )
    )
    code, _, err = kernel_eval(
        "--kernel", str(kernel), "--entry", "negate", "--inputs-from-test", "--no-small"
    )
    assert code == 2
    assert "defines test_negate() and never calls it; called by kforge, it failed: ValueError: boom" in err


def test_a_test_block_that_cannot_give_inputs_is_an_error_that_says_why(tmp_path: Path) -> None:
    kernel = tmp_path / "negate.py"
    cases = {
        TWO_CALLS.replace("negate(torch.randn(100))", "1"): "",  # one call left: still fine
        TWO_CALLS.replace(
            'return {"small"', 'raise ValueError("boom")\n    return {"small"'
        ): "ValueError: boom",
        TWO_CALLS.split("######")[0]: "has no test block",
        TWO_CALLS.replace("def negate(x, scale=1):", "def negate(x, **options):").replace(
            "negate(torch.rand(300) * 4, scale=2)", "negate(torch.rand(300) * 4)"
        ): "through **kwargs",
        TWO_CALLS.replace('"large": negate(torch.rand(300) * 4, scale=2)', '"large": 2'): "",
        # A test block that runs only as a script, as real files guard it, is run as one.
        TWO_CALLS.replace(
            "result_gold = test_negate()", 'if __name__ == "__main__":\n    result_gold = test_negate()'
        ): "",
    }
    for text, message in cases.items():
        kernel.write_text(text)
        code, _, err = kernel_eval(
            "--kernel", str(kernel), "--entry", "negate", "--inputs-from-test", "--no-small"
        )
        if message:
            assert code == 2, message
            assert message in err, (message, err)
        else:
            assert code == 0, err
    kernel.write_text(TWO_CALLS)
    code, _, err = kernel_eval(
        "--kernel", str(kernel), "--entry", "other", "--inputs-from-test", "--no-small"
    )
    assert code == 2
    assert "no function other" in err or "no module-level function other" in err
    code, _, err = kernel_eval(
        "--kernel", str(kernel), "--entry", "negate", "--inputs-from-test", "--test-case", "5", "--no-small"
    )
    assert code == 2
    assert "called negate 2 times" in err


IN_PLACE = """import torch
import triton
import triton.language as tl

N = 3000
KFORGE_SMALL = {"N": 300}


@triton.jit
def axpy_kernel(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * alpha + y, mask=mask)


def axpy_(alpha, x, y):
    # y += alpha * x, in place: nothing is returned.
    axpy_kernel[(triton.cdiv(x.numel(), 256),)](x, y, alpha, x.numel(), BLOCK=256)


def get_inputs():
    return [2.0, torch.randn(N), torch.randn(N)]
"""


def test_an_in_place_wrapper_needs_no_writes_flag(tmp_path: Path) -> None:
    kernel = tmp_path / "axpy.py"
    kernel.write_text(IN_PLACE)
    code, verdict, err = kernel_eval("--kernel", str(kernel), "--entry", "axpy_")
    assert code == 0, err
    assert verdict is not None and verdict["outcome"] == "accepted"
    # The argument the reference's call wrote was found, and the verdict says it was inferred, and that
    # the wrapper's return value (None) is not an output.
    assert verdict["kernel_mode"] == {
        "entry": "axpy_",
        "writes": [2],
        "writes_inferred": True,
        "result_ignored": True,
    }
    # A variant that also returns what it wrote (a common convenience) gives the same answer.
    returning = tmp_path / "returning.py"
    returning.write_text(IN_PLACE.replace("x.numel(), BLOCK=256)", "x.numel(), BLOCK=256)\n    return y"))
    code, verdict, err = kernel_eval(
        "--kernel", str(kernel), "--entry", "axpy_", "--candidate", str(returning)
    )
    assert code == 0, err
    assert verdict is not None and verdict["outcome"] == "accepted"
    wrong = tmp_path / "wrong.py"
    wrong.write_text(IN_PLACE.replace("* alpha + y", "* alpha - y"))
    code, verdict, _ = kernel_eval("--kernel", str(kernel), "--entry", "axpy_", "--candidate", str(wrong))
    assert code == 1
    assert verdict is not None and verdict["failed_stage"] == "correctness"
    # A flag given is used as is: nothing is inferred.
    code, verdict, err = kernel_eval("--kernel", str(kernel), "--entry", "axpy_", "--writes", "2")
    assert code == 0, err
    assert verdict is not None and verdict["kernel_mode"]["writes_inferred"] is False


def test_a_wrapper_that_writes_an_argument_and_returns_it(tmp_path: Path) -> None:
    # The common in-place style: y is written and returned. Unnoticed, the candidate would be caught
    # writing into its input and returning a view of it; inferred, y is a fresh copy on both sides.
    kernel = tmp_path / "axpy.py"
    kernel.write_text(IN_PLACE.replace("x.numel(), BLOCK=256)", "x.numel(), BLOCK=256)\n    return y"))
    code, verdict, err = kernel_eval("--kernel", str(kernel), "--entry", "axpy_")
    assert code == 0, err
    assert verdict is not None and verdict["kernel_mode"]["writes"] == [2]
    trial = next(stage for stage in verdict["stages"] if stage["name"] == "correctness")["details"]["trials"][
        0
    ]
    assert len(trial["outputs"]) == 2  # the returned tensor, then the written argument


def test_an_in_place_wrapper_found_through_the_test_block(tmp_path: Path) -> None:
    kernel = tmp_path / "axpy.py"
    kernel.write_text(
        IN_PLACE.split("def get_inputs")[0]
        + "#" * 40
        + "\ndef test_axpy():\n    y = torch.zeros(500)\n    axpy_(3.0, torch.ones(500), y)\n"
        + "    return y\n\n\nresult_gold = test_axpy()\n"
    )
    code, verdict, err = kernel_eval("--kernel", str(kernel), "--entry", "axpy_", "--inputs-from-test")
    assert code == 0, err
    assert verdict is not None and verdict["kernel_mode"]["writes"] == [2]
    nothing = tmp_path / "nothing.py"
    nothing.write_text(kernel.read_text().replace("axpy_kernel[(", "0 and axpy_kernel[("))
    code, _, err = kernel_eval("--kernel", str(nothing), "--entry", "axpy_", "--inputs-from-test")
    assert code == 2
    assert "returned None and wrote none of its tensor arguments" in err


SCATTER = """import torch
import triton
import triton.language as tl


@triton.jit
def scatter_rows_kernel(src_ptr, dest_ptr, out_ptr, rows, WIDTH: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < rows
    target = tl.load(dest_ptr + offs, mask=mask, other=0)
    for column in tl.static_range(WIDTH):
        values = tl.load(src_ptr + offs * WIDTH + column, mask=mask)
        tl.store(out_ptr + target * WIDTH + column, values, mask=mask)


def scatter_rows(src, dest, out):
    rows = src.shape[0]
    scatter_rows_kernel[(triton.cdiv(rows, 1024),)](src, dest, out, rows, WIDTH=src.shape[1], BLOCK=1024)


######################################################################
def test_scatter_rows():
    rows = 5000
    src = torch.randn(rows, 3)
    out = torch.zeros(rows, 3)
    scatter_rows(src, torch.randperm(rows), out)
    small = torch.zeros(6, 3)
    scatter_rows(torch.randn(6, 3), torch.tensor([5, 0, 3, 1, 4, 2]), small)
    return out


result_gold = test_scatter_rows()
"""


def test_captured_integer_structure_is_kept(tmp_path: Path) -> None:
    """Scatter destinations drawn independently would repeat, and two rows racing for one destination
    make the gold disagree with itself: a captured index tensor keeps its values when small and its
    distinctness (and order) when large, so the in-place gold is accepted against itself."""
    kernel = tmp_path / "scatter.py"
    kernel.write_text(SCATTER)
    for case in ("0", "1"):  # the 5000-row permutation, then the 6 destinations kept as captured
        _, verdict, err = kernel_eval(
            "--kernel", str(kernel), "--entry", "scatter_rows", "--inputs-from-test", "--test-case", case,
            "--no-small", "--no-generalisation",
        )  # fmt: skip
        assert verdict is not None, err
        assert verdict["outcome"] == "accepted", verdict["summary"]
        problem = Path(verdict["problem"]["path"]).read_text()
        assert ('unique\\":true' in problem) if case == "0" else ('values\\":[5,0,3,1,4,2]' in problem)


WINDOWED = """import torch
import triton
import triton.language as tl


@triton.jit
def window_kernel(x_ptr, out_ptr, n, lo, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, tl.where((offs >= lo) & (offs < hi), x, 0.0), mask=offs < n)


def windowed(x, window):
    assert isinstance(window, tuple), "the window is a tuple"
    out = torch.empty_like(x)
    window_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), window[0], window[1], BLOCK=64)
    return out


######################################################################
def test_windowed():
    return windowed(torch.randn(300), (10, 200))


result_gold = test_windowed()
"""


def test_a_tuple_of_numbers_is_captured_as_a_tuple(tmp_path: Path) -> None:
    kernel = tmp_path / "windowed.py"
    kernel.write_text(WINDOWED)
    _, verdict, err = kernel_eval(
        "--kernel", str(kernel), "--entry", "windowed", "--inputs-from-test", "--no-small",
        "--no-generalisation",
    )  # fmt: skip
    assert verdict is not None, err
    assert verdict["outcome"] == "accepted", verdict["summary"]
    assert 'sequence\\":\\"tuple\\",\\"value\\":[10,200]' in Path(verdict["problem"]["path"]).read_text()


NESTED_RESULT = """import torch
import triton
import triton.language as tl

N = 3000
KFORGE_SMALL = {"N": 300}


@triton.jit
def gated_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    tl.store(c_ptr + offsets, tl.maximum(a, 0.0) * tl.load(b_ptr + offsets, mask=mask), mask=mask)


def gated(a, b):
    # Real wrappers return their own arguments beside the result, nest tuples and add plain numbers.
    c = torch.empty_like(a)
    gated_kernel[(triton.cdiv(a.numel(), 256),)](a, b, c, a.numel(), BLOCK=256)
    return a, (c, a.numel()), None


def get_inputs():
    return [torch.randn(N), torch.randn(N)]
"""


def test_a_wrapper_returning_its_argument_a_nested_tuple_and_a_count(tmp_path: Path) -> None:
    kernel = tmp_path / "gated.py"
    kernel.write_text(NESTED_RESULT)
    code, verdict, err = kernel_eval("--kernel", str(kernel), "--entry", "gated")
    assert code == 0, err
    assert verdict is not None and verdict["outcome"] == "accepted", verdict
    trial = next(stage for stage in verdict["stages"] if stage["name"] == "correctness")["details"]["trials"][
        0
    ]
    assert [output["passed"] for output in trial["outputs"]] == [True, True, True, True]
    # The reference returns input 0 itself, so may the candidate; a view of the other input it may not.
    other_view = tmp_path / "other_view.py"
    other_view.write_text(
        NESTED_RESULT.replace("return a, (c, a.numel()), None", "return b, (c, a.numel()), None")
    )
    code, verdict, _ = kernel_eval(
        "--kernel", str(kernel), "--entry", "gated", "--candidate", str(other_view)
    )
    assert code == 1 and verdict is not None
    assert "output 0 is a view of input 1, expected a tensor of its own" in verdict["summary"]
    # The plain values are compared too.
    wrong_count = tmp_path / "wrong_count.py"
    wrong_count.write_text(NESTED_RESULT.replace("(c, a.numel())", "(c, a.numel() + 1)"))
    code, verdict, _ = kernel_eval(
        "--kernel", str(kernel), "--entry", "gated", "--candidate", str(wrong_count)
    )
    assert code == 1 and verdict is not None
    assert "output 2 is 301, expected 300" in verdict["summary"], verdict["summary"]


CONCAT_SCALE = """import torch
import triton
import triton.language as tl


@triton.jit
def scaled_copy_kernel(src_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(src_ptr + offsets, mask=mask) * scale, mask=mask)


def concat_scale(parts, scale):
    out = torch.empty(sum(part.numel() for part in parts), dtype=parts[0].dtype, device=parts[0].device)
    start = 0
    for part in parts:
        n = part.numel()
        scaled_copy_kernel[(triton.cdiv(n, 64),)](part, out[start:], n, scale, BLOCK=64)
        start += n
    return out


######################################################################
def test_concat_scale():
    return concat_scale([torch.randn(100), torch.rand(37) * 3, torch.randn(5)], 0.5)


result_gold = test_concat_scale()
"""


def test_a_wrapper_taking_a_list_of_tensors_is_judged_from_its_test_block(tmp_path: Path) -> None:
    # torch.hstack-like wrappers (TritonBench-T's fused_hstack_div): the list's tensors are drawn anew,
    # each with its captured shape, and reach both sides as a list.
    kernel = tmp_path / "concat_scale.py"
    kernel.write_text(CONCAT_SCALE)
    code, verdict, err = kernel_eval(
        "--kernel", str(kernel), "--entry", "concat_scale", "--inputs-from-test", "--no-small"
    )
    assert code == 0 and verdict is not None and verdict["outcome"] == "accepted", err
    problem = Path(verdict["problem"]["path"]).read_text()
    assert '{\\"items\\":[' in problem and 'shape\\":[100]' in problem and 'shape\\":[37]' in problem
    wrong = tmp_path / "concat_wrong.py"
    wrong.write_text(CONCAT_SCALE.replace("start += n", "start += n - 1"))
    code, verdict, err = kernel_eval(
        "--kernel", str(kernel), "--entry", "concat_scale", "--inputs-from-test", "--no-small",
        "--candidate", str(wrong),
    )  # fmt: skip
    assert verdict is not None and verdict["outcome"] == "rejected", err
