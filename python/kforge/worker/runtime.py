"""What the judge and the candidate worker share: device selection, module loading, device facts."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import platform
import sys
from types import ModuleType
from typing import Any

import torch

from kforge.worker import argument_objects
from kforge.worker.cuda_driver import CudaDriver
from kforge.worker.protocol import WorkerError


def select_device(spec: str) -> torch.device:
    """'auto', 'cpu' or 'cuda:N'; a missing GPU is an environment error the user must fix, not a verdict."""
    if spec == "auto":
        spec = "cuda:0" if torch.cuda.is_available() else "cpu"
    try:
        device = torch.device(spec)
    except RuntimeError:
        raise WorkerError("usage", f"unknown device {spec!r}; expected auto, cpu or cuda:N") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise WorkerError(
                "environment", f"device {spec} requested but torch sees no CUDA GPU; use --device cpu"
            )
        index = device.index if device.index is not None else 0
        if index >= torch.cuda.device_count():
            raise WorkerError(
                "environment",
                f"device {spec} requested but only {torch.cuda.device_count()} GPU(s) are visible",
            )
        device = torch.device("cuda", index)
        torch.cuda.set_device(device)
        torch.cuda.init()
        torch.empty(1, device=device)  # creates the primary context on this thread before driver calls
    elif device.type != "cpu":
        raise WorkerError("environment", f"unsupported device {spec!r}; expected cpu or cuda:N")
    return device


def to_device(value: Any, device: torch.device) -> Any:
    """A problem input on `device`: tensors are moved, a device argument becomes `device` (a wrapper that
    takes the device to allocate on), an object argument's or a sequence's tensors are moved, anything else
    (sizes, flags) is kept."""
    if isinstance(value, torch.device):
        return device
    if argument_objects.is_argument_object(value):
        return argument_objects.map_tensors(value, lambda tensor: tensor.to(device))
    if argument_objects.is_tensor_sequence(value):  # torch.hstack's `tensors`: each moved
        return type(value)(to_device(item, device) for item in value)
    return value.to(device) if isinstance(value, torch.Tensor) else value


def cuda_driver_for(device: torch.device) -> CudaDriver | None:
    if device.type != "cuda":
        return None
    driver = CudaDriver()
    driver.ensure_context()
    return driver


def load_module_from_path(path: str, module_name: str) -> ModuleType:
    """Execute a source file as a module registered under module_name (Triton reads kernel source back)."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise WorkerError("usage", f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def device_facts(device: torch.device) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "device": str(device),
        "torch": torch.__version__,
        "triton": _package_version("triton"),
        "python": platform.python_version(),
    }
    if device.type == "cuda":
        properties = torch.cuda.get_device_properties(device)
        facts.update(
            name=properties.name,
            uuid=str(getattr(properties, "uuid", "")),
            capability=f"{properties.major}.{properties.minor}",
            multiprocessors=properties.multi_processor_count,
            memory_bytes=properties.total_memory,
            l2_bytes=int(getattr(properties, "L2_cache_size", 0)),
            cuda=torch.version.cuda,
        )
    else:
        facts.update(name=f"CPU ({platform.processor() or platform.machine()})", triton_interpreter=True)
    return facts
