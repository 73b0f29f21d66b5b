"""TF32 in the reference (kforge.worker.tf32_slack and the judge's tolerance): a float32 reference whose
answer moves when its convolutions run in full float32 gets that much more room for the candidate, and
nothing else does."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from kforge.worker import tf32_slack
from kforge.worker.correctness import Tolerance
from kforge.worker.judge import Judge


def test_the_slack_is_the_largest_finite_difference_of_float32_outputs_only() -> None:
    ref = torch.tensor([1.0, 2.0, float("nan"), 4.0])
    full = torch.tensor([1.0, 2.003, float("nan"), 3.999])
    half = torch.ones(3, dtype=torch.float16)
    slack = tf32_slack.output_slack([ref, half, ref, 7], [full, half * 2, ref[:2], 7])
    assert abs(slack[0] - 0.003) < 1e-6
    assert slack[1:] == [0.0, 0.0, 0.0]  # float16, another shape, a plain value


def test_the_tolerance_grows_to_cover_the_slack_and_never_shrinks() -> None:
    default = Tolerance(atol=1e-4, rtol=1e-4)
    assert tf32_slack.widened(default, 0.002) == Tolerance(atol=4 * 0.002, rtol=1e-4)
    assert tf32_slack.widened(default, 1e-7) == default


def test_tf32_is_off_inside_the_block_and_as_it_was_after() -> None:
    before = (torch.backends.cudnn.allow_tf32, torch.get_float32_matmul_precision())
    with tf32_slack.tf32_disabled():
        assert not tf32_slack.tf32_in_use()
    assert (torch.backends.cudnn.allow_tf32, torch.get_float32_matmul_precision()) == before


def test_the_judge_widens_only_outputs_with_slack_and_never_over_a_users_atol() -> None:
    judge = Judge()
    judge.state.tf32_slack = [0.01, 0.0]
    assert judge._tolerance(0, torch.float32, {})[0].atol == 0.04
    assert judge._tolerance(1, torch.float32, {})[0].atol == 1e-4
    assert judge._tolerance(0, torch.float32, {"atol": 1e-5})[0].atol == 1e-5
    assert judge._tolerance(5, torch.float32, {})[0].atol == 1e-4
    # The slack is reported only where it widened the tolerance.
    assert judge._tolerance(0, torch.float32, {})[1] == 0.01
    assert judge._tolerance(0, torch.float32, {"atol": 1e-5})[1] == 0.0
