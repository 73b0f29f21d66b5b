"""GPU sample timing shared by the judge (reference) and the candidate worker (candidate).

Each sample: flush L2 by writing a buffer larger than L2, then device events around one call. The
flush is queued before the start event, so the call's launch overhead hides behind it and the events
measure device time with a cold cache. Statistics and stopping live in the C++ supervisor.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

MIN_FLUSH_BYTES = 128 * 1024 * 1024


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
        torch.cuda.synchronize(self._device)

    def samples_ms(self, call: Callable[[], object], count: int) -> list[float]:
        """count cold-cache samples of call, in milliseconds."""
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        torch.cuda.synchronize(self._device)
        for start, end in zip(starts, ends, strict=True):
            self._flush.zero_()
            start.record()
            call()
            end.record()
        torch.cuda.synchronize(self._device)
        return [start.elapsed_time(end) for start, end in zip(starts, ends, strict=True)]
