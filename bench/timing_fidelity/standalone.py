"""A clean standalone measurement of one kernel file's wrapper, in a fresh process that loads only torch,
triton and that file: the reference kforge's per-call times are compared with (bench/timing_fidelity).

Method (the one kforge uses, written again here independently): before each sample the L2 is flushed
(a read of max(2 x L2, 128 MiB), summed into a scalar, through one of 4 windows 32 MiB apart, in turn:
L2 is left holding clean lines, nothing for the call to write back), the call's inputs are
the next of up to 8 copies (extra copies within 128 MiB) and the outputs of its last 7 calls (within 128
MiB) are still held, so its memory moves from sample to sample as kforge's does (placements.py); and
the stream sleeps (torch.cuda._sleep, calibrated with events) for 3x the call's 90th-percentile host
enqueue time, at least 20 µs; then CUDA events bracket the call, and
the host waits for the end event before it queues the next sample (nothing reaches the GPU mid-call).
All of it runs on the fastest of 8 new streams (three timed rounds of 4 tiny launches queued behind a
sleep; lowest first quartile), as every kforge worker does (kforge/worker/timing_stream.py).
Samples follow a warm-up of at least 20 calls and 200 ms. Also triton.testing.do_bench (25 ms warm-up,
100 ms of repetitions, median) on the same call.

    python3 standalone.py --kernel kernels/softmax.py --entry softmax --points points.json --out out.json
points.json: [{"id": "softmax-0", "spec": {"sizes": {...}, "inputs": [...]}}, ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
import triton.testing


def _inputs(spec: dict[str, Any], device: torch.device) -> list[Any]:
    values: list[Any] = []
    for entry in spec["inputs"]:
        if "value" in entry:
            values.append(entry["value"])
        else:
            shape = [spec["sizes"][dim] for dim in entry["shape"]]
            values.append(torch.randn(shape, device=device).to(getattr(torch, entry["dtype"])))
    return values


class Blocked:
    def __init__(self, device: torch.device) -> None:
        l2 = int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0))
        size = max(128 << 20, 2 * l2)
        whole = torch.empty(size + 3 * (32 << 20), dtype=torch.uint8, device=device)
        self.windows = [whole[i * (32 << 20) : i * (32 << 20) + size].view(torch.int32) for i in range(4)]
        self.sink = torch.empty((), dtype=torch.int64, device=device)
        self.writes = os.environ.get("KFORGE_TIMING_FLUSH", "read") == "write"
        rates = []
        for _ in range(5):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.cuda._sleep(1_000_000)
            end.record()
            torch.cuda.synchronize()
            rates.append(1_000_000 / (start.elapsed_time(end) * 1000.0))
        self.cycles_per_us = max(rates)

    def host_us(self, call: Callable[[], object], count: int) -> float:
        times = []
        for _ in range(count):
            begin = time.perf_counter()
            call()
            times.append((time.perf_counter() - begin) * 1e6)
        torch.cuda.synchronize()
        return sorted(times)[int(0.9 * (len(times) - 1))]

    def samples_us(self, call: Callable[[], object], count: int, sleep_us: float) -> list[float]:
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        torch.cuda.synchronize()
        for j, (start, end) in enumerate(zip(starts, ends, strict=True)):
            if self.writes:  # KFORGE_TIMING_FLUSH=write, as kforge's workers then do
                self.windows[j % len(self.windows)].zero_()
            else:
                torch.sum(self.windows[j % len(self.windows)], 0, out=self.sink)
            torch.cuda._sleep(int(sleep_us * self.cycles_per_us))
            start.record()
            call()
            end.record()
            end.synchronize()
        torch.cuda.synchronize()
        return [start.elapsed_time(end) * 1000.0 for start, end in zip(starts, ends, strict=True)]


def fastest_stream(device: torch.device) -> torch.cuda.Stream:
    """The stream whose launch-bound probe reads lowest: streams differ in launch latency (issue 31)."""
    streams = [torch.cuda.Stream(device) for _ in range(8)]
    one = torch.zeros(1, device=device)
    probes: list[list[float]] = [[] for _ in streams]
    for round_ in range(4):
        for stream, probe in zip(streams, probes, strict=True):
            with torch.cuda.stream(stream):
                for _ in range(8):
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    torch.cuda._sleep(100_000)
                    start.record()
                    for _ in range(4):
                        one.add_(1)
                    end.record()
                    end.synchronize()
                    if round_ > 0:  # the first round warms each stream up
                        probe.append(start.elapsed_time(end))
    quartiles = [sorted(probe)[len(probe) // 4] for probe in probes]
    return streams[quartiles.index(min(quartiles))]


def measure(entry: Callable[..., object], spec: dict[str, Any], blocked: Blocked) -> dict[str, Any]:
    device = torch.device("cuda", torch.cuda.current_device())
    args = _inputs(spec, device)
    set_bytes = sum(value.nbytes for value in args if isinstance(value, torch.Tensor))
    copies = [args] + [
        [value.clone() if isinstance(value, torch.Tensor) else value for value in args]
        for _ in range(min(7, (128 << 20) // max(1, set_bytes)))
    ]
    held: list[object] = []
    turn = [0]
    keep = [8]  # outputs held, the newest included: set from the first output's size, once

    def call() -> object:
        turn[0] += 1
        with torch.no_grad():
            output = entry(*copies[turn[0] % len(copies)])
        held.append(output)
        if len(held) > keep[0]:
            held.pop(0)
        return output

    first = call()  # compiles
    outputs = first if isinstance(first, (tuple, list)) else [first]
    out_bytes = sum(t.nbytes for t in outputs if isinstance(t, torch.Tensor))
    keep[0] = min(8, 1 + (128 << 20) // max(1, out_bytes))
    del held[: -keep[0]]
    torch.cuda.synchronize()
    host = blocked.host_us(call, 20)
    sleep_us = min(50_000.0, max(20.0, 3.0 * host))
    begin, warm = time.perf_counter(), 0
    while warm < 20 or time.perf_counter() - begin < 0.2:
        blocked.samples_us(call, 5, sleep_us)
        warm += 5
    estimate = statistics.median(blocked.samples_us(call, 5, sleep_us))
    count = int(max(15, min(300, 2e6 / max(estimate + sleep_us, 1.0))))
    samples = sorted(blocked.samples_us(call, count, sleep_us))
    median = statistics.median(samples)
    do_bench_ms = triton.testing.do_bench(call, warmup=25, rep=100, return_mode="median")
    return {
        "median_us": median,
        "p10_us": samples[int(0.1 * (len(samples) - 1))],
        "p90_us": samples[int(0.9 * (len(samples) - 1))],
        "samples": len(samples),
        "host_us": host,
        "sleep_us": sleep_us,
        "do_bench_us": do_bench_ms * 1000.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--entry", required=True)
    parser.add_argument("--points", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    module_spec = importlib.util.spec_from_file_location("fidelity_kernel", args.kernel)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    entry = getattr(module, args.entry)
    torch.cuda.set_device(0)
    if os.environ.get("KFORGE_TIMING_STREAM", "") != "default":
        torch.cuda.set_stream(fastest_stream(torch.device("cuda", 0)))
    blocked = Blocked(torch.device("cuda", 0))
    results = {}
    with open(args.points) as handle:
        points = json.load(handle)
    for point in points:
        try:
            results[point["id"]] = measure(entry, point["spec"], blocked)
        except Exception as exc:  # noqa: BLE001 - reported per point, the others still measured
            results[point["id"]] = {"error": f"{type(exc).__name__}: {exc}"}
        torch.cuda.empty_cache()
    with open(args.out, "w") as handle:
        json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
