"""The candidate's share of GPU memory: capped in the candidate worker before the candidate's code is
imported, and checked after every request.

The cap is torch's per-process memory fraction, so an allocation past it fails at once (an
OutOfMemoryError, reported as `gpu_memory_limit`) instead of starving the evaluations beside it on the
GPU; the check after each request compares the allocator's peak reservation with the limit, so memory
reserved by other means through torch still counts. Changing the fraction or resetting the peak is
forbidden statically (rule `monkeypatching`). Memory a candidate allocates outside torch (raw driver
calls) needs ctypes or a CUDA binding, which `native-code` rejects.
"""

from __future__ import annotations

import torch

from kforge.worker.protocol import WorkerError


def _gib(value: int) -> str:
    return f"{value / 2**30:.2f} GiB"


CUDA_ERROR_OUT_OF_MEMORY = 2


# torch's CPU allocator failing (it raises a RuntimeError, not torch.OutOfMemoryError).
CPU_ALLOCATOR_FAILURE = "DefaultCPUAllocator: can't allocate memory"


def is_out_of_memory(exc: BaseException) -> bool:
    """torch's allocator out of memory (a GPU's, or the CPU's), or a CUDA driver call failing with
    CUDA_ERROR_OUT_OF_MEMORY (kforge's own shared buffers are allocated through the driver)."""
    if isinstance(exc, torch.OutOfMemoryError):
        return True
    text = str(exc)
    return (
        f"CUDA error {CUDA_ERROR_OUT_OF_MEMORY} (" in text
        or "CUDA error: out of memory" in text
        or CPU_ALLOCATOR_FAILURE in text
    )


class DeviceMemoryCap:
    """One candidate worker's GPU memory limit (no limit on the CPU or when none is given)."""

    def __init__(self) -> None:
        self.device: torch.device | None = None
        self.limit_bytes: int | None = None

    def install(self, device: torch.device, limit_bytes: int | None) -> None:
        if device.type != "cuda" or not limit_bytes:
            return
        total = torch.cuda.get_device_properties(device).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, int(limit_bytes) / total), device)
        torch.cuda.reset_peak_memory_stats(device)
        self.device, self.limit_bytes = device, int(limit_bytes)

    def peak_bytes(self) -> int:
        return torch.cuda.max_memory_reserved(self.device) if self.device is not None else 0

    def exceeded(self) -> WorkerError | None:
        """The verdict's error when the allocator's peak went past the limit."""
        if self.limit_bytes is None:
            return None
        peak = self.peak_bytes()
        if peak <= self.limit_bytes:
            return None
        return self.error(f"its allocations peaked at {_gib(peak)}")

    def is_over_limit(self, exc: BaseException) -> bool:
        return self.limit_bytes is not None and isinstance(exc, torch.OutOfMemoryError)

    def device_was_full(self, exc: BaseException) -> str | None:
        """Why an out-of-memory failure is the machine's and not the candidate's (None if it may be the
        candidate's): the GPU no longer had free the rest of the candidate's share, so memory that
        other evaluations or processes held ran out before the candidate reached its limit."""
        if self.device is None or self.limit_bytes is None or not is_out_of_memory(exc):
            return None
        try:
            free, _ = torch.cuda.mem_get_info(self.device)
            room = self.limit_bytes - torch.cuda.memory_reserved(self.device)
        except Exception:  # noqa: BLE001 - a CUDA context too broken to ask: the candidate's verdict stands
            return None
        if free >= room:
            return None
        return (
            f"the GPU ran out of memory while the candidate was within its share ({_gib(self.limit_bytes)}): "
            f"{_gib(free)} free on the device, {_gib(room)} of the share not yet used; other evaluations or "
            "processes hold the rest. Run fewer evaluations at once (-j) or free the GPU"
        )

    def error(self, what: str) -> WorkerError:
        limit = _gib(self.limit_bytes or 0)
        share = f"its share of GPU memory ({limit}; KFORGE_CANDIDATE_GPU_MEMORY_GIB)"
        return WorkerError("gpu_memory_limit", f"the candidate exceeded {share}: {what}")
