"""The few CUDA driver API calls kforge needs for IPC, through ctypes (libcuda ships with every driver).

Shared buffers are raw driver allocations, never the caching allocator's segments: an IPC handle to a
segment would expose everything else the judge keeps in it, reference outputs included.
"""

from __future__ import annotations

import ctypes
from typing import Any

IPC_LAZY_ENABLE_PEER_ACCESS = 1
ALLOCATION_GRANULE = 2 * 1024 * 1024


class IpcMemHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]


class CudaDriverError(RuntimeError):
    pass


class CudaDriver:
    """Thin checked wrappers; every call raises CudaDriverError with the driver's own message."""

    def __init__(self) -> None:
        try:
            self._lib = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise CudaDriverError(f"cannot load the CUDA driver library libcuda.so.1: {exc}") from exc

    def _check(self, result: int, what: str) -> None:
        if result == 0:
            return
        text = ctypes.c_char_p()
        self._lib.cuGetErrorString(result, ctypes.byref(text))
        message = text.value.decode() if text.value else "unknown error"
        raise CudaDriverError(f"{what} failed: CUDA error {result} ({message})")

    def ensure_context(self) -> None:
        """The runtime made the primary context current for this thread; check rather than assume."""
        context = ctypes.c_void_p()
        self._check(self._lib.cuCtxGetCurrent(ctypes.byref(context)), "cuCtxGetCurrent")
        if not context.value:
            raise CudaDriverError("no current CUDA context: initialise torch.cuda on this thread first")

    def alloc_zeroed(self, nbytes: int) -> int:
        """A fresh allocation rounded up to the granule and zeroed, so no stale bytes of ours leak."""
        size = max(ALLOCATION_GRANULE, -(-nbytes // ALLOCATION_GRANULE) * ALLOCATION_GRANULE)
        pointer = ctypes.c_uint64()
        self._check(self._lib.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(size)), "cuMemAlloc")
        self._check(self._lib.cuMemsetD8_v2(pointer, ctypes.c_ubyte(0), ctypes.c_size_t(size)), "cuMemsetD8")
        # The memset runs on the legacy default stream, which the workers' own (non-blocking) stream does
        # not wait for (timing_stream.py): it must be done before anything writes the buffer.
        self._check(self._lib.cuCtxSynchronize(), "cuCtxSynchronize")
        return int(pointer.value)

    def free(self, pointer: int) -> None:
        self._check(self._lib.cuMemFree_v2(ctypes.c_uint64(pointer)), "cuMemFree")

    def ipc_handle(self, pointer: int) -> bytes:
        handle = IpcMemHandle()
        self._check(
            self._lib.cuIpcGetMemHandle(ctypes.byref(handle), ctypes.c_uint64(pointer)), "cuIpcGetMemHandle"
        )
        return bytes(handle)  # the whole struct: .reserved would stop at the first NUL byte

    def ipc_open(self, handle_bytes: bytes) -> int:
        if len(handle_bytes) != 64:
            raise CudaDriverError(f"an IPC handle has 64 bytes, got {len(handle_bytes)}")
        handle = IpcMemHandle()
        ctypes.memmove(ctypes.addressof(handle), handle_bytes, 64)
        pointer = ctypes.c_uint64()
        result = self._lib.cuIpcOpenMemHandle_v2(
            ctypes.byref(pointer), handle, ctypes.c_uint(IPC_LAZY_ENABLE_PEER_ACCESS)
        )
        self._check(result, "cuIpcOpenMemHandle")
        return int(pointer.value)

    def ipc_close(self, pointer: int) -> None:
        self._check(self._lib.cuIpcCloseMemHandle(ctypes.c_uint64(pointer)), "cuIpcCloseMemHandle")

    def address_range(self, pointer: int) -> tuple[int, int]:
        """(base, size) of the allocation holding pointer: what a process can reach from it."""
        base, size = ctypes.c_uint64(), ctypes.c_size_t()
        self._check(
            self._lib.cuMemGetAddressRange_v2(
                ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(pointer)
            ),
            "cuMemGetAddressRange",
        )
        return int(base.value), int(size.value)


class DeviceBytes:
    """Presents a raw device pointer to torch.as_tensor through the CUDA array interface (no copy)."""

    def __init__(self, pointer: int, nbytes: int) -> None:
        self.__cuda_array_interface__: dict[str, Any] = {
            "shape": (nbytes,),
            "typestr": "|u1",
            "data": (pointer, False),
            "version": 2,
        }
