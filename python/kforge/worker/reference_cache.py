"""The judge's cache of reference results by seed, bounded in entries and in bytes.

A judge outlives its evaluations (every candidate of a problem reuses its references), and several
judges share one GPU. Counted in entries only, a problem whose tensors take gigabytes kept a dozen
copies of them on the device after its evaluation ended (KernelBench level 1 at its current sizes: one
idle judge held 56 GiB of an H100, and the next problem's reference ran out of memory). So the cache
is also bounded in bytes, and `shrink_to` lets the scheduler cut an idle judge's cache down further.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any, Protocol

import torch

from kforge.worker.timed_outputs import tensors_in

# Seeds whose inputs and outputs a judge keeps: 5 trials, the runtime probe, 4 timing value sets, spare.
DEFAULT_ENTRIES = 12
# Shares of the device's memory (of the machine's RAM on the CPU) a judge's cache may hold while its
# problem has evaluations queued, and once it is idle (the scheduler's memory budget does not see idle
# judges, so they keep only what a small problem needs: under 0.4 GiB on an 80 GiB GPU).
ACTIVE_SHARE = 8
IDLE_SHARE = 256


class Cached(Protocol):
    inputs: list[Any]
    outputs: list[Any]
    undefined: list[torch.Tensor | None]


def reference_bytes(entry: Cached) -> int:
    """Bytes of the tensors one cached reference holds (inputs, outputs, masks of unwritten elements)."""
    held = [*tensors_in(entry.inputs), *tensors_in(entry.outputs)]
    held += [mask for mask in entry.undefined if isinstance(mask, torch.Tensor)]
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in held}
    return sum(storages.values())  # a view and its base count once


def memory_of(device: torch.device) -> int:
    """The device's total memory; the machine's physical RAM for the CPU."""
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).total_memory)
    return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


class ReferenceCache:
    """Least recently used first out; the entry just stored always stays, however large."""

    def __init__(self, max_entries: int = DEFAULT_ENTRIES, max_bytes: int | None = None) -> None:
        self.max_entries = max(1, max_entries)
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def get(self, key: Any) -> Any:
        found = self._entries.get(key)
        if found is None:
            return None
        self._entries.move_to_end(key)
        return found[0]

    def put(self, key: Any, entry: Cached) -> None:
        self._drop(key)
        size = reference_bytes(entry)
        self._entries[key] = (entry, size)
        self._bytes += size
        while len(self._entries) > self.max_entries:
            self._drop(next(iter(self._entries)))
        if self.max_bytes is not None:
            self.shrink_to(self.max_bytes, keep_newest=True)

    def shrink_to(self, max_bytes: int, keep_newest: bool = False) -> int:
        """Drops the least recently used entries until at most max_bytes are held; the bytes dropped."""
        before = self._bytes
        while self._entries and self._bytes > max_bytes:
            if keep_newest and len(self._entries) == 1:
                break
            self._drop(next(iter(self._entries)))
        return before - self._bytes

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0

    def _drop(self, key: Any) -> None:
        found = self._entries.pop(key, None)
        if found is not None:
            self._bytes -= found[1]
