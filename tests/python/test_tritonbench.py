"""TritonBench support (`kforge eval --tritonbench PATH --channel G|T [--samples ANSWERS]`) on the CPU, over
the self-written miniature checkout in tests/fixtures/tritonbench: TritonBench's call and execution
accuracy, kforge's verdict beside them, answer matching, and bad input."""

from __future__ import annotations

import json
import shutil
import tempfile
import textwrap
from pathlib import Path

from conftest import REPO, run_kforge

CHECKOUT = REPO / "tests" / "fixtures" / "tritonbench"
GOLD_G = CHECKOUT / "data" / "TritonBench_G_v1"


def tritonbench(*args: str) -> tuple[int, dict | None, str]:
    with tempfile.TemporaryDirectory() as scratch:  # the default --results would land in the repository
        results = [] if "--results" in args else ["--results", str(Path(scratch) / "results.jsonl")]
        common = ["eval", "--device", "cpu", "--no-store", "--json", "--timeout", "120"]
        run = run_kforge(*common, *results, *args)
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        report = None
    return run.returncode, report, run.stderr


def rows(report: dict) -> dict[str, dict]:
    return {item["name"]: item for item in report["items"]}


def test_channel_g_answers_get_tritonbench_metrics_and_kforge_verdicts(tmp_path: Path) -> None:
    output = tmp_path / "report.json"
    code, report, err = tritonbench(
        "--tritonbench",
        str(CHECKOUT),
        "--channel",
        "G",
        "--samples",
        str(CHECKOUT / "predictions_G.jsonl"),
        "--output",
        str(output),
    )
    assert code == 0, err
    assert report is not None and report["schema"] == "kforge.tritonbench/1"
    assert json.loads(output.read_text()) == report
    items = rows(report)
    assert set(items) == {"vector_scale_add", "row_softmax", "rms_norm_rows"}
    # The correct answer: runs, matches the gold values, accepted by kforge.
    good = items["vector_scale_add"]
    assert good["call"] and good["exec"], good
    assert good["entry"] == "vector_scale_add"
    assert good["verdict"]["outcome"] == "accepted"
    # The wrong answer runs (call) but its test values differ (exec), and kforge rejects it at correctness.
    wrong = items["row_softmax"]
    assert wrong["call"] and not wrong["exec"]
    assert "differ" in wrong["exec_reason"]
    assert wrong["verdict"]["failed_stage"] == "correctness"
    # The crashing answer fails the call with the answer's own error.
    crash = items["rms_norm_rows"]
    assert not crash["call"] and "_pick_num_warps" in crash["call_error"]
    assert crash["verdict"]["outcome"] == "rejected"
    metrics = report["tritonbench"]
    assert metrics["call_accuracy"] == 2 / 3
    assert metrics["execution_accuracy"] == 1 / 3
    assert report["kforge"]["accepted_rate"] == 1 / 3
    assert metrics["speedup"] is None  # no timing on the CPU
    assert report["unmatched"] == []


def test_channel_t_counts_a_torch_calling_answer_as_tritonbench_does_but_kforge_rejects_it() -> None:
    code, report, err = tritonbench(
        "--tritonbench", str(CHECKOUT), "--channel", "T", "--samples", str(CHECKOUT / "predictions_T.jsonl")
    )
    assert code == 0, err
    assert report is not None
    items = rows(report)
    assert items["scaled_gelu"]["exec"] and items["scaled_gelu"]["verdict"]["outcome"] == "accepted"
    cheat = items["row_l2_normalize"]
    assert cheat["call"] and cheat["exec"], "TritonBench's own checks see correct values"
    assert cheat["verdict"]["failed_stage"] == "static"
    assert "not launched" in json.dumps(cheat["verdict"]["stages"])
    assert report["tritonbench"]["execution_accuracy"] == 1.0
    assert report["kforge"]["accepted_rate"] == 0.5


def test_without_answers_the_gold_files_are_judged_as_their_own_answers(tmp_path: Path) -> None:
    results = tmp_path / "rows.jsonl"
    code, report, err = tritonbench(
        "--tritonbench", str(CHECKOUT), "--channel", "G", "--items", "row_softmax", "--results", str(results)
    )
    assert code == 0, err
    assert report is not None
    (item,) = report["items"]
    assert item["origin"] == "gold" and item["call"] and item["exec"]
    assert item["verdict"]["outcome"] == "accepted"
    # --results streams the same row as one JSON line.
    assert [json.loads(line) for line in results.read_text().splitlines()] == [item]


def test_a_folder_of_answers_and_an_answer_that_matches_no_item(tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    answers.mkdir()
    # A call-accuracy output file (answer, separator, test block): the test block in it is ignored.
    shutil.copy(GOLD_G / "vector_scale_add.py", answers / "vector_scale_add.py")
    (answers / "not_an_item.py").write_text("def f():\n    return 1\n")
    code, report, err = tritonbench(
        "--tritonbench", str(CHECKOUT), "--channel", "G", "--samples", str(answers)
    )
    assert code == 1, "an answer that matches no item is reported and fails the run"
    assert report is not None
    assert [item["name"] for item in report["items"]] == ["vector_scale_add"]
    assert report["items"][0]["exec"] and report["items"][0]["verdict"]["outcome"] == "accepted"
    assert len(report["unmatched"]) == 1 and "not_an_item" in report["unmatched"][0]
    assert "matches no item" in err


def test_hostile_answers_get_a_verdict_and_cannot_reach_the_gold(tmp_path: Path) -> None:
    gold_path = str(GOLD_G / "vector_scale_add.py")
    lines = [
        # Reads the gold file to copy its code: the sandbox keeps the checkout out of reach.
        {
            "file": "vector_scale_add.py",
            "predict": (
                "```python\nimport torch\n\ndef vector_scale_add(x, y, alpha):\n"
                f"    exec(open({gold_path!r}).read().split('#' * 146)[0], globals())\n"
                "    return globals()['vector_scale_add'](x, y, alpha)\n```"
            ),
        },
        # Exits with success (from a decorator: TritonBench-G's filter keeps functions) before the test
        # block runs: no result, so no call.
        {
            "file": "vector_scale_add.py",
            "predict": (
                "import os\nimport torch\n\ndef leave():\n    os._exit(0)\n\n"
                "@(lambda function: (leave(), function)[1])\n"
                "def vector_scale_add(x, y, alpha):\n    return x\n"
            ),
        },
        # Not Python at all.
        {"file": "vector_scale_add.py", "predict": "```python\ndef (:\n```"},
        {"file": "vector_scale_add.py", "predict": 7},
    ]
    samples = tmp_path / "hostile.jsonl"
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines) + "not json\n")
    code, report, err = tritonbench(
        "--tritonbench", str(CHECKOUT), "--channel", "G", "--samples", str(samples)
    )
    assert code == 1, err
    assert report is not None
    assert len(report["items"]) == 3 and len(report["unmatched"]) == 2
    reader, leaver, broken = report["items"]
    assert "Permission denied" in reader["call_error"], reader
    assert "no result" in leaver["call_error"], leaver
    assert "SyntaxError" in broken["call_error"], broken
    for item in report["items"]:
        assert not item["call"] and not item["exec"], item
        assert item["verdict"] is None or item["verdict"]["outcome"] != "accepted", item
    assert report["tritonbench"]["call_accuracy"] == 0.0


def test_a_gold_file_without_a_test_block_fails_the_call_instead_of_passing_it(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    shutil.copytree(CHECKOUT / "data", checkout / "data")
    gold = checkout / "data" / "TritonBench_G_v1" / "vector_scale_add.py"
    gold.write_text(gold.read_text().split("#" * 146)[0])
    code, report, err = tritonbench("--tritonbench", str(checkout), "--items", "vector_scale_add")
    assert code == 0, err
    assert report is not None
    (item,) = report["items"]
    assert not item["call"] and "no test block" in item["call_error"]
    assert item["verdict"] is None and "no test block" in item["verdict_error"]


def test_a_test_block_that_needs_cuda_on_a_cpu_machine_is_the_machines_lack_not_the_golds(
    tmp_path: Path,
) -> None:
    checkout = tmp_path / "checkout"
    shutil.copytree(CHECKOUT / "data", checkout / "data")
    gold = checkout / "data" / "TritonBench_G_v1" / "vector_scale_add.py"
    gold.write_text(
        gold.read_text().replace('DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', 'DEVICE = "cuda"')
    )
    code, report, err = tritonbench("--tritonbench", str(checkout), "--items", "vector_scale_add")
    assert code == 0, err
    assert report is not None
    (item,) = report["items"]
    assert item["verdict"] is None
    assert "cannot run on this machine" in item["verdict_error"], item["verdict_error"]
    assert "this machine has no GPU" in item["verdict_error"] and "--device cuda:N" in item["verdict_error"]
    assert "own test block fails" not in item["verdict_error"]


def test_bad_usage_is_a_clear_error(tmp_path: Path) -> None:
    code, _, err = tritonbench("--channel", "T")
    assert code == 2 and "need --tritonbench PATH" in err
    code, _, err = tritonbench("--tritonbench", str(tmp_path))
    assert code == 2 and "is not a TritonBench checkout" in err
    code, _, err = tritonbench("--tritonbench", str(CHECKOUT), "--items", "nope")
    assert code == 2 and "no gold file nope.py" in err
    code, _, err = tritonbench("--tritonbench", str(CHECKOUT), "--kernel", str(GOLD_G / "row_softmax.py"))
    assert code == 2 and "without --problem" in err


SEPARATOR = "#" * 146

# An in-place gold: the wrapper writes `out` and returns None (no --writes needed).
SCALE_INTO = '''import torch
import triton
import triton.language as tl


@triton.jit
def _scale_into_kernel(x_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * alpha, mask=mask)


def scale_into(x, out, alpha):
    """Writes alpha * x into out; returns nothing."""
    n = x.numel()
    _scale_into_kernel[(triton.cdiv(n, 128),)](x, out, alpha, n, BLOCK=128)
'''

SCALE_INTO_TEST = """DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_scale_into():
    torch.manual_seed(0)
    results = {}
    for case, n in enumerate((10, 1000)):
        x = torch.randn(n, device=DEVICE)
        out = torch.empty_like(x)
        scale_into(x, out, 0.5)
        results[f"test_case_{case}"] = out
    return results


result_gold = test_scale_into()
"""

# A gold whose output is padded: each row of `out` has BLOCK columns, of which the kernel writes n.
PAD_ROWS = '''import torch
import triton
import triton.language as tl


@triton.jit
def _pad_rows_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    values = tl.load(x_ptr + row * n + cols, mask=cols < n)
    tl.store(out_ptr + row * BLOCK + cols, values + 1.0, mask=cols < n)


def pad_rows(x):
    """x + 1 in rows padded to a power of two; the padding is left as torch.empty made it."""
    rows, n = x.shape
    block = triton.next_power_of_2(n)
    out = torch.empty(rows, block, device=x.device, dtype=x.dtype)
    _pad_rows_kernel[(rows,)](x, out, n, BLOCK=block)
    return out
'''

PAD_ROWS_TEST = """DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_pad_rows():
    torch.manual_seed(0)
    x = torch.randn(6, 40, device=DEVICE)
    return {"test_case_1": pad_rows(x)[:, :40]}


result_gold = test_pad_rows()
"""


def own_checkout(root: Path) -> Path:
    """A channel-G checkout of two golds this file wrote: an in-place wrapper and a padded output."""
    gold = root / "data" / "TritonBench_G_v1"
    gold.mkdir(parents=True)
    (gold / "scale_into.py").write_text(SCALE_INTO + SEPARATOR + "\n" + SCALE_INTO_TEST)
    (gold / "pad_rows.py").write_text(PAD_ROWS + SEPARATOR + "\n" + PAD_ROWS_TEST)
    return root


def correctness_stage(verdict: dict) -> dict:
    return next(stage for stage in verdict["stages"] if stage["name"] == "correctness")


def test_an_in_place_gold_and_a_gold_with_unwritten_padding_are_accepted_against_themselves(
    tmp_path: Path,
) -> None:
    checkout = own_checkout(tmp_path / "checkout")
    code, report, err = tritonbench("--tritonbench", str(checkout), "--channel", "G")
    assert code == 0, err
    assert report is not None
    items = rows(report)
    in_place = items["scale_into"]
    assert in_place["entry"] == "scale_into"
    # The wrapper returned None: the argument it wrote was found and is what kforge compares.
    assert in_place["writes"] == [1] and in_place["writes_inferred"], in_place
    assert in_place["verdict"]["outcome"] == "accepted", in_place["verdict"]["summary"]
    padded = items["pad_rows"]
    assert padded["verdict"]["outcome"] == "accepted", padded["verdict"]["summary"]
    # 6 rows of 64 columns, 24 of them never written: left out of the comparison, and counted.
    assert correctness_stage(padded["verdict"])["details"]["undefined_elements"] == 6 * 24
    assert "leaves unwritten not compared" in correctness_stage(padded["verdict"])["summary"]
    assert padded["writes"] == [] and not padded["writes_inferred"]


def test_a_gold_that_defines_its_test_and_never_calls_it_is_judged_from_that_test(tmp_path: Path) -> None:
    # TritonBench's scripts compare the file's stdout, empty on both sides here; kforge needs the wrapper's
    # inputs, so it calls the test function the block defines, as pytest would, and the row says so.
    gold = tmp_path / "checkout" / "data" / "TritonBench_G_v1"
    gold.mkdir(parents=True)
    test_block = SCALE_INTO_TEST.replace("result_gold = test_scale_into()\n", "")
    (gold / "scale_into.py").write_text(SCALE_INTO + SEPARATOR + "\n" + test_block)
    code, report, err = tritonbench("--tritonbench", str(tmp_path / "checkout"), "--channel", "G")
    assert code == 0, err
    assert report is not None
    (item,) = report["items"]
    assert item["call"] and item["exec"]
    assert item["verdict"]["outcome"] == "accepted", item["verdict"]["summary"]
    assert any("defines test_scale_into and never calls it" in note for note in item["notes"]), item["notes"]


def test_model_answers_to_an_in_place_gold_are_judged_on_the_argument_it_writes(tmp_path: Path) -> None:
    checkout = own_checkout(tmp_path / "checkout")
    answers = tmp_path / "answers"
    answers.mkdir()
    # The answer also returns what it writes: the gold returned None, so only the written argument is an
    # output on both sides (not a tuple of two against one tensor).
    answer = SCALE_INTO.replace("* alpha", "* alpha * 1.5").replace(
        "BLOCK=128)", "BLOCK=128)\n    return out"
    )
    (answers / "scale_into.py").write_text(answer)
    code, report, err = tritonbench(
        "--tritonbench", str(checkout), "--channel", "G", "--samples", str(answers)
    )
    assert code == 0, err
    assert report is not None
    (wrong,) = report["items"]
    assert wrong["call"] and not wrong["exec"]
    assert wrong["verdict"]["failed_stage"] == "correctness", wrong["verdict"]["summary"]
    assert "output 0" in wrong["verdict"]["summary"]  # the written argument, compared like an output


def test_an_answer_right_on_the_captured_call_but_wrong_on_another_test_case_is_rejected(
    tmp_path: Path,
) -> None:
    # The verdict's trials use the test block's largest call (n=1000); the answer is wrong only at the
    # other one (n=10), which the item's own test block runs: not accepted, and the verdict says why.
    checkout = own_checkout(tmp_path / "checkout")
    answers = tmp_path / "answers"
    answers.mkdir()
    wrong_when_small = SCALE_INTO.replace(
        "    n = x.numel()\n", "    n = x.numel()\n    alpha = alpha * 2 if n == 10 else alpha\n"
    )
    assert wrong_when_small != SCALE_INTO
    (answers / "scale_into.py").write_text(wrong_when_small)
    code, report, err = tritonbench(
        "--tritonbench", str(checkout), "--channel", "G", "--samples", str(answers)
    )
    assert code == 0, err
    assert report is not None
    (row,) = report["items"]
    assert row["call"] and not row["exec"], row
    verdict = row["verdict"]
    assert verdict["outcome"] == "rejected" and verdict["failed_stage"] == "test-block", verdict["summary"]
    assert "its values differ from the gold's: values['result_gold']['test_case_0']" in verdict["summary"]
    assert report["kforge"]["accepted_rate"] == 0


def test_an_answer_that_writes_what_the_gold_leaves_undefined_is_execution_accurate(tmp_path: Path) -> None:
    # The gold's test block returns the whole padded output, padding included (as a real gold's
    # `torch.empty` output with a zero-length case does); a right answer that zero-fills the padding
    # differs from the gold only where the gold's values are undefined.
    gold = tmp_path / "checkout" / "data" / "TritonBench_G_v1"
    gold.mkdir(parents=True)
    (gold / "pad_rows.py").write_text(PAD_ROWS + SEPARATOR + "\n" + PAD_ROWS_TEST.replace("[:, :40]", ""))
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "pad_rows.py").write_text(PAD_ROWS.replace("out = torch.empty(", "out = torch.zeros("))
    code, report, err = tritonbench(
        "--tritonbench", str(tmp_path / "checkout"), "--channel", "G", "--samples", str(answers)
    )
    assert code == 0, err
    assert report is not None
    (row,) = report["items"]
    assert row["call"] and row["exec"], row
    assert any("144 element(s) the gold's test block leaves undefined" in note for note in row["notes"]), row[
        "notes"
    ]
    assert row["verdict"]["outcome"] == "accepted", row["verdict"]["summary"]


# A gold whose test block reads memory it never wrote, as real ones do (an index buffer made with
# torch.empty and never filled): under kforge's poisoned allocations the buffer reads INT32_MAX and the
# test block's own check fails; left as the allocator gives it (64 MiB: fresh zero pages) it passes.
GATHER_ROWS = SCALE_INTO.replace("scale_into", "gather_rows_scaled")

GATHER_ROWS_TEST = """DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_gather_rows_scaled():
    torch.manual_seed(0)
    first = torch.empty(1 << 24, dtype=torch.int32, device=DEVICE)[:4]  # never written
    assert int(first.max()) < 1000, "row index out of range"
    x = torch.randn(1000, device=DEVICE)
    out = torch.empty_like(x)
    gather_rows_scaled(x, out, 0.5)
    return {"test_case_1": out}


result_gold = test_gather_rows_scaled()
"""


def test_a_gold_whose_test_block_reads_unwritten_memory_runs_unpoisoned_and_says_so(tmp_path: Path) -> None:
    gold = tmp_path / "checkout" / "data" / "TritonBench_G_v1"
    gold.mkdir(parents=True)
    (gold / "gather_rows_scaled.py").write_text(GATHER_ROWS + SEPARATOR + "\n" + GATHER_ROWS_TEST)
    code, report, err = tritonbench("--tritonbench", str(tmp_path / "checkout"), "--channel", "G")
    assert code == 0, err
    assert report is not None
    (row,) = report["items"]
    assert row["call"] and row["exec"], row
    (note,) = row["notes"]
    assert "reads memory it never wrote" in note and "row index out of range" in note, note
    assert row["verdict"]["outcome"] == "accepted", row["verdict"]["summary"]


def test_the_programs_run_in_warm_processes_and_give_what_fresh_ones_give() -> None:
    args = (
        "--tritonbench",
        str(CHECKOUT),
        "--channel",
        "G",
        "--samples",
        str(CHECKOUT / "predictions_G.jsonl"),
        "--items",
        "vector_scale_add,rms_norm_rows",
    )
    code, warm, warm_err = tritonbench(*args, "-j", "2")
    assert code == 0, warm_err
    code, fresh, err = tritonbench(*args, "-j", "2", "--no-zygote")
    assert code == 0, err
    assert warm is not None and fresh is not None

    # Per item the gold's run; per answer its sandboxed call, and the comparison of its values when it ran
    # (the crashing rms_norm_rows answer has none). Counted from the rows, so a failure shows which ran.
    def programs(run: dict) -> int:
        return 2 + sum(1 + ("compare" in row["seconds"]) for row in run["items"])

    assert programs(warm) == programs(fresh) == 5, (warm["items"], fresh["items"])
    warm_counts = (warm["run"]["programs_forked"], warm["run"]["programs_started_fresh"])
    assert warm_counts == (5, 0), (warm["run"], warm_err)
    assert (fresh["run"]["programs_forked"], fresh["run"]["programs_started_fresh"]) == (0, 5), fresh["run"]
    summary = {
        name: (row["call"], row["exec"], row["verdict"]["outcome"], row["verdict"]["failed_stage"])
        for name, row in rows(warm).items()
    }
    assert summary == {
        name: (row["call"], row["exec"], row["verdict"]["outcome"], row["verdict"]["failed_stage"])
        for name, row in rows(fresh).items()
    }
    for row in warm["items"]:
        assert {"gold", "call", "verdict"} <= set(row["seconds"]), row["seconds"]


# Golds whose wrappers take what real TritonBench files pass: an autograd Function called through
# `.apply`, a keyword-only output argument, and dtype and device arguments (torch's and Triton's).
SHARED_KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def _scaled_copy_kernel(x_ptr, out_ptr, n, scale, COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(COMPUTE)
    tl.store(out_ptr + offsets, x * scale, mask=mask)
"""


def gold_file(wrapper: str, test_body: str) -> str:
    """SHARED_KERNEL, the wrapper, and a test block whose `test_gold()` runs `test_body` on DEVICE."""
    test = textwrap.indent(textwrap.dedent(test_body).strip(), "    ")
    return (
        f"{SHARED_KERNEL}\n{textwrap.dedent(wrapper)}{SEPARATOR}\n"
        f'DEVICE = "cuda" if torch.cuda.is_available() else "cpu"\n\n\ndef test_gold():\n{test}\n\n\n'
        "result_gold = test_gold()\n"
    )


APPLY_GOLD = gold_file(
    """
    class ScaledCopy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale=2.0):
            out = torch.empty_like(x)
            grid = (triton.cdiv(x.numel(), 128),)
            _scaled_copy_kernel[grid](x, out, x.numel(), scale, COMPUTE=tl.float32, BLOCK=128)
            return out

        @staticmethod
        def backward(ctx, grad):
            return grad * 2.0, None
    """,
    """
    x = torch.randn(700, device=DEVICE)
    return {"test_case_1": ScaledCopy.apply(x), "test_case_2": ScaledCopy.apply(x, 0.5)}
    """,
)

KEYWORD_ONLY_GOLD = gold_file(
    """
    def scaled_into(x, /, *, out, scale=3.0):
        grid = (triton.cdiv(x.numel(), 128),)
        _scaled_copy_kernel[grid](x, out, x.numel(), scale, COMPUTE=tl.float32, BLOCK=128)
        return out
    """,
    """
    x = torch.randn(900, device=DEVICE)
    out = torch.empty_like(x)
    scaled_into(x, out=out)
    return {"test_case_1": out}
    """,
)

DTYPE_GOLD = gold_file(
    """
    def scaled_cast(x, out_dtype, device, compute=tl.float32):
        out = torch.empty(x.shape, dtype=out_dtype, device=device)
        grid = (triton.cdiv(x.numel(), 128),)
        _scaled_copy_kernel[grid](x, out, x.numel(), 1.5, COMPUTE=compute, BLOCK=128)
        return out
    """,
    """
    x = torch.randn(600, device=DEVICE)
    return {"test_case_1": scaled_cast(x, torch.float16, torch.device(DEVICE), compute=tl.float32)}
    """,
)


def test_golds_calling_apply_keyword_only_and_taking_dtypes_and_devices_are_accepted(tmp_path: Path) -> None:
    gold = tmp_path / "checkout" / "data" / "TritonBench_G_v1"
    gold.mkdir(parents=True)
    for name, text in {
        "scaled_copy": APPLY_GOLD,
        "scaled_into": KEYWORD_ONLY_GOLD,
        "scaled_cast": DTYPE_GOLD,
    }.items():
        (gold / f"{name}.py").write_text(text)
    code, report, err = tritonbench("--tritonbench", str(tmp_path / "checkout"), "--channel", "G")
    assert code == 0, err
    assert report is not None
    items = rows(report)
    assert items["scaled_copy"]["entry"] == "ScaledCopy.apply"
    assert items["scaled_into"]["entry"] == "scaled_into"
    assert items["scaled_into"]["writes"] == [1] and items["scaled_into"]["writes_inferred"]
    assert items["scaled_cast"]["entry"] == "scaled_cast"
    for name, item in items.items():
        assert item["verdict"]["outcome"] == "accepted", (name, item["verdict"]["summary"])


# Golds whose wrappers take objects, as real TritonBench files do: a torch.nn.LayerNorm they read weights
# and eps from, a module class of the file, and a configuration object of the file whose kwargs become
# launch options.
LAYERNORM_WRAPPER = """
@triton.jit
def _layernorm_rows_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, eps, AFFINE: tl.constexpr,
                           BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    diff = tl.where(mask, x - mean, 0.0)
    y = diff / tl.sqrt(tl.sum(diff * diff, axis=0) / n_cols + eps)
    if AFFINE:
        y = y * tl.load(w_ptr + cols, mask=mask) + tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, y, mask=mask)


def module_layernorm(layernorm, x):
    assert layernorm.elementwise_affine is True
    eps = layernorm.variance_epsilon if hasattr(layernorm, "variance_epsilon") else layernorm.eps
    out = torch.empty_like(x)
    block = triton.next_power_of_2(x.shape[1])
    _layernorm_rows_kernel[(x.shape[0],)](
        x, layernorm.weight, layernorm.bias, out, x.shape[1], eps, AFFINE={affine}, BLOCK=block
    )
    return out
"""

LAYERNORM_TEST = """
layernorm = torch.nn.LayerNorm(48, eps=1e-5).to(DEVICE)
x = torch.randn(6, 48, device=DEVICE)
return {"test_case_1": module_layernorm(layernorm, x)}
"""

CONFIG_GOLD = gold_file(
    """
    @triton.jit
    def _weighted_copy_kernel(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        weight = tl.load(w_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * weight, mask=mask)


    class LaunchConfig:
        def __init__(self, num_warps=4, **kwargs):
            self.num_warps = num_warps
            self.kwargs = kwargs


    class Scale(torch.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(n))


    def configured_scale(scale, x, config):
        out = torch.empty_like(x)
        grid = (triton.cdiv(x.numel(), config.kwargs["BLOCK"]),)
        _weighted_copy_kernel[grid](
            x, scale.weight, out, x.numel(), num_warps=config.num_warps, **config.kwargs
        )
        return out
    """,
    """
    x = torch.randn(300, device=DEVICE)
    return {"test_case_1": configured_scale(Scale(300).to(DEVICE), x, LaunchConfig(num_warps=2, BLOCK=64))}
    """,
)


def test_golds_taking_modules_and_config_objects_are_accepted_and_module_weights_are_not_left_at_one(
    tmp_path: Path,
) -> None:
    checkout = tmp_path / "checkout"
    gold = checkout / "data" / "TritonBench_G_v1"
    gold.mkdir(parents=True)
    (gold / "module_layernorm.py").write_text(
        gold_file(LAYERNORM_WRAPPER.format(affine=True), LAYERNORM_TEST)
    )
    (gold / "configured_scale.py").write_text(CONFIG_GOLD)
    code, report, err = tritonbench("--tritonbench", str(checkout), "--channel", "G")
    assert code == 0, err
    assert report is not None
    items = rows(report)
    assert items["module_layernorm"]["entry"] == "module_layernorm"
    assert items["configured_scale"]["entry"] == "configured_scale"
    for name, item in items.items():
        assert item["verdict"]["outcome"] == "accepted", (name, item["verdict"]["summary"])
    # An answer that skips the affine step is exact on the test block's fresh LayerNorm (weight 1, bias
    # 0); kforge draws the module's parameters around their captured value, so it is rejected.
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "module_layernorm.py").write_text(SHARED_KERNEL + LAYERNORM_WRAPPER.format(affine=False))
    code, report, err = tritonbench(
        "--tritonbench", str(checkout), "--channel", "G", "--samples", str(answers)
    )
    assert report is not None, err
    (item,) = report["items"]
    assert item["call"] and item["exec"], "TritonBench's own check sees the fresh module's output"
    assert item["verdict"]["failed_stage"] == "correctness", item["verdict"]["summary"]
