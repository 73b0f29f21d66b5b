"""The reference's own autotuning (kforge.worker.autotune_room): a Triton reference whose configs add in
different orders gives an honest candidate that chose another of its configs that much room, and no
more. The kernel below sums rows in float16 lanes of BLOCK values: BLOCK = 16 and BLOCK = 1024 differ by
up to ~0.1 at sums near zero, beyond float16's atol = rtol = 1e-2 there (as TritonBench's int4_matmul,
whose SPLIT_K configs add atomically, differed between two processes on an H200)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import torch
from conftest import run_kforge

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from kforge.worker import autotune_room

# The reference's autotuner picks its first config deterministically (timing would pick either).
REFERENCE = """import itertools

import torch
import triton
import triton.language as tl

ROWS = 128
COLS = 2048
KFORGE_SMALL = {"ROWS": 128, "COLS": 2048}
_ORDER = itertools.count()


def _first_config_wins(kernel_call, quantiles=None):
    kernel_call()
    rank = float(next(_ORDER))
    return [rank, rank, rank]


@triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}), triton.Config({"BLOCK": 16})],
    key=["cols"],
    do_bench=_first_config_wins,
)
@triton.jit
def row_sum_fp16_kernel(x_ptr, out_ptr, rows, cols, ROWS_BLOCK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.arange(0, ROWS_BLOCK)[:, None]
    lanes = tl.zeros((ROWS_BLOCK, BLOCK), dtype=tl.float16)
    for start in range(0, cols, BLOCK):
        column = start + tl.arange(0, BLOCK)[None, :]
        inside = (row < rows) & (column < cols)
        lanes += tl.load(x_ptr + row * cols + column, mask=inside, other=0.0)
    total = tl.sum(lanes.to(tl.float32), axis=1)
    tl.store(out_ptr + tl.arange(0, ROWS_BLOCK), total.to(tl.float16), mask=tl.arange(0, ROWS_BLOCK) < rows)


def row_sum_fp16(x):
    out = torch.empty(x.shape[0], dtype=torch.float16, device=x.device)
    row_sum_fp16_kernel[(1,)](x, out, x.shape[0], x.shape[1], ROWS_BLOCK=triton.next_power_of_2(x.shape[0]))
    return out


def get_inputs():
    return [torch.rand(ROWS, COLS, dtype=torch.float16) * 2 - 1]
"""
AUTOTUNE = """@triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}), triton.Config({"BLOCK": 16})],
    key=["cols"],
    do_bench=_first_config_wins,
)
"""
LAUNCH = (
    "row_sum_fp16_kernel[(1,)](x, out, x.shape[0], x.shape[1], ROWS_BLOCK=triton.next_power_of_2(x.shape[0]))"
)


def candidate_with_block(block: int) -> str:
    """The reference's kernel without its autotuner, launched with one of the reference's configs."""
    assert AUTOTUNE in REFERENCE and LAUNCH in REFERENCE
    return REFERENCE.replace(AUTOTUNE, "").replace(LAUNCH, LAUNCH[:-1] + f", BLOCK={block})")


def judge(reference: Path, candidate: Path) -> dict[str, Any]:
    run = run_kforge(
        "eval",
        "--device",
        "cpu",
        "--no-store",
        "--json",
        "--timeout",
        "120",
        "--no-generalisation",
        "--kernel",
        str(reference),
        "--entry",
        "row_sum_fp16",
        "--candidate",
        str(candidate),
    )
    try:
        return json.loads(run.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"kforge printed no JSON (exit {run.returncode}):\n{run.stdout}\n{run.stderr}")


def test_spread_picks_cover_the_list_and_keep_its_ends() -> None:
    assert autotune_room.spread_picks(3) == [0, 1, 2]
    picks = autotune_room.spread_picks(36)
    assert picks[0] == 0 and picks[-1] == 35 and len(picks) == autotune_room.MAX_CONFIGS


def test_a_candidate_on_another_of_the_references_configs_is_accepted_with_that_room(tmp_path: Path) -> None:
    reference = tmp_path / "row_sum_fp16.py"
    reference.write_text(REFERENCE)
    other_config = tmp_path / "other_config.py"
    other_config.write_text(candidate_with_block(16))
    verdict = judge(reference, other_config)
    assert verdict["outcome"] == "accepted", verdict.get("reason")
    correctness = next(stage for stage in verdict["stages"] if stage["name"] == "correctness")
    rooms = [
        output["rounding_slack"]
        for trial in correctness["details"]["trials"]
        for output in trial["outputs"]
        if isinstance(output.get("rounding_slack"), dict)
    ]
    assert rooms, "the plain float16 tolerance failed somewhere, and the room decided"
    assert all(room["measured_against"] == "autotune configs" for room in rooms)
    assert all(0.0 < room["max_abs"] < 1.0 for room in rooms)


def test_the_room_is_no_larger_than_the_references_own_configs_give(tmp_path: Path) -> None:
    reference = tmp_path / "row_sum_fp16.py"
    reference.write_text(REFERENCE)
    # Another config, and 2 added: the configs differ by 0.1-0.25 here, so four times that stays below 2
    # whatever inputs the machine's input key draws.
    off = tmp_path / "off_by_two.py"
    total = "tl.sum(lanes.to(tl.float32), axis=1)"
    off.write_text(candidate_with_block(16).replace(total, f"{total} + 2.0"))
    verdict = judge(reference, off)
    assert verdict["outcome"] == "rejected" and verdict["failed_stage"] == "correctness"


def test_a_reference_without_autotuning_gives_no_room() -> None:
    assert autotune_room.measured([torch.ones(3)], lambda: [torch.ones(3)]) is None


def test_only_configs_the_autotuner_ran_without_failing_are_forced() -> None:
    timings = {"a": [1.0, 1.0, 1.0], "b": [float("inf")] * 3, "c": [2.0, 2.0, 2.0]}
    tuner = types.SimpleNamespace(configs=["a", "b", "c"], configs_timings=timings)
    assert autotune_room.tried_configs(tuner) == ["a", "c"]
    tuner.configs_timings = {}  # kept no timings: every config
    assert autotune_room.tried_configs(tuner) == ["a", "b", "c"]
