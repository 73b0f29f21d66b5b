"""GPU sample timing shared by the judge (reference) and the candidate worker (candidate).

One sample (docs/verdict.md, "Performance"):
 1. untimed, the caller's before_sample (new input values copied into the timing inputs);
 2. the L2 flush: a read of max(2 x L2, 128 MiB), through a window that moves by FLUSH_STRIDE from one
    sample to the next over FLUSH_WINDOWS places (a write would leave dirty lines for the call to write
    back; KFORGE_TIMING_FLUSH=write does, for comparisons);
 3. a device sleep (torch.cuda._sleep) that keeps the stream busy for 3x the call's recent host enqueue
    time (at least 20 µs; past 50 ms, 1.5x; at most 200 ms), so that the host has queued the whole call
    before the GPU reaches the start event;
 4. start event, the call, end event (two events back to back on a stream read about 1.3 µs apart on an
    H100: every sample holds that much besides the call, on both sides alike);
 5. the host waits until the GPU has passed the end event, and only then runs the caller's after_sample
    and queues the next sample's work.
The events therefore measure the call's device execution with a cold L2: host launch overhead is not
in them, in either worker, whatever the process's instrumentation costs on the host (the launch
recorder, CUPTI). Measured on the H100 (issue 31): the flush-only method counted host launch gaps
whenever the host was slower than the flush, 4.5 µs of device work read as 30-80 µs. Step 5, measured
on the H200 (issue 31, docs/benchmarks.md): commands that reach the GPU while a 4 µs call runs (the
next sample's copies, flush and sleep) lengthen it by 0.1-0.5 µs, by an amount that depends on how fast
the host of each side queues them; with the wait, a call reads the same in every process and slot.
The wall time of synchronised back-to-back calls is measured too (wall_per_call), for information.
Everything runs on the worker's current stream, which timing_stream.py chose when the device was set up.
Statistics and stopping live in the C++ supervisor.

Everything kforge does to tensors here (flush, value copies, output checks) runs with Python dispatch
and torch-function handling disabled (dispatch_guard.kforge_owned), so a mode the candidate left active sees
none of it. The timing functions are bound when this module is imported, which the candidate worker
does before it imports the candidate: a candidate that later replaces them changes nothing that is
measured, and replaced_timing_functions() names what it replaced, so the verdict can reject it.
"""

from __future__ import annotations

import gc
import math
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

from kforge.worker.dispatch_guard import kforge_owned

MIN_FLUSH_BYTES = 128 * 1024 * 1024
FLUSH_WINDOWS = 4
FLUSH_STRIDE = 32 * 1024 * 1024
HOST_MARGIN = 3.0  # the sleep lasts this many times the call's recent host enqueue time
MIN_SLEEP_US = 20.0
LONG_SLEEP_US = 50_000.0  # past this the margin is LONG_HOST_MARGIN: host jitter is relative by then
LONG_HOST_MARGIN = 1.5
# Past this the host is queue-bound, not slow: a call of more launches than CUDA's launch queue holds
# (about a thousand) blocks the host until the sleep ends, so its observed enqueue time follows the sleep
# up to here; 200 ms fills the queue at 190 µs a launch. A longer host enqueue has its gaps timed (reported).
MAX_SLEEP_US = 200_000.0
HOST_WINDOW = 32  # host enqueue times the sleep is sized from
HOST_PERCENTILE = 0.9
CALIBRATION_CYCLES = 1_000_000  # about 0.5 ms of spinning at 2 GHz
CALIBRATION_ROUNDS = 5

_EVENT = torch.cuda.Event
_RECORD = torch.cuda.Event.record
_ELAPSED_TIME = torch.cuda.Event.elapsed_time
_EVENT_SYNCHRONIZE = torch.cuda.Event.synchronize
_SYNCHRONIZE = torch.cuda.synchronize
_CURRENT_STREAM = torch.cuda.current_stream
_SLEEP = torch.cuda._sleep
_SUM = torch.sum
_ZERO = torch.Tensor.zero_
# KFORGE_TIMING_FLUSH=write flushes by writing, as kforge did before session 16 and as KernelBench and
# do_bench do: for diagnosis and A/B measurements only (docs/verdict.md, "What one timed call is").
FLUSH_VARIABLE = "KFORGE_TIMING_FLUSH"
FLUSH_KINDS = ("read", "write")
_PERF_COUNTER = time.perf_counter

# (owner, attribute) pairs whose value at import is the honest one.
_WATCHED: tuple[tuple[Any, str], ...] = (
    (torch.cuda, "Event"),
    (torch.cuda, "Stream"),
    (torch.cuda, "synchronize"),
    (torch.cuda, "current_stream"),
    (torch.cuda, "set_stream"),
    (torch.cuda, "stream"),
    (torch.cuda, "_sleep"),
    (torch.cuda.Event, "record"),
    (torch.cuda.Event, "elapsed_time"),
    (torch.cuda.Event, "synchronize"),
    (torch.cuda.Event, "query"),
    (torch.cuda.Event, "wait"),
    (torch.cuda.Event, "__init__"),
    (torch.cuda.Event, "__new__"),
    (torch._C, "_cuda_synchronize"),
    (torch._C, "_cuda_getCurrentStream"),
    (torch._C, "_cuda_sleep"),
    (torch._C, "_DisableTorchDispatch"),
    (torch._C, "DisableTorchFunction"),
    (torch.Tensor, "copy_"),
    (torch.Tensor, "zero_"),
    (torch.Tensor, "fill_"),
    (torch.Tensor, "index_select"),
    (time, "perf_counter"),
)
_MISSING = object()
_ORIGINALS = tuple(vars(owner).get(name, _MISSING) for owner, name in _WATCHED)


def replaced_timing_functions() -> list[str]:
    """Timing functions that differ from their values at import: the candidate patched them."""
    replaced = []
    for (owner, name), original in zip(_WATCHED, _ORIGINALS, strict=True):
        if vars(owner).get(name, _MISSING) is not original:
            replaced.append(f"{getattr(owner, '__name__', owner)}.{name}")
    return replaced


@contextmanager
def gc_paused() -> Iterator[None]:
    """No garbage collection pass inside a timing loop (a pause there delays the host, not the GPU)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def cycles_per_us(cycles: int, elapsed_ms: list[float]) -> float:
    """The sleep kernel's spin rate from calibration runs: the fastest one seen, so that a sleep sized
    with it never ends sooner than asked when the clock rises later."""
    rates = [cycles / (ms * 1000.0) for ms in elapsed_ms if ms > 0 and math.isfinite(ms)]
    if not rates:
        raise ValueError(f"no usable calibration time among {elapsed_ms!r}: expected positive milliseconds")
    return max(rates)


def percentile(values: list[float], fraction: float) -> float:
    """The value at the given fraction of the sorted values (nearest rank, no interpolation)."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))
    return ordered[rank]


def sleep_us_for(host_us: list[float]) -> float:
    """How long the device sleeps before a sample: HOST_MARGIN x the recent host enqueue time (its
    90th percentile), within [MIN_SLEEP_US, MAX_SLEEP_US]; a call whose host enqueue takes more than
    LONG_SLEEP_US / HOST_MARGIN (thousands of launches: an unrolled recurrent network) gets
    LONG_HOST_MARGIN x, at least LONG_SLEEP_US, so that the host fills the launch queue before the call
    starts (KernelBench level 3's 34_VanillaRNNHidden, 1,023 launches: with a flat 50 ms cap its 12 ms
    of device time read 20 ms with 30% noise, with longer sleeps 11.84-11.89 ms, H200)."""
    if not host_us:
        return MIN_SLEEP_US
    host = percentile(host_us, HOST_PERCENTILE)
    wanted = min(HOST_MARGIN * host, max(LONG_SLEEP_US, LONG_HOST_MARGIN * host))
    return min(MAX_SLEEP_US, max(MIN_SLEEP_US, wanted))


@dataclass
class Pacing:
    """The host enqueue times of one timed callable, which size its sleeps."""

    host_us: deque[float] = field(default_factory=lambda: deque(maxlen=HOST_WINDOW))

    def observe(self, host_us: float) -> None:
        self.host_us.append(host_us)

    def sleep_us(self) -> float:
        return sleep_us_for(list(self.host_us))


@dataclass(frozen=True)
class WarmUpPolicy:
    """Warm-up runs full samples in chunks until at least min_calls calls and min_ms of wall time have
    passed and two consecutive chunk medians agree within tolerance (Triton JIT and autotuning, the
    allocator and the GPU clock have settled), or until max_ms."""

    min_calls: int = 10
    min_ms: float = 30.0
    max_ms: float = 500.0
    tolerance: float = 0.03
    chunk_ms: float = 10.0  # a chunk lasts about this long
    max_chunk: int = 50

    @staticmethod
    def from_request(value: Any) -> WarmUpPolicy | None:
        """The request's "warmup": an object of these fields, or absent/false for none."""
        if not value:
            return None
        if not isinstance(value, dict):
            return WarmUpPolicy()
        known = {name: value[name] for name in WarmUpPolicy.__dataclass_fields__ if name in value}
        return WarmUpPolicy(**known)

    def chunk_size(self, sample_ms: float) -> int:
        if sample_ms <= 0 or not math.isfinite(sample_ms):
            return self.max_chunk
        return max(2, min(self.max_chunk, round(self.chunk_ms / sample_ms)))

    def settled(self, medians: list[float], calls: int, elapsed_ms: float) -> bool:
        if elapsed_ms >= self.max_ms:
            return True
        if calls < self.min_calls or elapsed_ms < self.min_ms or len(medians) < 2:
            return False
        previous, last = medians[-2], medians[-1]
        return abs(last - previous) <= self.tolerance * max(previous, last)


@dataclass
class SampleBatch:
    samples_ms: list[float]
    host_exposed: int  # samples whose host enqueue outlasted the sleep (host gaps may be in the events)
    sample_cost_ms: float  # wall time of the loop per sample (flush, sleep, call, checks)
    sleep_us: float  # median sleep


@dataclass
class WallBatch:
    wall_ms_per_call: float  # synchronised back-to-back calls: wall time / calls
    host_ms_per_call: float  # the host's time to enqueue them / calls


@dataclass
class WarmUp:
    calls: int
    elapsed_ms: float
    chunk_medians_ms: list[float]
    settled: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "elapsed_ms": self.elapsed_ms,
            "chunk_medians_ms": self.chunk_medians_ms,
            "settled": self.settled,
        }


class DeviceClock(Protocol):
    """What a timing loop needs from the device."""

    def flush(self) -> None: ...
    def calibrate(self) -> None: ...
    def sleep(self, microseconds: float) -> None: ...
    def event(self) -> Any: ...
    def record(self, event: Any) -> None: ...
    def wait(self, event: Any) -> None: ...
    def elapsed_ms(self, start: Any, end: Any) -> float: ...
    def synchronize(self) -> None: ...


def forget_autotuned_configs() -> int:
    """Empties every Triton autotuner's in-memory choices (its compiled kernels stay); the number emptied."""
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:  # pragma: no cover - Triton is always there in a worker
        return 0
    emptied = 0
    for found in gc.get_objects():
        if issubclass(type(found), Autotuner) and found.cache:  # type(): no __class__ property is run
            found.cache.clear()
            emptied += 1
    return emptied


def flush_kind() -> str:
    """How the L2 is flushed before each sample: "read" (the default) or what KFORGE_TIMING_FLUSH says."""
    kind = os.environ.get(FLUSH_VARIABLE, "read")
    if kind not in FLUSH_KINDS:
        raise ValueError(f"{FLUSH_VARIABLE} must be one of {', '.join(FLUSH_KINDS)}, not {kind!r}")
    return kind


class CudaClock:
    """CUDA events, the L2 flush buffer and the calibrated sleep of one device, all on its current stream."""

    def __init__(self, device: torch.device) -> None:
        properties = torch.cuda.get_device_properties(device)
        flush_bytes = max(MIN_FLUSH_BYTES, 2 * int(getattr(properties, "L2_cache_size", 0)))
        self._device = device
        with kforge_owned():
            whole = flush_bytes + (FLUSH_WINDOWS - 1) * FLUSH_STRIDE
            buffer = torch.empty(whole, dtype=torch.uint8, device=device)
            _ZERO(buffer)  # written once, so the read flush never reads uninitialized memory
            self._sink = torch.empty((), dtype=torch.int64, device=device)
        starts = [i * FLUSH_STRIDE for i in range(FLUSH_WINDOWS)]
        self._windows = [buffer[start : start + flush_bytes].view(torch.int32) for start in starts]
        self._window = 0
        self._writes = flush_kind() == "write"
        self.cycles_per_us = 0.0
        self.calibrate()

    def calibrate(self) -> None:
        """Measures the sleep kernel's spin rate; keeps the fastest seen (the clock may have been low while
        the GPU was idle, and a sleep sized with a slow rate would end too soon at full clock)."""
        elapsed = []
        for _ in range(CALIBRATION_ROUNDS):
            start, end = self.event(), self.event()
            self.record(start)
            _SLEEP(CALIBRATION_CYCLES)
            self.record(end)
            self.synchronize()
            elapsed.append(self.elapsed_ms(start, end))
        self.cycles_per_us = max(self.cycles_per_us, cycles_per_us(CALIBRATION_CYCLES, elapsed))

    def flush(self) -> None:
        """Reads the next window (a sum into a scalar): L2 ends full of clean lines of the flush buffer, so
        the call pays no write-back of a flush's dirty lines (docs/verdict.md, "What one timed call is").
        Writes it instead under KFORGE_TIMING_FLUSH=write."""
        self._window = (self._window + 1) % len(self._windows)
        with kforge_owned():
            if self._writes:
                _ZERO(self._windows[self._window])
            else:
                _SUM(self._windows[self._window], 0, out=self._sink)

    def sleep(self, microseconds: float) -> None:
        _SLEEP(max(1, int(microseconds * self.cycles_per_us)))

    def event(self) -> Any:
        return _EVENT(enable_timing=True)

    def record(self, event: Any) -> None:
        _RECORD(event, _CURRENT_STREAM(self._device))  # the stream the flush, the sleep and the call use

    def wait(self, event: Any) -> None:
        """The host blocks until the GPU has passed the event."""
        _EVENT_SYNCHRONIZE(event)

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return float(_ELAPSED_TIME(start, end))

    def synchronize(self) -> None:
        _SYNCHRONIZE(self._device)


class HostClock:
    """The host's clock in place of the device's, for exercising the timing loop without a GPU (tests).
    kforge never reports a CPU timing."""

    def flush(self) -> None:
        pass

    def calibrate(self) -> None:
        pass

    def sleep(self, microseconds: float) -> None:
        pass

    def event(self) -> list[float]:
        return [0.0]

    def record(self, event: list[float]) -> None:
        event[0] = _PERF_COUNTER()

    def wait(self, event: list[float]) -> None:
        pass

    def elapsed_ms(self, start: list[float], end: list[float]) -> float:
        return (end[0] - start[0]) * 1000.0

    def synchronize(self) -> None:
        pass


Hook = Callable[[int], None]


class SampleTimer:
    """Timing loops on one device's clock; reused for every request of a worker."""

    def __init__(self, clock: DeviceClock) -> None:
        self.clock = clock

    @staticmethod
    def for_device(device: torch.device) -> SampleTimer:
        if device.type != "cuda":
            raise ValueError(f"timing needs a CUDA device, not {device}")
        return SampleTimer(CudaClock(device))

    def forget_autotuned(self) -> None:
        """Every Triton autotuner of the process chooses again at its next call (on a GPU only)."""
        if isinstance(self.clock, CudaClock):
            forget_autotuned_configs()

    def first_calls(self, call: Callable[[], object], pacing: Pacing) -> int:
        """One call outside any event (Triton compiles and autotunes here, cuBLAS sets up the stream),
        then a second whose host time seeds the sleeps: the first one's would size every sleep of the
        window (on an H200, 1.1-1.4 s sleeps before each sample of a 12 ms call). Returns the calls made."""
        call()
        self.clock.synchronize()
        start = _PERF_COUNTER()
        call()
        pacing.observe((_PERF_COUNTER() - start) * 1e6)
        self.clock.synchronize()
        return 2

    def warm_up(
        self,
        call: Callable[[], object],
        pacing: Pacing,
        policy: WarmUpPolicy,
        before_sample: Hook | None = None,
        forget_autotune: bool = True,
    ) -> WarmUp:
        """Full samples, discarded, until policy.settled(): the first measured sample is a steady one.
        Triton's autotuners choose again first, in the first call, so both sides' choices are made under
        the same conditions as their timing (the candidate's first choice was made under the runtime
        trace: profiler and dispatch recording made every config host-bound, and a slow one could win).
        A process that warms two callables up forgets once, before both (forget_autotune=False here)."""
        if forget_autotune:
            self.forget_autotuned()
        calls = self.first_calls(call, pacing)
        medians: list[float] = []
        begin = _PERF_COUNTER()
        elapsed_ms = 0.0
        chunk = 2
        while True:
            batch = self.samples(call, chunk, pacing, before_sample)
            calls += chunk
            medians.append(percentile(batch.samples_ms, 0.5))
            elapsed_ms = (_PERF_COUNTER() - begin) * 1000.0
            if policy.settled(medians, calls, elapsed_ms):
                break
            chunk = policy.chunk_size(batch.sample_cost_ms)
        self.clock.calibrate()  # the clock has ramped up by now
        return WarmUp(calls, elapsed_ms, medians, elapsed_ms < policy.max_ms)

    def samples(
        self,
        call: Callable[[], object],
        count: int,
        pacing: Pacing,
        before_sample: Hook | None = None,
        after_sample: Hook | None = None,
    ) -> SampleBatch:
        """count cold-L2 device-time samples of call, in milliseconds. before_sample(j) runs untimed
        before sample j's flush, after_sample(j) untimed once the GPU has passed its end event."""
        clock = self.clock
        starts = [clock.event() for _ in range(count)]
        ends = [clock.event() for _ in range(count)]
        sleeps: list[float] = []
        exposed = 0
        with gc_paused():
            clock.synchronize()
            begin = _PERF_COUNTER()
            for j, (start, end) in enumerate(zip(starts, ends, strict=True)):
                if before_sample is not None:
                    before_sample(j)
                clock.flush()
                sleep_us = pacing.sleep_us()
                clock.sleep(sleep_us)
                enqueue = _PERF_COUNTER()
                clock.record(start)
                call()
                clock.record(end)
                host_us = (_PERF_COUNTER() - enqueue) * 1e6
                clock.wait(end)  # nothing else reaches the GPU while the timed call runs
                pacing.observe(host_us)
                exposed += host_us > sleep_us
                sleeps.append(sleep_us)
                if after_sample is not None:
                    after_sample(j)
            clock.synchronize()
            cost_ms = (_PERF_COUNTER() - begin) * 1000.0 / max(1, count)
        samples = [clock.elapsed_ms(start, end) for start, end in zip(starts, ends, strict=True)]
        return SampleBatch(samples, exposed, cost_ms, percentile(sleeps, 0.5) if sleeps else 0.0)

    def wall_per_call(self, call: Callable[[], object], count: int) -> WallBatch:
        """count back-to-back calls between two device-wide synchronisations (every stream): host
        launch overhead, warm L2 and any work on other streams included."""
        clock = self.clock
        with gc_paused():
            clock.synchronize()
            begin = _PERF_COUNTER()
            for _ in range(count):
                call()
            enqueued = _PERF_COUNTER()
            clock.synchronize()
            done = _PERF_COUNTER()
        calls = max(1, count)
        return WallBatch((done - begin) * 1000.0 / calls, (enqueued - begin) * 1000.0 / calls)
