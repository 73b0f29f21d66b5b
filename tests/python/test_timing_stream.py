"""The stream a worker times on: the probe's fastest, robust to other work on the GPU (timing_stream.py)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import torch
from kforge.worker import timing_stream


class FakeStream:
    def __init__(self, number: int) -> None:
        self.number = number


def _probe_with(monkeypatch: pytest.MonkeyPatch, per_stream: dict[int, list[float]]) -> None:
    """Streams 0, 1, ... whose probe samples cycle through per_stream[number]."""
    counter = itertools.count()
    monkeypatch.setattr(torch.cuda, "Stream", lambda device: FakeStream(next(counter)))
    cycles = {number: itertools.cycle(values) for number, values in per_stream.items()}

    def probe(stream: Any, scratch: torch.Tensor, count: int) -> list[float]:
        return [next(cycles[stream.number]) for _ in range(count)]

    monkeypatch.setattr(timing_stream, "_probe_once", probe)


def test_the_fast_class_is_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    slow, fast = [8.25, 8.22, 8.29], [7.87, 7.84, 7.90]
    _probe_with(monkeypatch, {n: (fast if n in (5, 6) else slow) for n in range(timing_stream.PROBE_STREAMS)})
    chosen = timing_stream.choose_timing_stream(torch.device("cpu"))
    assert chosen.index == 5
    assert chosen.stream.number == 5
    assert chosen.probe_us[5] < 7.9 < 8.2 < chosen.probe_us[0]


def test_other_work_on_the_gpu_does_not_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stream 2 is the fast one but half its samples met another evaluation's kernels (40 µs more);
    stream 0 is slow and never disturbed: the low quantile still sees stream 2's own speed."""
    disturbed = [7.85, 48.0, 7.86, 47.5]
    per = {n: [8.24, 8.26] for n in range(timing_stream.PROBE_STREAMS)}
    per[2] = disturbed
    _probe_with(monkeypatch, per)
    assert timing_stream.choose_timing_stream(torch.device("cpu")).index == 2


def test_the_default_stream_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(timing_stream.STREAM_VARIABLE, "default")
    sentinel = object()
    monkeypatch.setattr(torch.cuda, "default_stream", lambda device: sentinel)
    chosen = timing_stream.choose_timing_stream(torch.device("cuda", 0))
    assert chosen.stream is sentinel
    assert chosen.index == -1
    assert chosen.probe_us == []
