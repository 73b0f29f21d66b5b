"""Where a timed call's memory lives, rotated from sample to sample (issue 31).

The same small kernel runs at a speed that depends on which physical memory its buffers occupy. Measured
on an H200 (docs/benchmarks.md, "Timing fidelity", session 15): in one process, eight separately allocated
copies of the inputs and output of a 1 M-element add read 7.01 to 7.30 µs (4%), each copy steady within
0.5% over rounds; eight L2-flush buffers moved a 4096-element add by up to 3.8%. The judge and the
candidate worker each timed on one placement of their own, so a small call compared with itself read up
to ±5% across the two processes, and differently in every fresh process.

Each side therefore times on several placements in turn: its timing inputs are copied PLACEMENTS times
(the value set of a sample is copied into the next copy), the outputs of its last samples are kept alive
so that the allocator hands each call other output memory, and the L2 flush reads a window that moves
(timing.CudaClock). Each side's median is then over the same number of placements, and the two sides'
placements differ far less than one against one. Large inputs get fewer copies (PLACEMENT_BYTES bounds the
extra memory): a call that large spans so many pages that its placement no longer matters.

KFORGE_TIMING_PLACEMENTS=N sets the number of placements on any device (1: no rotation; the tests use it
on the CPU).

A copy's values come from the value set of its sample, so a candidate that keys a cache on the input's
address sees every address with every value set and returns wrong outputs (timed-output-mismatch).
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import torch

from kforge.worker.dispatch_guard import kforge_owned
from kforge.worker.timed_outputs import cloned, tensor_bytes

PLACEMENT_BYTES = 128 << 20  # extra copies of the inputs may take this much, and kept outputs as much
MAX_PLACEMENTS = 8
PLACEMENTS_VARIABLE = "KFORGE_TIMING_PLACEMENTS"


def placement_count(set_bytes: int, budget: int = PLACEMENT_BYTES) -> int:
    """How many placements the timing inputs get: up to MAX_PLACEMENTS, the extra copies within budget."""
    configured = os.environ.get(PLACEMENTS_VARIABLE, "").strip()
    if configured:
        try:
            return max(1, min(MAX_PLACEMENTS, int(configured)))
        except ValueError:
            raise ValueError(f"{PLACEMENTS_VARIABLE} must be a whole number, not {configured!r}") from None
    if set_bytes <= 0:
        return MAX_PLACEMENTS
    return max(1, min(MAX_PLACEMENTS, 1 + budget // set_bytes))


@dataclass
class RotatingInputs:
    """Copies of the timing inputs, one per placement, used in turn: advance() before each sample."""

    copies: list[list[Any]]
    index: int = 0

    @staticmethod
    def of(
        inputs: list[Any], device: torch.device | None = None, budget: int = PLACEMENT_BYTES
    ) -> RotatingInputs:
        """inputs (already private to this side) and, on a GPU (or as KFORGE_TIMING_PLACEMENTS says),
        further copies of them, each allocated apart; a copy the GPU has no memory for is not made."""
        copies = [inputs]
        on_gpu = device is not None and device.type == "cuda"
        if on_gpu or os.environ.get(PLACEMENTS_VARIABLE):
            wanted = placement_count(tensor_bytes(inputs), budget)
            with kforge_owned():
                while len(copies) < wanted:
                    try:
                        copies.append(cloned(inputs))
                    except torch.OutOfMemoryError:
                        break
        return RotatingInputs(copies)

    @property
    def current(self) -> list[Any]:
        return self.copies[self.index]

    def advance(self) -> list[Any]:
        """The next placement: the one the next sample runs on."""
        self.index = (self.index + 1) % len(self.copies)
        return self.current

    def every_value(self) -> list[Any]:
        """Every placement's arguments in one list (checks for outputs that alias an input)."""
        return [value for copy in self.copies for value in copy]

    def aliased_argument(self, position: int | None) -> int | None:
        """The argument index of a position in every_value()."""
        return None if position is None else position % max(1, len(self.copies[0]))


@dataclass
class KeptOutputs:
    """The outputs of the last samples, kept alive so that each call's output lands in other memory;
    as many as the budget allows for outputs of the first one's size, at most MAX_PLACEMENTS - 1."""

    budget: int = PLACEMENT_BYTES
    kept: deque[Any] = field(default_factory=deque)
    limit: int | None = None

    def keep(self, output: Any) -> None:
        if output is None:
            return
        if self.limit is None:
            size = tensor_bytes(output)
            most = MAX_PLACEMENTS - 1
            self.limit = most if size <= 0 else min(most, self.budget // size)
        if self.limit == 0:
            return
        self.kept.append(output)
        while len(self.kept) > self.limit:
            self.kept.popleft()
