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
from kforge.worker.timing import SampleTimer
from kforge.worker.tracebacks import exception_summary


@dataclass
class CandidateState:
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    prefix: str = "kf"
    path: str = ""
    model: torch.nn.Module | None = None
    importer: SharedTensorImporter | None = None
    exporter: SharedTensorExporter | None = None
    timing_inputs: list[Any] | None = None
    timer: SampleTimer | None = None
    init_buffers: list[SharedTensorImporter] = field(default_factory=list)


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
        return {"load": self.load, "run": self.run, "release": self.release, "time": self.time}

    def _fail(self, kind: str, exc: BaseException) -> WorkerError:
        summary = exception_summary(exc, self.state.path)
        if _is_device_fault(exc):
            kind = "device_fault"
        return WorkerError(kind, f"{summary['exception']}: {summary['message']}", summary)

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        state = self.state
        state.device = select_device(str(request["device"]))
        state.prefix = str(request["prefix"])
        state.path = str(request["candidate_path"])
        if state.device.type == "cpu":
            prepare_triton_interpreter()
        importer = SharedTensorImporter(state.device, state.prefix, cuda_driver_for(state.device))
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
        state.importer = SharedTensorImporter(state.device, state.prefix, cuda_driver_for(state.device))
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

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """One correctness trial: forward on the shared inputs, outputs shared back."""
        state = self.state
        self.release({})
        result = self._call(self._open_inputs(request["inputs"]))
        state.exporter = SharedTensorExporter(state.device, state.prefix, cuda_driver_for(state.device))
        container = type(result).__name__ if isinstance(result, (tuple, list)) else None
        outputs = correctness.flatten_outputs(result)
        if container is not None and len(outputs) > correctness.MAX_OUTPUTS:
            return {"outputs": [], "container": container, "container_length": len(outputs)}
        return {"outputs": [self._export_output(item) for item in outputs], "container": container}

    def _export_output(self, item: Any) -> dict[str, Any]:
        assert self.state.exporter is not None
        if type(item) is not torch.Tensor:
            return {"t": "other", "type": values.describe(item)}
        return {"t": "tensor", "device": str(item.device), **self.state.exporter.export(item)}

    def release(self, request: dict[str, Any]) -> dict[str, Any]:
        """Drop the last trial's mappings and output buffers (the judge has copied what it needs)."""
        state = self.state
        if state.exporter is not None:
            state.exporter.release()
            state.exporter = None
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
                return state.model(*inputs) if state.model is not None else None

        try:
            state.timer.warm_up(call, int(request.get("warmup", 0)))
            return {"samples_ms": state.timer.samples_ms(call, int(request["count"]))}
        except BaseException as exc:  # noqa: BLE001
            raise self._fail("forward_error", exc) from None


def candidate_exception(exc: BaseException) -> dict[str, Any]:
    """An exception escaping a handler (e.g. SystemExit from the candidate) is still a verdict."""
    return protocol.error_response("forward_error", f"{type(exc).__name__}: {exc}")


def main() -> None:
    faulthandler.enable()  # a native crash still prints the Python frames to the captured log
    worker = CandidateWorker()
    protocol.serve(worker.handlers(), candidate_exception)


if __name__ == "__main__":
    main()
