"""GPU sample timing shared by the judge (reference) and the candidate worker (candidate).

Each sample: flush L2 by writing a buffer larger than L2, then device events around one call. The
flush is queued before the start event, so the call's launch overhead hides behind it and the events
measure device time with a cold cache. Statistics and stopping live in the C++ supervisor.

The timing functions are bound when this module is imported, which the candidate worker does before
it imports the candidate: a candidate that later replaces torch.cuda.Event, its methods,
torch.cuda.synchronize or torch.cuda.current_stream changes nothing that is measured, and
replaced_timing_functions() names what it replaced, so the verdict can reject it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

MIN_FLUSH_BYTES = 128 * 1024 * 1024

_EVENT = torch.cuda.Event
_RECORD = torch.cuda.Event.record
_ELAPSED_TIME = torch.cuda.Event.elapsed_time
_SYNCHRONIZE = torch.cuda.synchronize
_CURRENT_STREAM = torch.cuda.current_stream

# (owner, attribute) pairs whose value at import is the honest one.
_WATCHED: tuple[tuple[Any, str], ...] = (
    (torch.cuda, "Event"),
    (torch.cuda, "Stream"),
    (torch.cuda, "synchronize"),
    (torch.cuda, "current_stream"),
    (torch.cuda, "set_stream"),
    (torch.cuda, "stream"),
    (torch.cuda.Event, "record"),
    (torch.cuda.Event, "elapsed_time"),
    (torch.cuda.Event, "synchronize"),
    (torch.cuda.Event, "query"),
    (torch.cuda.Event, "wait"),
    (torch.cuda.Event, "__init__"),
    (torch.cuda.Event, "__new__"),
    (torch._C, "_cuda_synchronize"),
    (torch._C, "_cuda_getCurrentStream"),
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


class SampleTimer:
    """Owns the L2 flush buffer of one device; reused for every batch of samples."""

    def __init__(self, device: torch.device) -> None:
        properties = torch.cuda.get_device_properties(device)
        flush_bytes = max(MIN_FLUSH_BYTES, 2 * int(getattr(properties, "L2_cache_size", 0)))
        self._device = device
        self._flush = torch.empty(flush_bytes, dtype=torch.uint8, device=device)

    def warm_up(self, call: Callable[[], object], count: int) -> None:
        for _ in range(count):
            call()
        _SYNCHRONIZE(self._device)

    def samples_ms(
        self, call: Callable[[], object], count: int, before_sample: Callable[[], None] | None = None
    ) -> list[float]:
        """count cold-cache samples of call, in milliseconds; before_sample runs untimed before each."""
        stream = _CURRENT_STREAM(self._device)
        starts = [_EVENT(enable_timing=True) for _ in range(count)]
        ends = [_EVENT(enable_timing=True) for _ in range(count)]
        _SYNCHRONIZE(self._device)
        for start, end in zip(starts, ends, strict=True):
            if before_sample is not None:
                before_sample()
            self._flush.zero_()
            _RECORD(start, stream)
            call()
            _RECORD(end, stream)
        _SYNCHRONIZE(self._device)
        return [_ELAPSED_TIME(start, end) for start, end in zip(starts, ends, strict=True)]
