"""The timing loop's pure pieces and its checks of the timed calls, on the CPU.

Timing itself needs CUDA (bench/timing_fidelity measures it on a GPU). Here the loop runs on the host's
clock (timing.HostClock) so the parts that do not depend on the device are exercised for real: sleep
sizing and calibration math, warm-up stopping, the order of untimed and timed work in a sample, and the
judge's check of the timed calls (value sets rotated through the timing inputs, sampled elements of
every timed output, the last output of each set), with the judge and candidate workers in this process.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from kforge.worker import timing
from kforge.worker.candidate import CandidateWorker
from kforge.worker.correctness import Tolerance
from kforge.worker.judge import Judge
from kforge.worker.sampled_check import first_wrong_row, sampled_reference
from kforge.worker.timed_outputs import TimedOutputLog, input_attribute_problems
from kforge.worker.timing import FLUSH_VARIABLE, HostClock, Pacing, SampleTimer, WarmUpPolicy, flush_kind

# --- pure pieces -----------------------------------------------------------------------------------


def test_sleep_rate_is_the_fastest_calibration_run() -> None:
    # 1,000,000 cycles in 0.6 ms, 0.5 ms and 0.55 ms: 2,000 cycles per µs at the fastest clock
    assert timing.cycles_per_us(1_000_000, [0.6, 0.5, 0.55]) == pytest.approx(2000.0)
    assert timing.cycles_per_us(1_000_000, [0.0, float("nan"), 0.5]) == pytest.approx(2000.0)
    with pytest.raises(ValueError, match="no usable calibration"):
        timing.cycles_per_us(1_000_000, [0.0, -1.0])


def test_sleep_covers_three_times_the_recent_host_enqueue_time_within_bounds() -> None:
    assert timing.sleep_us_for([]) == timing.MIN_SLEEP_US
    assert timing.sleep_us_for([2.0, 3.0]) == timing.MIN_SLEEP_US  # a fast host still gets 20 µs
    window = [28.0] * 9 + [40.0]  # the 90th percentile of ten is the ninth value
    assert timing.sleep_us_for(window) == pytest.approx(3 * 28.0)
    window = [28.0] * 8 + [40.0, 41.0]
    assert timing.sleep_us_for(window) == pytest.approx(3 * 40.0)
    # A long host enqueue keeps a margin, not a triple: past 50 ms, 1.5x (continuous at the switch).
    assert timing.sleep_us_for([10_000.0]) == pytest.approx(30_000.0)
    assert timing.sleep_us_for([20_000.0]) == pytest.approx(timing.LONG_SLEEP_US)
    assert timing.sleep_us_for([60_000.0]) == pytest.approx(90_000.0)
    assert timing.sleep_us_for([60_000.0]) > 60_000.0  # still covers the host: no gap in the events
    assert timing.sleep_us_for([1e6]) == timing.MAX_SLEEP_US == 200_000.0


def test_pacing_forgets_old_host_times() -> None:
    pacing = Pacing()
    pacing.observe(10_000.0)  # a one-off stall (JIT, a page fault)
    for _ in range(timing.HOST_WINDOW):
        pacing.observe(30.0)
    assert pacing.sleep_us() == pytest.approx(90.0)


def test_percentile_is_nearest_rank() -> None:
    assert timing.percentile([5.0, 1.0, 3.0], 0.5) == 3.0
    assert timing.percentile([1.0, 2.0, 3.0, 4.0], 0.9) == 4.0
    assert timing.percentile([7.0], 0.0) == 7.0
    with pytest.raises(ValueError):
        timing.percentile([], 0.5)


def test_warm_up_stops_when_two_chunks_agree_after_the_minimums() -> None:
    policy = WarmUpPolicy(min_calls=10, min_ms=30.0, max_ms=500.0, tolerance=0.03)
    assert not policy.settled([1.0, 1.0], calls=5, elapsed_ms=100.0)  # too few calls
    assert not policy.settled([1.0, 1.0], calls=50, elapsed_ms=10.0)  # too early
    assert not policy.settled([1.0], calls=50, elapsed_ms=100.0)  # one chunk only
    assert not policy.settled([1.10, 1.0], calls=50, elapsed_ms=100.0)  # still moving (clock ramp)
    assert policy.settled([1.0, 1.02], calls=50, elapsed_ms=100.0)
    assert policy.settled([2.0, 1.0], calls=50, elapsed_ms=600.0)  # the time limit


def test_warm_up_chunks_last_about_ten_milliseconds() -> None:
    policy = WarmUpPolicy()
    assert policy.chunk_size(0.2) == 50  # small kernel: capped
    assert policy.chunk_size(1.0) == 10
    assert policy.chunk_size(100.0) == 2  # long kernel: at least two samples to take a median of
    assert policy.chunk_size(0.0) == policy.max_chunk


def test_warm_up_policy_from_a_request() -> None:
    assert WarmUpPolicy.from_request(None) is None
    assert WarmUpPolicy.from_request(0) is None
    assert WarmUpPolicy.from_request(True) == WarmUpPolicy()
    assert WarmUpPolicy.from_request({"min_calls": 3, "unknown": 1}) == WarmUpPolicy(min_calls=3)


# --- the loop on the host's clock ------------------------------------------------------------------


class RecordingClock(HostClock):
    """The host clock, noting every device-side step of the loop in order."""

    def __init__(self, steps: list[str]) -> None:
        self.steps = steps

    def flush(self) -> None:
        self.steps.append("flush")

    def sleep(self, microseconds: float) -> None:
        self.steps.append(f"sleep>={microseconds:.0f}")

    def record(self, event: list[float]) -> None:
        self.steps.append("event")
        super().record(event)

    def wait(self, event: list[float]) -> None:
        self.steps.append("wait")


def test_a_sample_is_values_flush_sleep_events_around_the_call_then_a_wait_for_the_end() -> None:
    # Nothing is queued while the timed call runs on the GPU: the host waits for the end event before the
    # check and the next sample's values (commands arriving mid-call moved a 4 µs call by 0.1-0.5 µs).
    steps: list[str] = []
    timer = SampleTimer(RecordingClock(steps))
    batch = timer.samples(
        lambda: steps.append("call"),
        2,
        Pacing(),
        before_sample=lambda j: steps.append(f"values{j}"),
        after_sample=lambda j: steps.append(f"check{j}"),
    )
    assert len(batch.samples_ms) == 2 and all(sample >= 0 for sample in batch.samples_ms)
    # The second sleep follows the first call's host time (on a loaded machine, more than the minimum).
    sleeps = [float(step.split(">=")[1]) for step in steps if step.startswith("sleep")]
    assert sleeps[0] == timing.MIN_SLEEP_US and sleeps[1] >= timing.MIN_SLEEP_US
    shape = ["sleep" if step.startswith("sleep") else step for step in steps]
    one = ["flush", "sleep", "event", "call", "event", "wait"]
    assert shape == ["values0", *one, "check0", "values1", *one, "check1"]


def test_a_slow_host_lengthens_the_next_sleeps_and_is_reported() -> None:
    steps: list[str] = []
    timer = SampleTimer(RecordingClock(steps))
    pacing = Pacing()

    def slow_call() -> None:
        end = timing._PERF_COUNTER() + 200e-6  # 200 µs on the host per call, more than 20 µs of sleep
        while timing._PERF_COUNTER() < end:
            pass

    batch = timer.samples(slow_call, 3, pacing)
    assert batch.host_exposed >= 1
    sleeps = [float(step.split(">=")[1]) for step in steps if step.startswith("sleep")]
    assert sleeps[0] == timing.MIN_SLEEP_US and sleeps[-1] >= 3 * 200.0


def test_warm_up_runs_until_settled_and_counts_its_calls() -> None:
    calls: list[int] = []
    timer = SampleTimer(HostClock())
    warm = timer.warm_up(
        lambda: calls.append(1), Pacing(), WarmUpPolicy(min_calls=10, min_ms=1.0, tolerance=10.0)
    )
    assert warm.calls == len(calls) and warm.calls >= 10 and warm.settled


def test_wall_per_call_counts_every_call() -> None:
    calls: list[int] = []
    wall = SampleTimer(HostClock()).wall_per_call(lambda: calls.append(1), 7)
    assert len(calls) == 7 and wall.wall_ms_per_call >= wall.host_ms_per_call >= 0


def test_the_timing_functions_kforge_watches_are_untouched_after_import() -> None:
    assert timing.replaced_timing_functions() == []


# --- what the candidate worker keeps of timed calls --------------------------------------------------


def test_input_attributes_are_reported() -> None:
    x, y = torch.zeros(3), torch.zeros(3)
    assert input_attribute_problems([x, 2, y]) == []
    x.kf_cache = torch.ones(3)  # type: ignore[attr-defined]
    y.grad = torch.ones(3)
    problems = input_attribute_problems([x, 2, y])
    assert problems == ["input 0 has attribute(s) 'kf_cache'", "input 2 has a .grad"]


def test_timed_output_log_keeps_rows_and_the_last_output_per_set() -> None:
    log = TimedOutputLog()
    for value_set, keep in ((0, False), (1, True), (0, True)):
        log.record(torch.full((1000,), float(value_set)), value_set, keep)
    assert len(log.rows) == 3 and sorted(log.slots) == [0, 1]
    assert log.sampled_rows(0).shape == (3, 256)
    assert torch.equal(log.sampled_rows(0)[1], torch.ones(256))
    log.record((torch.zeros(1000),), 0, False)  # a tuple now, a tensor before
    assert log.problems == ["the timed calls returned outputs of changing number, shape, dtype or device"]


def test_sampled_rows_check_finds_the_first_wrong_call() -> None:
    refs = [torch.arange(10.0), torch.arange(10.0) * 2]
    positions = torch.tensor([0, 3, 9])
    expected = sampled_reference([refs[0], refs[1], refs[0]], positions, torch.Size([3, 3]))
    assert isinstance(expected, torch.Tensor)
    rows = expected.clone()
    tolerance = Tolerance(1e-4, 1e-4)
    assert first_wrong_row(rows, expected, tolerance) is None
    rows[2] = refs[1][positions]  # call 3 answered with set 1's output
    assert first_wrong_row(rows, expected, tolerance) == 2
    rows[2] = float("nan")
    assert first_wrong_row(rows, expected, tolerance) == 2
    assert "outside" in str(sampled_reference([refs[0]], torch.tensor([10]), torch.Size([1, 1])))
    assert "expected [2, 3]" in str(sampled_reference(refs, positions, torch.Size([1, 3])))


# --- judge and candidate, in this process ------------------------------------------------------------

PROBLEM = """
import torch
import torch.nn as nn

N = 4096


class Model(nn.Module):
    def forward(self, x, y, scale):
        return x * scale + y


def get_inputs():
    return [torch.randn(N), torch.randn(N), 0.5]


def get_init_inputs():
    return []
"""

HONEST = """
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y, scale):
        return x * scale + y
"""

# Computes once while the checks' flags are on, then serves that answer: the trials (flags on) pass.
FLAG_READER = """
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.answer = None

    def forward(self, x, y, scale):
        if torch.are_deterministic_algorithms_enabled() or self.answer is None:
            self.answer = x * scale + y
        return self.answer.clone()
"""

# Keeps its answer on the input tensor object.
ATTRIBUTE_CACHE = """
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y, scale):
        if not hasattr(x, "kf_answer"):
            x.kf_answer = x * scale + y
        return x.kf_answer.clone()
"""

# Counts calls on the same buffer and serves the last answer from the third call on.
POINTER_COUNTER = """
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = {}

    def forward(self, x, y, scale):
        key = x.data_ptr()
        count, answer = self.seen.get(key, (0, None))
        if count < 2 or answer is None:
            answer = x * scale + y
        self.seen[key] = (count + 1, answer)
        return answer.clone()
"""


def _judged_timing(tmp_path: Path, candidate_code: str, value_sets: int = 4) -> dict[str, Any]:
    """Loads the problem in a judge and the candidate in a candidate worker (both here, on the CPU, the
    host clock in place of CUDA events), runs two timing batches per side as the supervisor does, and
    returns the judge's check of the timed calls with the candidate's last time reply."""
    problem, candidate = tmp_path / "problem.py", tmp_path / "candidate.py"
    problem.write_text(textwrap.dedent(PROBLEM))
    candidate.write_text(textwrap.dedent(candidate_code))
    transfer = tmp_path / "transfer"
    transfer.mkdir()
    judge, worker = Judge(), CandidateWorker()
    judge.load({"device": "cpu", "problem_path": str(problem), "seed": 42})
    base = {"transfer_dir": str(transfer)}
    init = judge.export_init({**base, "evaluation": "e"})
    started = judge.start_trial({**base, "trial": "e:t", "seed": 100})
    seeds = list(range(101, 100 + value_sets))
    extra = judge.add_value_sets({**base, "trial": "e:t", "seeds": seeds, "max_bytes": 1 << 30})
    judge.state.timer = SampleTimer(HostClock())
    worker.state.prepared = True  # no launch recorder in the test process
    worker.load({**base, "device": "cpu", "candidate_path": str(candidate), "seed": 42, **init})
    worker.state.timer = SampleTimer(HostClock())
    generator = torch.Generator().manual_seed(7)
    orders: list[int] = []
    reply: dict[str, Any] = {}
    for batch, count in enumerate((5, 12)):
        sets = max(1, int(extra["count"]))
        order = [int(v) for v in torch.randint(sets, (count,), generator=generator)]
        request: dict[str, Any] = {"op": "time", "count": count, "value_order": order, "wall_calls": 2}
        if batch == 0:
            request.update(inputs=started["inputs"], value_sets=extra["value_sets"], warmup={"min_calls": 3})
        reply = worker.time(request)
        orders += [*order, order[-1]]  # the wall loop's last output is kept as one more row
        judge_reply = judge.time({"trial": "e:t", "count": count, "value_order": order, "wall_calls": 2})
        assert len(judge_reply["samples_ms"]) == count and judge_reply["wall_ms_per_call"] > 0
    kept = worker.timed_output({})
    if kept["problems"]:
        return {"passed": False, "failures": kept["problems"], "reply": reply}
    assert kept["row_count"] == len(orders)
    check = judge.check_timed({**base, "trial": "e:t", **kept, "order": orders, "last_set": orders[-1]})
    return {**check, "reply": reply, "sets": extra["count"]}


WEIGHT_VIEW = PROBLEM.replace(
    "class Model(nn.Module):\n    def forward(self, x, y, scale):\n        return x * scale + y",
    "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.weight = nn.Parameter(torch.ones(N))\n\n"
    "    def forward(self, x, y, scale):\n        return self.weight[: x.shape[0]]",
)


@pytest.mark.parametrize("problem_code", [PROBLEM, WEIGHT_VIEW], ids=["fresh-output", "weight-view"])
def test_the_judge_queues_the_candidates_untimed_work_between_samples(
    tmp_path: Path, problem_code: str
) -> None:
    # A 4 us kernel's device time moves by up to 0.35 us with the kernels queued before the flush, so
    # the judge poisons its previous output before each sample and gathers output elements after it,
    # as the candidate worker does with its own; never the reference's own weights.
    assert problem_code.count("self.weight") == (problem_code is WEIGHT_VIEW) * 2
    problem = tmp_path / "problem.py"
    problem.write_text(textwrap.dedent(problem_code))
    (tmp_path / "transfer").mkdir()
    base = {"transfer_dir": str(tmp_path / "transfer")}
    judge = Judge()
    judge.load({"device": "cpu", "problem_path": str(problem), "seed": 42})
    judge.export_init({**base, "evaluation": "e"})
    judge.start_trial({**base, "trial": "e:t", "seed": 100})
    judge.state.timer = SampleTimer(HostClock())
    recorded: list[int] = []
    record = TimedOutputLog.record

    def counted(self: TimedOutputLog, result: Any, value_set: int, keep_whole: bool) -> None:
        recorded.append(value_set)
        record(self, result, value_set, keep_whole)

    TimedOutputLog.record = counted  # type: ignore[method-assign]
    try:
        judge.time({"trial": "e:t", "count": 3, "value_order": [], "wall_calls": 0})
        earlier = judge.state.trials["e:t"].shadow.output  # type: ignore[union-attr]
        judge.time({"trial": "e:t", "count": 2, "value_order": [], "wall_calls": 0})
    finally:
        TimedOutputLog.record = record  # type: ignore[method-assign]
    assert recorded == [0] * 5
    if problem_code is WEIGHT_VIEW:
        weight = judge.state.model.weight  # type: ignore[union-attr]
        assert bool((weight == 1).all()), "a view of the reference's weights is never poisoned"
        return
    assert earlier is not judge.state.trials["e:t"].shadow.output  # type: ignore[union-attr]
    assert bool(torch.isnan(earlier).all()), "the previous output is poisoned before the next sample"


@pytest.fixture(params=["1", "3"], ids=["one-placement", "three-placements"])
def placements(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Both sides time on one placement of their inputs, or rotate among three (placements.py)."""
    monkeypatch.setenv("KFORGE_TIMING_PLACEMENTS", request.param)
    return int(request.param)


def test_an_honest_candidates_timed_calls_pass(tmp_path: Path, placements: int) -> None:
    result = _judged_timing(tmp_path, HONEST)
    assert result["sets"] == 4
    assert result["passed"], result["failures"]
    reply = result["reply"]
    assert reply["input_attributes"] == [] and reply["calls"] == 14 and len(reply["samples_ms"]) == 12


@pytest.mark.parametrize("code", [FLAG_READER, POINTER_COUNTER], ids=["flag-reader", "pointer-counter"])
def test_a_cached_answer_served_to_timed_calls_is_caught(tmp_path: Path, code: str, placements: int) -> None:
    result = _judged_timing(tmp_path, code)
    assert not result["passed"]
    assert any(
        "differs from the reference" in text or "last timed output" in text for text in result["failures"]
    )


def test_an_answer_kept_on_the_input_object_is_reported_and_caught(tmp_path: Path, placements: int) -> None:
    result = _judged_timing(tmp_path, ATTRIBUTE_CACHE)
    assert result["reply"]["input_attributes"] == ["input 0 has attribute(s) 'kf_answer'"]
    assert not result["passed"]


def test_without_a_second_value_set_the_timed_calls_are_still_checked(
    tmp_path: Path, placements: int
) -> None:
    result = _judged_timing(tmp_path, HONEST, value_sets=1)
    assert result["sets"] == 1 and result["passed"], result["failures"]


def test_the_flush_reads_unless_told_to_write(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FLUSH_VARIABLE, raising=False)
    assert flush_kind() == "read"
    monkeypatch.setenv(FLUSH_VARIABLE, "write")
    assert flush_kind() == "write"
    monkeypatch.setenv(FLUSH_VARIABLE, "zero")
    with pytest.raises(ValueError, match="KFORGE_TIMING_FLUSH must be one of read, write, not 'zero'"):
        flush_kind()


def test_the_flush_reads_the_next_window_and_leaves_it_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    # CudaClock.flush on CPU tensors (its constructor needs a GPU): a read leaves no dirty lines, so the
    # buffer keeps its bytes; KFORGE_TIMING_FLUSH=write zeroes the window instead, as before session 16.
    for kind in ("read", "write"):
        monkeypatch.setenv(FLUSH_VARIABLE, kind)
        clock = object.__new__(timing.CudaClock)
        buffer = torch.arange(64, dtype=torch.int32)
        clock._windows = [buffer[0:32], buffer[16:48], buffer[32:64]]
        clock._window = 0
        clock._sink = torch.empty((), dtype=torch.int64)
        clock._writes = timing.flush_kind() == "write"
        clock.flush()
        assert clock._window == 1  # the window moves on every flush
        if kind == "read":
            assert torch.equal(buffer, torch.arange(64, dtype=torch.int32))
            assert int(clock._sink) == sum(range(16, 48))
        else:
            assert buffer[16:48].eq(0).all() and buffer[:16].ne(0).sum() == 15
