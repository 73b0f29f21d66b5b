"""What the candidate's forward really ran: Triton launches, ATen ops, GPU kernels and threads.

Installed in the candidate process before the candidate is imported. The supervisor turns the
trace into runtime findings (docs/threat-model.md); nothing here decides a verdict.
- Triton launches: JITFunction.run (GPU) and InterpretedFunction.run (CPU interpreter) are
  wrapped, so every kernel[grid](...) is counted, its stream and tensor dtypes noted, and in
  "ghost" mode the candidate's own kernels are skipped (decoy detection).
- ATen ops: a TorchDispatchMode sees every op; compute ops outside Triton launches are listed, and so
  are those that candidate code runs inside a launch (heuristics, config pre-hooks, grid callables:
  told apart from Triton's own work by the caller's frame). Ops are classified by their qualified
  name (only aten/prims ops may be exempt); a custom op that is not the candidate's own counts as
  compute, and the ops inside any custom op's body are recorded too.
- The same ATen activity, a second time, where the candidate cannot remove it: torch.profiler's CPU
  activity (RecordFunction callbacks in C++), so popping or disabling the dispatch mode hides nothing.
- Host transfers: a TorchFunctionMode sees tensor-to-host conversions (.tolist(), .numpy(), .item(),
  .cpu(), float(x)...) of data derived from the inputs; on a GPU, CUPTI's device-to-host copies are
  counted against them.
- Launch arguments: constexpr arguments must be scalars (a tensor passed as tl.constexpr is Python
  computing inside the kernel under the interpreter), and no Python callable is passed to a kernel.
- Mode stacks: after forward, any TorchDispatchMode/TorchFunctionMode that is not kforge's own is
  reported (and removed before kforge touches the outputs).
- GPU kernels: torch.profiler (CUPTI) lists every kernel with its duration and whether it ran on a
  stream other than forward's (work the timing events would not cover).
"""

from __future__ import annotations

import inspect
import numbers
import os
import sys
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from kforge.worker.dispatch_guard import (
    clear_foreign_modes,
    dispatch_modes,
    function_modes,
    mode_stack_problems,
)
from kforge.worker.values import dtype_name

_RECORD_RANGE = torch._C._profiler._RecordFunctionFast
_PUSH_DISPATCH_MODE = torch._C._push_on_torch_dispatch_stack
_PUSH_FUNCTION_MODE = torch._C._push_on_torch_function_stack

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
    "view_as_real", "view_as_complex", "real", "imag", "_conj", "_neg_view",
    "sym_numel", "_has_compatible_shallow_copy_type", "record_stream", "_copy_from",
    "_copy_from_and_resize",
))
# Composite ATen ops (decomposed before a dispatch mode sees them, but named in the profiler) that only
# allocate, reshape or describe.
COMPOSITE_NON_COMPUTE_ATEN_OPS = frozenset((
    "type_as", "flatten", "unflatten", "view_as", "reshape_as", "expand_as", "contiguous", "to", "item",
    "numpy_T", "mT", "mH", "matrix_H", "adjoint", "swapaxes", "swapdims", "moveaxis", "ravel", "data",
    "resolve_conj", "resolve_neg", "split", "chunk", "tensor_split", "unbind", "align_as", "real", "imag",
    "view_as_real", "view_as_complex", "size", "stride", "dim", "numel", "is_same_size", "result_type",
    "concat", "concatenate", "hstack", "vstack", "new_tensor", "empty_permuted", "zeros_like", "detach_copy",
    "broadcast_to", "broadcast_tensors", "atleast_1d", "atleast_2d", "atleast_3d", "hsplit", "vsplit",
    "dsplit", "unsafe_chunk", "unsafe_split", "column_stack", "row_stack", "dstack", "conj", "positive",
    "align_to", "rename", "refine_names", "squeeze", "unsqueeze", "narrow", "select", "slice", "movedim",
))
# Ops of other namespaces that only make views (Inductor's generated wrappers reinterpret buffers).
NON_COMPUTE_LIBRARY_OPS = frozenset(("inductor::_reinterpret_tensor",))
# Namespaces whose ops only annotate (record_function ranges): neither compute nor a body to trace.
ANNOTATION_NAMESPACES = frozenset(("profiler",))
# Storage access: on the CPU the storage is host memory Python can read; a GPU tensor's storage reaches
# the host only through a copy, which CUPTI records (so `x.untyped_storage().size()` is no transfer there).
STORAGE_METHODS = frozenset(("untyped_storage", "storage", "_typed_storage"))
# Tensor methods that read a tensor's values on the host (or hand them to code kforge cannot see).
HOST_TRANSFER_METHODS = frozenset((
    "tolist", "numpy", "item", "__array__", "__float__", "__int__", "__index__", "__bool__", "__complex__",
    "__repr__", "__str__", "__format__", "__dlpack__", "__reduce_ex__", "__reduce__", "__getstate__",
)) | STORAGE_METHODS
# fmt: on
LAUNCH_RANGE = "kforge::launch"  # profiler range around every outermost Triton launch
FORMAT_RANGE = "kforge::format"  # profiler range around torch's formatting of one tensor (a print)


def called_by_candidate(skip: int = 2) -> bool:
    """Whether the code that triggered the current operation is the candidate's: walking out from the
    operation, a candidate frame comes before any of Triton's (Triton's autotuner, launcher and
    interpreter run their own tensor operations during a launch; those are not the candidate's)."""
    frame = sys._getframe(skip)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if module == CANDIDATE_MODULE:
            return True
        if module == "triton" or module.startswith("triton."):
            return False
        frame = frame.f_back
    return False


def _is_jit_function(value: Any) -> bool:
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    return isinstance(value, (JITFunction, InterpretedFunction))


def _constexpr_value_problem(value: Any) -> str | None:
    """Why a constexpr launch argument is not a plain compile-time scalar, or None."""
    import triton.language as tl

    if isinstance(value, tl.constexpr):
        value = value.value
    if value is None or isinstance(value, (str, torch.dtype, tl.dtype)) or _is_jit_function(value):
        return None
    if isinstance(value, numbers.Number) and not isinstance(value, torch.Tensor):
        return None
    if isinstance(value, (tuple, list)):
        return next((p for p in map(_constexpr_value_problem, value) if p is not None), None)
    return type(value).__qualname__


def _argument_value_problem(value: Any) -> str | None:
    """Why a runtime launch argument is something a kernel cannot honestly take, or None."""
    if isinstance(value, torch.Tensor) or _is_jit_function(value):
        return None
    if isinstance(value, (tuple, list)):
        return next((p for p in map(_argument_value_problem, value) if p is not None), None)
    if callable(value) and not isinstance(value, type):
        return f"a Python callable ({type(value).__qualname__})"
    if type(value).__module__ == "numpy" and hasattr(value, "shape") and getattr(value, "ndim", 0) > 0:
        return "a numpy array"
    return None


def _is_constexpr_annotation(annotation: Any) -> bool:
    import triton.language as tl

    if annotation is tl.constexpr or isinstance(annotation, tl.constexpr):
        return True
    return isinstance(annotation, str) and "constexpr" in annotation


@dataclass
class LaunchLog:
    """Launches seen during one call of forward (or one timing batch)."""

    own: Counter[str] = field(default_factory=Counter)  # kernels defined in the candidate module
    foreign: Counter[str] = field(default_factory=Counter)  # Triton kernels from anywhere else
    side_stream: Counter[str] = field(default_factory=Counter)  # launched off the forward's stream
    failed: Counter[str] = field(default_factory=Counter)  # launches that raised
    empty_grid: Counter[str] = field(default_factory=Counter)  # launches of zero programs (did nothing)
    arg_dtypes: set[str] = field(default_factory=set)  # floating dtypes of tensors passed to own kernels
    # "kernel.param: what it was" for constexpr arguments that are not scalars and Python callables
    bad_arguments: Counter[str] = field(default_factory=Counter)

    def own_total(self) -> int:
        return sum(self.own.values())


def _innermost(kernel: Any) -> Any:
    """The Python function under a kernel; autotuners, heuristics and JIT functions wrap it in `.fn`."""
    target = kernel
    for _ in range(8):
        inner = getattr(target, "fn", None)
        if inner is None:
            break
        target = inner
    return target


def _kernel_identity(kernel: Any) -> tuple[str, bool]:
    """Name and ownership of a launched kernel."""
    target = _innermost(kernel)
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


def _launch_classes() -> tuple[type, ...]:
    """Triton's classes whose run() launches a kernel (compiled, interpreted, autotuned, heuristics)."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    return (JITFunction, InterpretedFunction, Autotuner, Heuristics)


class LaunchRecorder:
    """Counts Triton launches and, in ghost mode, turns the candidate's own kernels into no-ops.

    A launch counts once it has returned over a non-empty grid: a kernel that raises (and a fallback
    that catches it) or a zero-program grid did no work. Launches made inside a launch (an
    autotuner benchmarking its configs, a heuristics wrapper) belong to the outer one.
    """

    def __init__(self) -> None:
        self.log: LaunchLog | None = None
        self.ghost = False
        self.depth = 0  # > 0 while a Triton launch runs (Triton's own ATen ops then are not the candidate's)
        self.expected_stream: int | None = None
        self._parameters: dict[Any, tuple[list[str], set[str]]] = {}  # kernel function -> (names, constexprs)

    def install(self) -> None:
        """Wraps Triton's launch entry points; call before the candidate is imported."""
        for cls in _launch_classes():
            if not getattr(cls.run, "_kforge_wrapped", False):
                cls.run = self._wrap(cls.run)  # type: ignore[method-assign]

    @contextmanager
    def installed(self) -> Iterator[LaunchRecorder]:
        """Wraps Triton's launch entry points for the block only (the judge tracing its reference once:
        its timed calls must run through Triton's own launcher, as they did before)."""
        originals = {cls: cls.run for cls in _launch_classes()}
        for cls, run in originals.items():
            cls.run = self._wrap(run)  # type: ignore[method-assign]
        try:
            yield self
        finally:
            for cls, run in originals.items():
                cls.run = run  # type: ignore[method-assign]

    def _wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        def run(kernel: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            log = recorder.log
            if log is not None and not warmup:
                recorder._check_arguments(
                    log, kernel, args, kwargs
                )  # nested launches too (heuristics values)
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
            if self.depth == 1 and self.log is not None:
                with _RECORD_RANGE(
                    LAUNCH_RANGE
                ):  # the profiler's ops inside are Triton's (see profiled_compute)
                    return original(kernel, *args, grid=grid, warmup=warmup, **kwargs)
            return original(kernel, *args, grid=grid, warmup=warmup, **kwargs)
        finally:
            self.depth -= 1

    def _signature(self, kernel: Any) -> tuple[list[str], set[str]]:
        """Parameter names of a kernel and which of them are tl.constexpr (cached per function)."""
        function = _innermost(kernel)
        cached = self._parameters.get(function)
        if cached is None:
            try:
                parameters = list(inspect.signature(function).parameters.values())
            except (TypeError, ValueError):
                parameters = []
            names = [p.name for p in parameters]
            constexprs = {p.name for p in parameters if _is_constexpr_annotation(p.annotation)}
            cached = self._parameters[function] = (names, constexprs)
        return cached

    def _check_arguments(
        self, log: LaunchLog, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        """constexpr arguments must be compile-time scalars (ints, floats, bools, strings, dtypes, None or
        jit functions), and no argument may be a Python callable: under the interpreter either would run
        Python inside the kernel body."""
        name, own = _kernel_identity(kernel)
        if not own:
            return
        names, constexprs = self._signature(kernel)
        bound = dict(zip(names, args, strict=False))
        bound.update((key, value) for key, value in kwargs.items() if key in names)
        for parameter, value in bound.items():
            if parameter in constexprs:
                problem = _constexpr_value_problem(value)
                if problem is not None:
                    log.bad_arguments[f"{name}.{parameter}: a {problem} passed as tl.constexpr"] += 1
            else:
                problem = _argument_value_problem(value)
                if problem is not None:
                    log.bad_arguments[f"{name}.{parameter}: {problem}"] += 1

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


def _candidate_custom_op(qualified: str, device_type: str) -> Callable[..., Any] | None:
    """The implementation of the custom op `ns::name` when the candidate registered it (custom_op or
    triton_op over its own code): its body is the candidate's and is traced like forward. None otherwise."""
    try:
        from torch._library.custom_ops import OPDEFS
    except ImportError:  # pragma: no cover - older torch
        return None
    definition = OPDEFS.get(qualified)
    function = getattr(definition, "_init_fn", None)
    if getattr(function, "__module__", None) != CANDIDATE_MODULE:
        return None
    backends = getattr(definition, "_backend_fns", {}) or {}
    return backends.get(device_type) or function


def _device_type(args: Any) -> str:
    for value in args:
        if isinstance(value, torch.Tensor):
            return value.device.type
    return "cpu"


class AtenComputeRecorder(TorchDispatchMode):
    """Lists the ATen compute ops the candidate runs: outside Triton launches, and inside them when the
    caller is candidate code (a launch callback). Ops are told apart by their qualified name."""

    def __init__(
        self,
        launches: LaunchRecorder,
        compute: Counter[str] | None = None,
        elements: dict[str, int] | None = None,
    ) -> None:
        super().__init__()
        self.launches = launches
        self.compute: Counter[str] = Counter() if compute is None else compute
        # op -> the most elements of any tensor it took: reference parity bounds what an allowed op may touch
        self.elements: dict[str, int] = {} if elements is None else elements

    def _note(self, name: str, args: Any, kwargs: dict[str, Any]) -> None:
        self.compute[name] += 1
        largest = max(
            (v.numel() for v in tree_leaves((args, kwargs)) if isinstance(v, torch.Tensor)), default=0
        )
        self.elements[name] = max(self.elements.get(name, 0), int(largest))

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        namespace = str(getattr(func, "namespace", "aten"))
        name = str(getattr(getattr(func, "overloadpacket", None), "__name__", func))
        if namespace in ANNOTATION_NAMESPACES:
            return func(*args, **kwargs)
        candidates = self.launches.depth == 0 or called_by_candidate()
        if namespace in ("aten", "prims"):
            if candidates and name not in NON_COMPUTE_ATEN_OPS:
                self._note(name, args, kwargs)
            return func(*args, **kwargs)
        qualified = f"{namespace}::{name}"
        if qualified in NON_COMPUTE_LIBRARY_OPS:
            return func(*args, **kwargs)
        implementation = _candidate_custom_op(qualified, _device_type(args))
        if implementation is None:
            if candidates:
                self._note(qualified, args, kwargs)  # a library's op: its body may be native code nobody sees
            return func(*args, **kwargs)
        # The candidate's own op: its body runs here, under a recorder, so every op it runs is seen (called
        # through the dispatcher, the body would run with this mode off the stack).
        with AtenComputeRecorder(self.launches, self.compute, self.elements):
            return implementation(*args, **kwargs)


def _disable_dynamo_only_once_loaded(mode_class: type[TorchDispatchMode]) -> None:
    """TorchDispatchMode wraps every subclass's __torch_dispatch__ in torch._disable_dynamo, whose first
    call imports torch._dynamo (2-3 s of CPU in every candidate). Dynamo can only trace into the mode once
    it is loaded, so the real disable is taken then, and the plain method runs until then."""
    raw = getattr(mode_class.__dict__["__torch_dispatch__"], "__wrapped__", None)
    if raw is None:  # a torch without the wrapper: nothing to do
        return

    def dispatch(*args: Any, **kwargs: Any) -> Any:
        dynamo = sys.modules.get("torch._dynamo")
        if dynamo is None:
            return raw(*args, **kwargs)
        disabled = dynamo.disable(raw, recursive=True, wrapping=False)
        setattr(raw, "__dynamo_disable", disabled)  # what torch's wrapper looks up before importing
        return disabled(*args, **kwargs)

    setattr(raw, "__dynamo_disable", dispatch)


_disable_dynamo_only_once_loaded(AtenComputeRecorder)


class HostTransferRecorder(TorchFunctionMode):
    """Lists tensor-to-host conversions of data derived from the inputs (anything but the model's own
    parameters and buffers) made by candidate code: computing on the host behind a copy kernel."""

    def __init__(self, launches: LaunchRecorder, clean_storages: set[int]) -> None:
        super().__init__()
        self.launches = launches
        self.clean_storages = clean_storages
        self.derived: Counter[str] = Counter()
        self.clean = 0  # conversions of parameters and buffers
        self.device_to_host = 0  # conversions of GPU tensors by anyone (CUPTI copies are checked against it)

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = str(getattr(func, "__name__", ""))
        subject = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if subject is not None and self._is_transfer(name, subject, args, kwargs):
            self._note(name, subject)
        return func(*args, **kwargs)

    @staticmethod
    def _is_transfer(name: str, subject: torch.Tensor, args: Any, kwargs: dict[str, Any]) -> bool:
        if name in STORAGE_METHODS and subject.device.type == "cuda":
            return False
        if name in HOST_TRANSFER_METHODS:
            return True
        if subject.device.type == "cpu":
            return False
        if name == "cpu":
            return True
        if name == "to":
            targets = [*args[1:], kwargs.get("device")]
            return any(
                isinstance(t, (str, torch.device)) and torch.device(t).type == "cpu"
                for t in targets
                if t is not None and not isinstance(t, torch.dtype)
            ) or any(isinstance(t, torch.Tensor) and t.device.type == "cpu" for t in args[1:])
        return False

    def _note(self, name: str, subject: torch.Tensor) -> None:
        if subject.device.type == "cuda":
            self.device_to_host += 1
        if not (self.launches.depth == 0 or called_by_candidate(3)):
            return
        try:
            storage = subject.untyped_storage().data_ptr()
        except (RuntimeError, NotImplementedError):
            storage = None
        if storage is not None and storage in self.clean_storages:
            self.clean += 1
        else:
            self.derived[name] += 1


def model_storages(model: torch.nn.Module | None) -> set[int]:
    """Storages of the model's parameters and buffers: reading those on the host is not input-derived."""
    if model is None:
        return set()
    storages = set()
    for tensor in (*model.parameters(), *model.buffers()):
        try:
            storages.add(tensor.untyped_storage().data_ptr())
        except (RuntimeError, NotImplementedError):
            continue
    return storages


def _outermost_op(event: Any) -> bool:
    """A profiled op that is not inside another aten/prims op nor inside a Triton launch."""
    parent = event.cpu_parent
    while parent is not None:
        namespace, separator, _ = str(parent.name).partition("::")
        if parent.name == LAUNCH_RANGE or (separator and namespace in ("aten", "prims")):
            return False
        parent = parent.cpu_parent
    return True


def _inside_formatting(event: Any) -> bool:
    parent = event.cpu_parent
    while parent is not None:
        if parent.name == FORMAT_RANGE:
            return True
        parent = parent.cpu_parent
    return False


def profiled_compute(profiler: torch.autograd.profiler.profile) -> tuple[Counter[str], Counter[str]]:
    """ATen compute ops the profiler saw outside Triton launches (custom ops are transparent: their
    bodies' ops count), split into those torch ran formatting a tensor as text (a print: how many ops
    depends on the values) and the rest. The profiler hooks the dispatcher in C++, so a candidate that
    pops or disables the dispatch mode does not hide from it."""
    compute: Counter[str] = Counter()
    formatting: Counter[str] = Counter()
    for event in profiler.function_events:
        if event.device_type != torch.autograd.DeviceType.CPU:
            continue
        namespace, separator, name = str(event.name).partition("::")
        if not separator or namespace not in ("aten", "prims"):
            continue
        if name in NON_COMPUTE_ATEN_OPS or name in COMPOSITE_NON_COMPUTE_ATEN_OPS or not _outermost_op(event):
            continue
        (formatting if _inside_formatting(event) else compute)[name] += 1
    return compute, formatting


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


def _gpu_kernels(profiler: torch.autograd.profiler.profile) -> list[dict[str, Any]]:
    """GPU kernels (and driver copies/fills) per name, split by whether they ran off forward's stream."""
    events = [e for e in profiler.function_events if e.device_type == torch.autograd.DeviceType.CUDA]
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
    aten_compute_elements: dict[str, int] = field(default_factory=dict)  # op -> largest tensor it took
    aten_compute_profiled: Counter[str] = field(default_factory=Counter)  # the profiler's view (see above)
    aten_formatting_profiled: Counter[str] = field(default_factory=Counter)  # ... of formatting tensors
    host_transfers: Counter[str] = field(default_factory=Counter)  # input-derived data read on the host
    host_transfers_clean: int = 0
    device_to_host_conversions: int = 0
    dispatch_problems: list[str] = field(default_factory=list)
    gpu_kernels: list[dict[str, Any]] = field(default_factory=list)
    threads_left: list[str] = field(default_factory=list)
    children_left: int = 0
    formatted_tensors: int = 0  # tensors turned into text (print, f-strings): ATen compute with modes off

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
            "aten_compute_elements": dict(self.aten_compute_elements),
            "aten_compute_profiled": dict(self.aten_compute_profiled),
            "aten_formatting_profiled": dict(self.aten_formatting_profiled),
            "host_transfers": dict(self.host_transfers),
            "host_transfers_clean": self.host_transfers_clean,
            "device_to_host_conversions": self.device_to_host_conversions,
            "bad_kernel_arguments": dict(self.launches.bad_arguments),
            "gpu_kernels": [
                {**k, "own": k["name"] in own_names, "memory": _is_memory_kernel(k["name"])}
                for k in self.gpu_kernels
            ],
            "gpu_kernel_time_us": kernel_time,
            "own_kernel_time_us": own_time,
            "threads_left": self.threads_left,
            "children_left": self.children_left,
            "formatted_tensors": self.formatted_tensors,
        }


@contextmanager
def _tensor_formatting_counted(trace: ForwardTrace) -> Iterator[None]:
    """Counts the tensors forward turns into text. torch formats a tensor with the dispatch modes off, so
    only the profiler sees the ATen ops it runs; the count and the profiler range around each let the
    verdict name a print as the cause instead of compute hidden from kforge's recorder (the ops are
    still compute around the launches), and let a reference that prints allow as many prints."""
    import torch._tensor_str as tensor_str

    original = tensor_str._str

    def counted(*args: Any, **kwargs: Any) -> str:
        trace.formatted_tensors += 1
        with _RECORD_RANGE(FORMAT_RANGE):
            return original(*args, **kwargs)

    tensor_str._str = counted
    try:
        yield
    finally:
        tensor_str._str = original


def _leave_mode(mode: Any, stack: Callable[[], list[Any]], push: Callable[[Any], None]) -> None:
    """Exits one of kforge's modes whatever the candidate did to the stack: foreign modes above it were
    cleared; a mode the candidate popped is pushed back first, so its own bookkeeping stays balanced."""
    if not any(entry is mode for entry in stack()):
        push(mode)
    mode.__exit__(None, None, None)


@contextmanager
def traced_forward(
    recorder: LaunchRecorder,
    device: torch.device,
    ghost: bool = False,
    model: torch.nn.Module | None = None,
) -> Iterator[ForwardTrace]:
    """Traces one forward call: launches, ATen compute (dispatch mode and profiler), host transfers,
    GPU kernels (on CUDA), mode stacks and leftovers."""
    trace = ForwardTrace()
    threads_before = set(threading.enumerate())
    children_before = _child_processes()
    aten = AtenComputeRecorder(recorder)
    transfers = HostTransferRecorder(recorder, model_storages(model))
    # torch.profiler.profile's front end would import torch._inductor (2-3 s of CPU) to read one setting.
    profiler = torch.autograd.profiler.profile(
        use_device="cuda" if device.type == "cuda" else None, use_kineto=True
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        profiler.__enter__()
    try:
        if device.type == "cuda":
            with torch.cuda.device(device):
                torch.cuda._sleep(STREAM_MARKER_CYCLES)  # the stream marker (STREAM_MARKER_KERNEL)
        with recorder.recording(trace.launches, device, ghost), _tensor_formatting_counted(trace):
            aten.__enter__()
            transfers.__enter__()
            try:
                yield trace
            finally:
                trace.dispatch_problems = mode_stack_problems((aten,), (transfers,))
                clear_foreign_modes((aten,), (transfers,))
                _leave_mode(transfers, function_modes, _PUSH_FUNCTION_MODE)
                _leave_mode(aten, dispatch_modes, _PUSH_DISPATCH_MODE)
    finally:
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                profiler.__exit__(None, None, None)
            trace.aten_compute_profiled, trace.aten_formatting_profiled = profiled_compute(profiler)
            if device.type == "cuda":
                trace.gpu_kernels = _gpu_kernels(profiler)
        except (RuntimeError, AssertionError) as exc:  # the candidate stopped or replaced the profiler
            trace.dispatch_problems.append(f"the profiler recording forward was disturbed: {exc}")
        trace.aten_compute = aten.compute
        trace.aten_compute_elements = aten.elements
        trace.host_transfers = transfers.derived
        trace.host_transfers_clean = transfers.clean
        trace.device_to_host_conversions = transfers.device_to_host
        trace.threads_left = sorted(
            t.name for t in threading.enumerate() if t not in threads_before and t.is_alive()
        )
        trace.children_left = len(_child_processes() - children_before)
