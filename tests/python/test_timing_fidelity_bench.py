"""bench/timing_fidelity's plan and its pass/fail rules (the measurements themselves need a GPU)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "timing_fidelity"))

import points  # noqa: E402
import run_fidelity  # noqa: E402


def test_the_plan_covers_five_shapes_at_six_sizes_each() -> None:
    names = [shape.name for shape in points.SHAPES]
    assert names == ["elementwise", "row_sum", "softmax", "matmul", "three_launch"]
    for shape in points.SHAPES:
        assert len(shape.sizes) >= 6, shape.name
        assert shape.kernel_file.exists(), shape.kernel_file
        assert f"def {shape.name}(" in shape.kernel_file.read_text()


def test_a_point_spec_fills_in_scalars_and_keeps_tensor_sizes() -> None:
    shape = points.SHAPES[0]
    point_spec = points.spec(shape, {"N": 4096, "ITERS": 7})
    assert point_spec["sizes"] == {"N": 4096}
    assert point_spec["inputs"][-1] == {"value": 7}
    assert point_spec["inputs"][0] == {"shape": ["N"], "dtype": "float32"}
    source = points.get_inputs_source(point_spec)
    assert source == "def get_inputs():\n    return [torch.randn(4096).to(torch.float32), " + (
        "torch.randn(4096).to(torch.float32), 0.75, 7]\n"
    )


def _row(**changes: object) -> dict[str, object]:
    row = {
        "point": "softmax-2",
        "mode": "pytorch",
        "sizes": {"R": 4096},
        "candidate_us": 50.0,
        "reference_us": 50.1,
        "speedup": 1.002,
        "ci": [0.995, 1.01],
        "noise": 0.004,
        "converged": True,
        "standalone_us": 49.0,
        "wall_candidate_us": 60.0,
    }
    row.update(changes)
    return row


def test_a_point_inside_every_bound_passes() -> None:
    judged = run_fidelity.judge_point(_row())
    assert judged["passed"], judged["failures"]


def test_each_bound_fails_on_its_own() -> None:
    assert "outside 1.00" in run_fidelity.judge_point(_row(speedup=0.97, ci=[0.96, 1.001]))["failures"][0]
    assert "excludes 1.00" in run_fidelity.judge_point(_row(ci=[1.001, 1.01]))["failures"][0]
    assert "noise" in run_fidelity.judge_point(_row(noise=0.02))["failures"][0]
    assert "standalone" in run_fidelity.judge_point(_row(standalone_us=40.0))["failures"][0]


def test_small_points_are_exempt_from_the_noise_target_and_get_half_a_microsecond() -> None:
    small = _row(candidate_us=3.2, standalone_us=2.8, noise=0.03, converged=False)
    assert run_fidelity.judge_point(small)["passed"]
    assert not run_fidelity.judge_point(_row(candidate_us=3.2, standalone_us=2.6))["passed"]


def test_an_untimed_point_is_reported_as_failed_not_dropped() -> None:
    judged = run_fidelity.judge_point(
        {"point": "x-0", "mode": "kernel", "sizes": {}, "failed": "correctness"}
    )
    assert not judged["passed"] and judged["failures"] == ["not timed: correctness"]
    assert "FAIL: not timed" in run_fidelity.table([judged])


def test_first_run_repeat_check() -> None:
    def line(pid: str, copy: int, time_us: float, speedup: float) -> dict[str, object]:
        return {"point": pid, "copy": copy, "candidate_us": time_us, "speedup": speedup}

    steady = [[line(p, c, 40.0, 1.0) for p in run_fidelity.REPEAT_POINTS for c in (0, 1)] for _ in range(3)]
    assert all(check["passed"] for check in run_fidelity.repeat_checks(steady))
    slow_first = [list(run) for run in steady]
    slow_first[0] = [line(r["point"], r["copy"], 44.0 if r["copy"] == 0 else 40.0, 1.0) for r in steady[0]]
    checks = run_fidelity.repeat_checks(slow_first)
    assert not any(check["passed"] for check in checks)
    assert checks[0]["fresh_time_spread"] > 0.09 and checks[0]["first_vs_later_time"] > 0.09
