"""What the candidate's forward really ran: Triton launches, ATen ops, GPU kernels and threads.

Installed in the candidate process before the candidate is imported. The supervisor turns the
trace into runtime findings (docs/threat-model.md); nothing here decides a verdict.
- Triton launches: JITFunction.run (GPU) and InterpretedFunction.run (CPU interpreter) are
  wrapped, so every kernel[grid](...) is counted, its stream and tensor dtypes noted, and in
  "ghost" mode the candidate's own kernels are skipped (decoy detection).
- ATen ops: a TorchDispatchMode sees every op outside Triton launches; compute ops are listed.
- GPU kernels: torch.profiler (CUPTI) lists every kernel with its duration and whether it ran on a
  stream other than forward's (work the timing events would not cover).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kforge.worker.values import dtype_name

CANDIDATE_MODULE = "kforge_candidate"

# ATen ops that allocate, move, reshape or describe tensors: a Triton candidate may use them around
# its launches. Everything else the candidate's forward runs outside a Triton kernel is compute.
# fmt: off
NON_COMPUTE_ATEN_OPS = frozenset((
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "fill_", "zero_",
    "arange", "scalar_tensor", "lift_fresh", "lift_fresh_copy", "view", "_unsafe_view", "view_as",
    "reshape", "_reshape_alias", "reshape_as", "as_strided", "as_strided_", "expand", "expand_as",
    "permute", "transpose", "transpose_", "t", "t_", "squeeze", "squeeze_", "unsqueeze", "unsqueeze_",
    "flatten", "unflatten", "movedim", "contiguous", "clone", "copy_", "_to_copy", "to", "detach",
    "detach_", "alias", "slice", "select", "narrow", "split", "split_with_sizes", "chunk", "unbind",
    "resize_", "set_", "_local_scalar_dense", "is_nonzero", "cat", "stack", "sym_size", "sym_stride",
    "sym_numel", "_has_compatible_shallow_copy_type", "record_stream", "_copy_from",
    "_copy_from_and_resize",
))
# fmt: on


@dataclass
class LaunchLog:
    """Launches seen during one call of forward (or one timing batch)."""

    own: Counter[str] = field(default_factory=Counter)  # kernels defined in the candidate module
    foreign: Counter[str] = field(default_factory=Counter)  # Triton kernels from anywhere else
    side_stream: Counter[str] = field(default_factory=Counter)  # launched off the forward's stream
    failed: Counter[str] = field(default_factory=Counter)  # launches that raised
    empty_grid: Counter[str] = field(default_factory=Counter)  # launches of zero programs (did nothing)
    arg_dtypes: set[str] = field(default_factory=set)  # floating dtypes of tensors passed to own kernels

    def own_total(self) -> int:
        return sum(self.own.values())


def _kernel_identity(kernel: Any) -> tuple[str, bool]:
    """Name and ownership of a launched kernel; autotuners and heuristics wrap it in `.fn` layers."""
    target = kernel
    for _ in range(8):
        inner = getattr(target, "fn", None)
        if inner is None:
            break
        target = inner
    name = getattr(target, "__name__", None) or type(kernel).__name__
    return str(name), getattr(target, "__module__", None) == CANDIDATE_MODULE


def _current_stream_handle(args: tuple[Any, ...]) -> int | None:
    for arg in args:
        if isinstance(arg, torch.Tensor) and arg.is_cuda:
            return int(torch.cuda.current_stream(arg.device).cuda_stream)
    return None


def _program_count(grid: Any) -> int | None:
    """Programs in an evaluated launch grid, or None when it cannot be read."""
    try:
        dims = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        count = 1
        for dim in dims:
            count *= int(dim)
        return count
    except (TypeError, ValueError):
        return None


class LaunchRecorder:
    """Counts Triton launches and, in ghost mode, turns the candidate's own kernels into no-ops.

    A launch counts once it has returned over a non-empty grid: a kernel that raises (and a fallback
    that catches it) or a zero-program grid did no work. Launches made inside a launch (an
    autotuner benchmarking its configs, a heuristics wrapper) belong to the outer one.
    """

    def __init__(self) -> None:
        self.log: LaunchLog | None = None
        self.ghost = False
        self.depth = 0  # > 0 while a Triton launch runs (its internal ATen ops are not the candidate's)
        self.expected_stream: int | None = None

    def install(self) -> None:
        """Wraps Triton's launch entry points; call before the candidate is imported."""
        from triton.runtime.autotuner import Autotuner, Heuristics
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction

        for cls in (JITFunction, InterpretedFunction, Autotuner, Heuristics):
            if not getattr(cls.run, "_kforge_wrapped", False):
                cls.run = self._wrap(cls.run)  # type: ignore[method-assign]

    def _wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        def run(kernel: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            log = recorder.log
            if warmup or log is None or recorder.depth > 0:
                return recorder._nested(original, kernel, args, grid, warmup, kwargs)
            name, own = _kernel_identity(kernel)
            if recorder.ghost and own:
                recorder._record(log, name, own, args, kwargs)  # skipped, but it would have run
                return None
            grids: list[Any] = []

            def evaluated_grid(meta: Any) -> Any:
                value = grid(meta) if callable(grid) else grid
                grids.append(value)
                return value

            try:
                result = recorder._nested(original, kernel, args, evaluated_grid, warmup, kwargs)
            except BaseException:
                log.failed[name] += 1
                raise
            if _program_count(grids[-1] if grids else grid) == 0:
                log.empty_grid[name] += 1
            else:
                recorder._record(log, name, own, args, kwargs)
            return result

        run._kforge_wrapped = True  # type: ignore[attr-defined]
        return run

    def _nested(
        self,
        original: Callable[..., Any],
        kernel: Any,
        args: tuple[Any, ...],
        grid: Any,
        warmup: bool,
        kwargs: dict[str, Any],
    ) -> Any:
        self.depth += 1
        try:
            return original(kernel, *args, grid=grid, warmup=warmup, **kwargs)
        finally:
            self.depth -= 1

    def _record(
        self, log: LaunchLog, name: str, own: bool, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        (log.own if own else log.foreign)[name] += 1
        if not own:
            return
        values = (*args, *kwargs.values())
        for value in values:
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                log.arg_dtypes.add(dtype_name(value.dtype))
        stream = _current_stream_handle(values)
        if stream is not None and self.expected_stream is not None and stream != self.expected_stream:
            log.side_stream[name] += 1

    @contextmanager
    def recording(self, log: LaunchLog, device: torch.device, ghost: bool = False) -> Iterator[LaunchLog]:
        self.log, self.ghost = log, ghost
        self.expected_stream = (
            int(torch.cuda.current_stream(device).cuda_stream) if device.type == "cuda" else None
        )
        try:
            yield log
        finally:
            self.log, self.ghost, self.expected_stream = None, False, None


class AtenComputeRecorder(TorchDispatchMode):
    """Lists the ATen compute ops the candidate runs outside Triton launches."""

    def __init__(self, launches: LaunchRecorder) -> None:
        super().__init__()
        self.launches = launches
        self.compute: Counter[str] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if self.launches.depth == 0:
            name = str(getattr(func.overloadpacket, "__name__", func))
            if name not in NON_COMPUTE_ATEN_OPS:
                self.compute[name] += 1
        return func(*args, **(kwargs or {}))


def _child_processes() -> set[int]:
    children: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as handle:
                children.update(int(pid) for pid in handle.read().split())
    except OSError:
        pass
    return children


def _is_memory_kernel(name: str) -> bool:
    """ATen fills and copies (allocation around launches, the NaN pre-fill), and driver memsets/copies."""
    lowered = name.lower()
    if lowered.startswith(("memset", "memcpy")) or "[memset]" in lowered or "[memcpy]" in lowered:
        return True
    aten = "at::native::" in name
    return aten and any(word in name for word in ("FillFunctor", "copy_kernel", "CatArrayBatchedCopy"))


# torch.cuda._sleep launches this kernel; one is queued on forward's stream at the start of a traced call
# so that the profiler names that stream, and work on any other stream can be told apart.
STREAM_MARKER_KERNEL = "spin_kernel"
# The marker spins long enough (~0.5 ms at 2 GHz) that forward always starts on a busy stream, as it
# does when timed (an L2 flush is queued before each call): a candidate cannot tell the two apart
# by asking whether the stream is idle.
STREAM_MARKER_CYCLES = 1_000_000


def _gpu_kernels(profiler: torch.profiler.profile) -> list[dict[str, Any]]:
    """GPU kernels (and driver copies/fills) per name, split by whether they ran off forward's stream."""
    events = [e for e in profiler.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    forward_streams = {e.device_resource_id for e in events if STREAM_MARKER_KERNEL in e.name}
    totals: dict[tuple[str, bool], list[float]] = {}
    for event in events:
        if STREAM_MARKER_KERNEL in event.name:
            continue
        side = bool(forward_streams) and event.device_resource_id not in forward_streams
        entry = totals.setdefault((event.name, side), [0, 0.0])
        entry[0] += 1
        entry[1] += float(event.time_range.elapsed_us())
    return [
        {"name": name, "count": int(count), "time_us": time_us, "side_stream": side}
        for (name, side), (count, time_us) in totals.items()
    ]


@dataclass
class ForwardTrace:
    """Everything recorded around one forward call, as sent to the supervisor."""

    launches: LaunchLog = field(default_factory=LaunchLog)
    aten_compute: Counter[str] = field(default_factory=Counter)
    gpu_kernels: list[dict[str, Any]] = field(default_factory=list)
    threads_left: list[str] = field(default_factory=list)
    children_left: int = 0

    def to_json(self) -> dict[str, Any]:
        own_names = set(self.launches.own)
        kernel_time = sum(k["time_us"] for k in self.gpu_kernels if not _is_memory_kernel(k["name"]))
        own_time = sum(k["time_us"] for k in self.gpu_kernels if k["name"] in own_names)
        return {
            "own_launches": dict(self.launches.own),
            "foreign_launches": dict(self.launches.foreign),
            "side_stream_launches": dict(self.launches.side_stream),
            "failed_launches": dict(self.launches.failed),
            "empty_grid_launches": dict(self.launches.empty_grid),
            "kernel_arg_dtypes": sorted(self.launches.arg_dtypes),
            "aten_compute_ops": dict(self.aten_compute),
            "gpu_kernels": [
                {**k, "own": k["name"] in own_names, "memory": _is_memory_kernel(k["name"])}
                for k in self.gpu_kernels
            ],
            "gpu_kernel_time_us": kernel_time,
            "own_kernel_time_us": own_time,
            "threads_left": self.threads_left,
            "children_left": self.children_left,
        }


@contextmanager
def traced_forward(
    recorder: LaunchRecorder, device: torch.device, ghost: bool = False
) -> Iterator[ForwardTrace]:
    """Traces one forward call: launches, ATen compute, GPU kernels (on CUDA), and leftovers."""
    trace = ForwardTrace()
    threads_before = set(threading.enumerate())
    children_before = _child_processes()
    aten = AtenComputeRecorder(recorder)
    profiler = (
        torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
        if device.type == "cuda"
        else None
    )
    try:
        if profiler is not None:
            profiler.__enter__()
            with torch.cuda.device(device):
                torch.cuda._sleep(STREAM_MARKER_CYCLES)  # the stream marker (STREAM_MARKER_KERNEL)
        with recorder.recording(trace.launches, device, ghost), aten:
            yield trace
    finally:
        if profiler is not None:
            torch.cuda.synchronize(device)
            profiler.__exit__(None, None, None)
            trace.gpu_kernels = _gpu_kernels(profiler)
        trace.aten_compute = aten.compute
        trace.threads_left = sorted(
            t.name for t in threading.enumerate() if t not in threads_before and t.is_alive()
        )
        trace.children_left = len(_child_processes() - children_before)
