"""The CUDA stream a worker runs all its GPU work on: the fastest of several, chosen by a probe (issue 31).

Measured on an H200 (docs/benchmarks.md, "Session 18", diagnostic 25): in one process, three back-to-back
16 K-element adds read 7.84-7.95 µs on some streams and 8.19-8.30 µs on others, each stream steady over
rounds (the two classes differ in launch-to-launch latency: a single 4096-element add moves by about
0.1 µs with them), which streams fall in which class changes from process to process, and the legacy
default stream was slower than both (8.64-9.09 µs). Every worker used to time on its default stream, so
the judge and the candidate each carried their process's own offset, and a small multi-launch call
compared with itself read 0.94-1.06.

Each worker now probes PROBE_STREAMS streams with a launch-bound probe (a sleep, so that the launches
queue, then PROBE_LAUNCHES tiny kernels between events), interleaved over PROBE_ROUNDS rounds, and makes
the one with the lowest PROBE_QUANTILE of probe times its current stream before any problem or
candidate code runs: trials and timing share that stream (a candidate that keeps the current stream's
handle launches on it when timed), and both sides time on the fast class. A low quantile rather than
the median: the probe runs without the GPU's timing lease, and work of other evaluations only adds
time. KFORGE_TIMING_STREAM=default keeps the legacy default stream (for comparisons).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import torch

from kforge.worker.timing import percentile

PROBE_STREAMS = 8  # CUDA's default number of hardware work queues per context
PROBE_ROUNDS = 3
PROBE_SAMPLES = 8  # per stream and round
PROBE_LAUNCHES = 4
PROBE_SLEEP_CYCLES = 100_000  # 50-70 µs: longer than the host needs to queue the launches
PROBE_QUANTILE = 0.25
STREAM_VARIABLE = "KFORGE_TIMING_STREAM"


@dataclass
class TimingStream:
    """The stream chosen and what the probe saw on each probed stream (µs), kept in the worker's state."""

    stream: Any
    index: int  # position among the probed streams; -1: the legacy default stream
    probe_us: list[float] = field(default_factory=list)


def _probe_once(stream: Any, scratch: torch.Tensor, count: int) -> list[float]:
    """count samples of PROBE_LAUNCHES tiny kernels queued behind a sleep on stream, in µs."""
    samples = []
    with torch.cuda.stream(stream):
        for _ in range(count):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(PROBE_SLEEP_CYCLES)
            start.record(stream)
            for _ in range(PROBE_LAUNCHES):
                scratch.add_(1)
            end.record(stream)
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1000.0)
    return samples


def choose_timing_stream(device: torch.device) -> TimingStream:
    """Probes PROBE_STREAMS new streams of device and returns the fastest (not yet made current)."""
    if os.environ.get(STREAM_VARIABLE, "").strip() == "default":
        return TimingStream(torch.cuda.default_stream(device), -1)
    streams = [torch.cuda.Stream(device) for _ in range(PROBE_STREAMS)]
    scratch = torch.zeros(1, device=device)
    samples: list[list[float]] = [[] for _ in streams]
    for stream in streams:  # the first launches on a stream are not representative
        _probe_once(stream, scratch, 2)
    for _ in range(PROBE_ROUNDS):
        for index, stream in enumerate(streams):
            samples[index] += _probe_once(stream, scratch, PROBE_SAMPLES)
    probe_us = [percentile(values, PROBE_QUANTILE) for values in samples]
    best = min(range(len(streams)), key=lambda index: probe_us[index])
    return TimingStream(streams[best], best, probe_us)


def use_timing_stream(device: torch.device) -> TimingStream:
    """Chooses the stream and makes it current on this thread (every worker does its GPU work on it)."""
    chosen = choose_timing_stream(device)
    torch.cuda.set_stream(chosen.stream)
    return chosen
