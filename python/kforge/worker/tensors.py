"""Hands tensors between the judge and the candidate through buffers that hold nothing else.

CPU: one file per tensor in the evaluation's transfer folder (on /dev/shm, a tmpfs), mapped by both
sides. GPU: one raw driver allocation per tensor, shared with a CUDA IPC handle. The exporting side owns
its buffers and frees them when told; the importing side maps them and unmaps on release. Each
evaluation has a folder of its own that only its candidate may open, so concurrent candidates never see
each other's outputs; the supervisor removes the folder, leftovers of a crashed process included.
"""

from __future__ import annotations

import base64
import contextlib
import mmap
import os
import secrets
from typing import Any

import torch

from kforge.worker.cuda_driver import CudaDriver, DeviceBytes
from kforge.worker.values import dtype_from_name, dtype_name


def _nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def _bytes_view(raw: torch.Tensor, dtype: torch.dtype, shape: list[int]) -> torch.Tensor:
    return raw.view(dtype).view(shape)


def _buffer_path(directory: str, name: str) -> str:
    if not name or "/" in name or name.startswith(".") or len(name) > 200:
        raise ValueError(f"shared buffer name {name!r} is not a plain file name of the transfer folder")
    return os.path.join(directory, name)


class SharedTensorExporter:
    """Copies tensors into fresh shared buffers and owns those buffers until release()."""

    def __init__(self, device: torch.device, directory: str, driver: CudaDriver | None) -> None:
        self._device = device
        self._directory = directory
        self._driver = driver
        self._shm_paths: list[str] = []
        self._device_pointers: list[int] = []
        self._views: list[torch.Tensor] = []

    def export(self, tensor: torch.Tensor) -> dict[str, Any]:
        """Share a copy of tensor (dense, contiguous) and return its descriptor."""
        descriptor: dict[str, Any] = {
            "dtype": dtype_name(tensor.dtype),
            "shape": list(tensor.shape),
            "nbytes": _nbytes(tensor),
        }
        if descriptor["nbytes"] == 0:
            self._views.append(torch.empty_like(tensor))
            return {**descriptor, "transport": "empty"}
        if self._device.type == "cuda":
            return {**descriptor, **self._export_cuda(tensor)}
        return {**descriptor, **self._export_shm(tensor)}

    @property
    def last_view(self) -> torch.Tensor:
        """The exporter's own view of the buffer exported last (what the other side sees)."""
        return self._views[-1]

    def _export_shm(self, tensor: torch.Tensor) -> dict[str, Any]:
        name = f"t-{secrets.token_hex(8)}"
        path = _buffer_path(self._directory, name)
        nbytes = _nbytes(tensor)
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        self._shm_paths.append(path)
        try:
            os.ftruncate(fd, nbytes)
            mapping = mmap.mmap(fd, nbytes)
        finally:
            os.close(fd)
        raw = torch.frombuffer(mapping, dtype=torch.uint8, count=nbytes)
        view = _bytes_view(raw, tensor.dtype, list(tensor.shape))
        view.copy_(tensor.detach().to("cpu"))
        self._views.append(view)
        return {"transport": "shm", "name": name}

    def _export_cuda(self, tensor: torch.Tensor) -> dict[str, Any]:
        assert self._driver is not None
        nbytes = _nbytes(tensor)
        pointer = self._driver.alloc_zeroed(nbytes)
        self._device_pointers.append(pointer)
        raw = torch.as_tensor(DeviceBytes(pointer, nbytes), device=self._device)
        view = _bytes_view(raw, tensor.dtype, list(tensor.shape))
        view.copy_(tensor.detach())
        torch.cuda.synchronize(self._device)
        self._views.append(view)
        handle = base64.b64encode(self._driver.ipc_handle(pointer)).decode()
        return {"transport": "cuda_ipc", "handle": handle, "device_index": self._device.index}

    def release(self) -> None:
        """Free every buffer exported so far (the importer must have released its mappings)."""
        self._views.clear()
        for path in self._shm_paths:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        self._shm_paths.clear()
        if self._driver is not None:
            torch.cuda.synchronize(self._device)
            for pointer in self._device_pointers:
                self._driver.free(pointer)
        self._device_pointers.clear()


class SharedTensorImporter:
    """Maps the other side's buffers as tensors; release() unmaps them."""

    def __init__(self, device: torch.device, directory: str, driver: CudaDriver | None) -> None:
        self._device = device
        self._directory = directory
        self._driver = driver
        self._opened_pointers: list[int] = []

    def open(self, descriptor: dict[str, Any]) -> torch.Tensor:
        dtype = dtype_from_name(str(descriptor["dtype"]))
        shape = [int(size) for size in descriptor["shape"]]
        nbytes = int(descriptor["nbytes"])
        if any(size < 0 for size in shape):
            raise ValueError(f"negative size in shape {shape}")
        expected = torch.Size(shape).numel() * torch.empty((), dtype=dtype).element_size()
        if nbytes != expected:
            raise ValueError(f"descriptor claims {nbytes} bytes, shape {shape} of {dtype} needs {expected}")
        transport = descriptor["transport"]
        if transport == "empty":
            return torch.empty(shape, dtype=dtype, device=self._device)
        if transport == "shm":
            return self._open_shm(str(descriptor["name"]), nbytes, dtype, shape)
        if transport == "cuda_ipc":
            return self._open_cuda(str(descriptor["handle"]), nbytes, dtype, shape)
        raise ValueError(f"unknown transport {transport!r}")

    def _open_shm(self, name: str, nbytes: int, dtype: torch.dtype, shape: list[int]) -> torch.Tensor:
        path = _buffer_path(self._directory, name)
        fd = os.open(path, os.O_RDWR)
        try:
            if os.fstat(fd).st_size != nbytes:
                raise ValueError(f"shared buffer {name} has {os.fstat(fd).st_size} bytes, expected {nbytes}")
            mapping = mmap.mmap(fd, nbytes)
        finally:
            os.close(fd)
        raw = torch.frombuffer(mapping, dtype=torch.uint8, count=nbytes)
        return _bytes_view(raw, dtype, shape)

    def _open_cuda(self, handle: str, nbytes: int, dtype: torch.dtype, shape: list[int]) -> torch.Tensor:
        if self._driver is None:
            raise ValueError("a CUDA IPC buffer was sent to a CPU worker")
        pointer = self._driver.ipc_open(base64.b64decode(handle, validate=True))
        self._opened_pointers.append(pointer)
        _, size = self._driver.address_range(pointer)
        if size < nbytes:
            raise ValueError(f"shared device buffer has {size} bytes, descriptor claims {nbytes}")
        raw = torch.as_tensor(DeviceBytes(pointer, nbytes), device=self._device)
        return _bytes_view(raw, dtype, shape)

    def release(self) -> None:
        """Unmap device buffers (CPU mappings go away with their last tensor)."""
        if self._driver is not None and self._opened_pointers:
            torch.cuda.synchronize(self._device)
            for pointer in self._opened_pointers:
                self._driver.ipc_close(pointer)
        self._opened_pointers.clear()
