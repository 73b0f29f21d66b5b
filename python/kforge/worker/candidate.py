"""The candidate worker: untrusted, imports only the candidate. Builds ModelNew with the judge's seed and
init inputs, runs it on tensors the judge shared, and shares its outputs back. Run by the kforge binary
as `python -m kforge.worker.candidate` with the protocol pipes on fds 3 and 4.
"""

from __future__ import annotations

import faulthandler
import inspect
from dataclasses import dataclass, field
from typing import Any

import torch

from kforge.worker import correctness, protocol, values
from kforge.worker.interpreter import prepare_triton_interpreter
from kforge.worker.protocol import WorkerError
from kforge.worker.runtime import cuda_driver_for, load_module_from_path, select_device
from kforge.worker.tensors import SharedTensorExporter, SharedTensorImporter
from kforge.worker.timing import SampleTimer, replaced_timing_functions
from kforge.worker.trace import ForwardTrace, LaunchLog, LaunchRecorder, traced_forward
from kforge.worker.tracebacks import exception_summary
from kforge.worker.uninitialized import uninitialized_memory_poisoned


@dataclass
class CandidateState:
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    transfer_dir: str = ""  # this evaluation's buffer folder (CPU tensors)
    path: str = ""
    model: torch.nn.Module | None = None
    importer: SharedTensorImporter | None = None
    exporter: SharedTensorExporter | None = None
    timing_inputs: list[Any] | None = None
    timer: SampleTimer | None = None
    init_buffers: list[SharedTensorImporter] = field(default_factory=list)
    inputs: list[Any] | None = None  # the last trial's inputs, kept for an input-refresh rerun
    last_timed_output: Any = None  # output of the last timed call, checked by the judge
    recorder: LaunchRecorder = field(default_factory=LaunchRecorder)
    prepared: bool = False  # the device is set up (CUDA context made) before any candidate code runs


def _overlaps_itself(tensor: torch.Tensor) -> bool:
    return any(stride == 0 and size > 1 for size, stride in zip(tensor.shape, tensor.stride(), strict=True))


def _storage_span(tensor: torch.Tensor) -> tuple[int, int]:
    start = tensor.untyped_storage().data_ptr()
    return start, start + tensor.untyped_storage().nbytes()


def _output_problem(item: torch.Tensor, inputs: list[Any]) -> str | None:
    """Why a returned tensor is not a plain, dense, freshly computed output (None if it is)."""
    if item.layout != torch.strided:
        return f"a {item.layout} tensor, expected a dense (strided) tensor"
    if item.numel() > 1 and _overlaps_itself(item):
        return "a tensor whose elements share memory (a stride-0 expand), expected one value per element"
    if item.numel() == 0:
        return None
    low, high = _storage_span(item)
    for index, value in enumerate(inputs):
        if isinstance(value, torch.Tensor) and value.numel() > 0 and value.device == item.device:
            other_low, other_high = _storage_span(value)
            if low < other_high and other_low < high:
                return f"a view of input {index}, expected a tensor of its own"
    return None


def _is_compile_error(exc: BaseException) -> bool:
    """Triton reports kernel compilation failures from its compiler package."""
    return any(cls.__module__.startswith("triton.compiler") for cls in type(exc).__mro__)


def _is_device_fault(exc: BaseException) -> bool:
    """A CUDA fault poisons the context: the process cannot go on after it."""
    text = str(exc)
    return type(exc).__name__ == "AcceleratorError" or "CUDA error" in text or "cudaError" in text


def _signature_problem(model_class: type, forward_arity: int | None) -> str | None:
    if forward_arity is None:
        return None
    forward = getattr(model_class, "forward", None)
    if forward is None:
        return "ModelNew has no forward method"
    try:
        signature = inspect.signature(forward)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(None, *([None] * forward_arity))
    except TypeError as exc:
        return f"ModelNew.forward cannot take the problem's {forward_arity} input(s): {exc}"
    return None


class CandidateWorker:
    def __init__(self) -> None:
        self.state = CandidateState()

    def handlers(self) -> dict[str, protocol.Handler]:
        handlers: dict[str, protocol.Handler] = {
            "prepare": self.prepare,
            "load": self.load,
            "run": self.run,
            "release": self.release,
            "time": self.time,
            "timed_output": self.timed_output,
        }
        return {op: self._finished_on_device(handler) for op, handler in handlers.items()}

    def _finished_on_device(self, handler: protocol.Handler) -> protocol.Handler:
        """A reply only once every kernel the request launched has finished (every stream): kforge lets
        another evaluation's timing start when the call returns."""

        def call(request: dict[str, Any]) -> dict[str, Any]:
            try:
                reply = handler(request)
            except BaseException:
                self._synchronize(quiet=True)  # the request's own error is the one to report
                raise
            self._synchronize(quiet=False)
            return reply

        return call

    def _synchronize(self, quiet: bool) -> None:
        if self.state.device.type != "cuda":
            return
        try:
            torch.cuda.synchronize(self.state.device)
        except BaseException as exc:  # noqa: BLE001 - an asynchronous fault of the candidate's kernels
            if not quiet:
                raise self._fail("forward_error", exc) from None

    def _fail(self, kind: str, exc: BaseException) -> WorkerError:
        summary = exception_summary(exc, self.state.path)
        if _is_device_fault(exc):
            kind = "device_fault"
        return WorkerError(kind, f"{summary['exception']}: {summary['message']}", summary)

    def prepare(self, request: dict[str, Any]) -> dict[str, Any]:
        """Sets up the device (on a GPU: creates the CUDA context) and the launch recorder. No candidate
        code runs here and no kernel is launched, so kforge sends it without holding the GPU gate."""
        state = self.state
        state.device = select_device(str(request["device"]))
        if state.device.type == "cpu":
            prepare_triton_interpreter()
        state.recorder.install()
        state.prepared = True
        return {}

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        state = self.state
        if not state.prepared:
            self.prepare(request)
        elif state.device != select_device(str(request["device"])):
            raise WorkerError("usage", f"prepared for {state.device}, asked to load on {request['device']}")
        state.transfer_dir = str(request["transfer_dir"])
        state.path = str(request["candidate_path"])
        importer = SharedTensorImporter(state.device, state.transfer_dir, cuda_driver_for(state.device))
        state.init_buffers.append(importer)
        init_inputs = [values.decode(item, importer.open) for item in request["init_inputs"]]
        try:
            module = load_module_from_path(state.path, "kforge_candidate")
        except BaseException as exc:  # noqa: BLE001 - candidate code may raise anything
            raise self._fail("import_error", exc) from None
        model_class = getattr(module, "ModelNew", None)
        if not isinstance(model_class, type) or not issubclass(model_class, torch.nn.Module):
            raise WorkerError("missing_model_new", "the candidate defines no class ModelNew(nn.Module)")
        problem = _signature_problem(model_class, request.get("forward_arity"))
        if problem is not None:
            raise WorkerError("signature", problem)
        try:
            torch.manual_seed(int(request["seed"]))
            model = model_class(*init_inputs)
            state.model = model.to(state.device).eval()
        except BaseException as exc:  # noqa: BLE001
            raise self._fail("constructor_error", exc) from None
        return {}

    def _open_inputs(self, encoded: list[Any]) -> list[Any]:
        state = self.state
        state.importer = SharedTensorImporter(state.device, state.transfer_dir, cuda_driver_for(state.device))
        return [values.decode(item, state.importer.open) for item in encoded]

    def _call(self, inputs: list[Any]) -> Any:
        model = self.state.model
        assert model is not None, "load first"
        try:
            with torch.no_grad():
                result = model(*inputs)
            if self.state.device.type == "cuda":
                torch.cuda.synchronize(self.state.device)
        except BaseException as exc:  # noqa: BLE001
            raise self._fail("compile_error" if _is_compile_error(exc) else "forward_error", exc) from None
        return result

    def _traced_call(self, inputs: list[Any], ghost: bool) -> tuple[Any, ForwardTrace]:
        """A forward with poisoned fresh memory and every launch, ATen op and GPU kernel recorded."""
        state = self.state
        with uninitialized_memory_poisoned(), traced_forward(state.recorder, state.device, ghost) as trace:
            result = self._call(inputs)
        return result, trace

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """One trial: forward on the shared inputs, outputs shared back with the forward's trace.
        reuse_inputs reruns on the previous trial's buffers (the judge rewrote them: input refresh);
        ghost skips the candidate's own Triton kernels (decoy detection)."""
        state = self.state
        reuse = bool(request.get("reuse_inputs")) and state.inputs is not None
        self._release_outputs()
        if not reuse:
            self.release({})
            state.inputs = self._open_inputs(request["inputs"])
        assert state.inputs is not None
        result, trace = self._traced_call(state.inputs, bool(request.get("ghost")))
        return {**self._export_result(result, state.inputs), "trace": trace.to_json()}

    def _export_result(self, result: Any, inputs: list[Any]) -> dict[str, Any]:
        state = self.state
        state.exporter = SharedTensorExporter(state.device, state.transfer_dir, cuda_driver_for(state.device))
        container = type(result).__name__ if isinstance(result, (tuple, list)) else None
        outputs = correctness.flatten_outputs(result)
        if container is not None and len(outputs) > correctness.MAX_OUTPUTS:
            return {"outputs": [], "container": container, "container_length": len(outputs)}
        exported = [self._export_output(item, inputs) for item in outputs]
        return {"outputs": exported, "container": container}

    def _export_output(self, item: Any, inputs: list[Any]) -> dict[str, Any]:
        assert self.state.exporter is not None
        if type(item) is not torch.Tensor:
            return {"t": "other", "type": values.describe(item)}
        problem = _output_problem(item, inputs)
        if problem is not None:
            return {"t": "invalid", "reason": problem}
        return {"t": "tensor", "device": str(item.device), **self.state.exporter.export(item)}

    def _release_outputs(self) -> None:
        if self.state.exporter is not None:
            self.state.exporter.release()
            self.state.exporter = None

    def release(self, request: dict[str, Any]) -> dict[str, Any]:
        """Drop the last trial's mappings and output buffers (the judge has copied what it needs)."""
        state = self.state
        self._release_outputs()
        state.inputs = None
        state.last_timed_output = None
        if state.importer is not None:
            state.importer.release()
            state.importer = None
        state.timing_inputs = None
        return {}

    def time(self, request: dict[str, Any]) -> dict[str, Any]:
        state = self.state
        if state.device.type != "cuda":
            raise WorkerError("usage", "timing needs a CUDA device")
        if "inputs" in request:
            self.release({})
            state.timing_inputs = self._open_inputs(request["inputs"])
        if state.timing_inputs is None:
            raise WorkerError("protocol", "the first time request must carry the inputs")
        if state.timer is None:
            state.timer = SampleTimer(state.device)
        inputs = state.timing_inputs
        self._call(inputs)  # surfaces errors as a verdict before timing starts

        def call() -> object:
            with torch.no_grad():
                state.last_timed_output = state.model(*inputs) if state.model is not None else None
            return state.last_timed_output

        count = int(request["count"])
        try:
            state.timer.warm_up(call, int(request.get("warmup", 0)))
            with state.recorder.recording(LaunchLog(), state.device) as launches:
                samples = state.timer.samples_ms(call, count, self._poison_last_output)
        except BaseException as exc:  # noqa: BLE001
            raise self._fail("forward_error", exc) from None
        return {
            "samples_ms": samples,
            "own_launches": launches.own_total(),
            "calls": count,
            "replaced_timing_functions": replaced_timing_functions(),
        }

    def _poison_last_output(self) -> None:
        """Untimed, before each sample: the previous output becomes NaN, so a call that skips its work
        cannot return a recycled block (or a cached tensor) that still holds a correct result."""
        for item in correctness.flatten_outputs(self.state.last_timed_output):
            if type(item) is torch.Tensor and item.numel() > 0:
                item.fill_(float("nan") if item.is_floating_point() else -1)

    def timed_output(self, request: dict[str, Any]) -> dict[str, Any]:
        """Shares the output of the last timed call, so the judge can check what was timed."""
        state = self.state
        if state.timing_inputs is None or state.last_timed_output is None:
            raise WorkerError("protocol", "timed_output needs a finished time request")
        self._release_outputs()
        return self._export_result(state.last_timed_output, state.timing_inputs)


def candidate_exception(exc: BaseException) -> dict[str, Any]:
    """An exception escaping a handler (e.g. SystemExit from the candidate) is still a verdict."""
    return protocol.error_response("forward_error", f"{type(exc).__name__}: {exc}")


def main() -> None:
    faulthandler.enable()  # a native crash still prints the Python frames to the captured log
    worker = CandidateWorker()
    protocol.serve(worker.handlers(), candidate_exception)


if __name__ == "__main__":
    main()
