"""The candidate worker: untrusted, imports only the candidate. Builds ModelNew with the judge's seed and
init inputs, runs it on tensors the judge shared, and shares its outputs back. Run by the kforge binary
as `python -m kforge.worker.candidate` with the request pipe on fd 3 and the reply pipe on the hidden,
sealed descriptor that kforge names in its first line (kforge.worker.protocol).
"""

from __future__ import annotations

import faulthandler
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from kforge.worker import correctness, protocol, values
from kforge.worker.beside_reference import BesideReference, build_beside_reference, judge_switches
from kforge.worker.device_memory import DeviceMemoryCap
from kforge.worker.dispatch_guard import (
    clear_foreign_modes,
    kforge_owned,
    mode_stack_problems,
    tensor_type_problem,
)
from kforge.worker.interpreter import prepare_triton_interpreter
from kforge.worker.perturbation import match_and_apply
from kforge.worker.placements import KeptOutputs, RotatingInputs
from kforge.worker.protocol import WorkerError
from kforge.worker.runtime import cuda_driver_for, load_module_from_path, select_device
from kforge.worker.tensors import SharedTensorExporter, SharedTensorImporter
from kforge.worker.timed_outputs import (
    TimedOutputLog,
    cloned,
    copy_values,
    input_attribute_problems,
    poison_outputs,
)
from kforge.worker.timing import (
    Pacing,
    SampleBatch,
    SampleTimer,
    WarmUpPolicy,
    replaced_timing_functions,
)
from kforge.worker.timing_stream import TimingStream, use_timing_stream
from kforge.worker.trace import ForwardTrace, LaunchLog, LaunchRecorder, traced_forward
from kforge.worker.tracebacks import exception_summary
from kforge.worker.uninitialized import uninitialized_memory_poisoned


@dataclass
class CandidateState:
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    transfer_dir: str = ""  # this evaluation's buffer folder (CPU tensors)
    path: str = ""
    model: torch.nn.Module | None = None
    model_class: type | None = None
    generalised_model: torch.nn.Module | None = None  # built from the generalisation instance's init inputs
    importer: SharedTensorImporter | None = None
    exporter: SharedTensorExporter | None = None
    timing_inputs: RotatingInputs | None = None  # private copies the timed calls run on, by placement
    kept_outputs: KeptOutputs = field(default_factory=KeptOutputs)  # the last timed outputs (placements.py)
    timing_shared: list[Any] | None = None  # the judge's timing buffers: the copies' final values go back
    value_sets: list[list[Any]] = field(default_factory=list)  # the judge's timing input values, by set
    value_importer: SharedTensorImporter | None = None
    timed_log: TimedOutputLog = field(default_factory=TimedOutputLog)
    pacing: Pacing = field(default_factory=Pacing)
    timer: SampleTimer | None = None
    timing_stream: TimingStream | None = None  # chosen once, before any candidate code runs
    init_buffers: list[SharedTensorImporter] = field(default_factory=list)
    inputs: list[Any] | None = None  # the last trial's inputs, kept for an input-refresh rerun
    last_timed_output: Any = None  # output of the last timed call, checked by the judge
    last_run_output: Any = None  # output of the last trial or probe, poisoned once the judge has it
    recorder: LaunchRecorder = field(default_factory=LaunchRecorder)
    prepared: bool = False  # the device is set up (CUDA context made) before any candidate code runs
    memory_cap: DeviceMemoryCap = field(default_factory=DeviceMemoryCap)
    beside: BesideReference | None = None  # the problem's Model, timed beside ModelNew (issue 31)
    beside_error: str | None = None  # why there is none, or why it stopped being usable


def _output_problem(item: torch.Tensor) -> str | None:
    """Why a returned tensor is not a plain, dense output (None if it is)."""
    if item.layout != torch.strided:
        return f"a {item.layout} tensor, expected a dense (strided) tensor"
    if item.numel() > 1 and correctness.overlaps_itself(item):
        return "a tensor whose elements share memory (a stride-0 expand), expected one value per element"
    return None


def _model_tensor_problems(model: torch.nn.Module | None) -> list[str]:
    """Parameters and buffers that are tensor subclasses (or carry their own __torch_function__)."""
    if model is None:
        return []
    named = [*model.named_parameters(), *model.named_buffers()]
    problems = (tensor_type_problem(tensor, f"`{name}`") for name, tensor in named)
    return [problem for problem in problems if problem is not None]


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
            over_limit = self.state.memory_cap.exceeded()
            if over_limit is not None:
                raise over_limit
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
        if (machine := self.state.memory_cap.device_was_full(exc)) is not None:
            return WorkerError("environment", f"{machine} ({summary['exception']}: {summary['message']})")
        if self.state.memory_cap.is_over_limit(exc):
            return self.state.memory_cap.error(f"{summary['exception']}: {summary['message']}")
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
        elif state.timing_stream is None:
            state.timing_stream = use_timing_stream(state.device)
        state.memory_cap.install(state.device, request.get("gpu_memory_limit"))
        state.recorder.install()
        state.prepared = True
        return {}

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        state = self.state
        if not state.prepared:
            self.prepare(request)
        elif state.device != select_device(str(request["device"])):
            raise WorkerError("usage", f"prepared for {state.device}, asked to load on {request['device']}")
        generalised = request.get("instance") == "generalisation"
        if not generalised:
            state.transfer_dir = str(request["transfer_dir"])
            state.path = str(request["candidate_path"])
        importer = SharedTensorImporter(state.device, state.transfer_dir, cuda_driver_for(state.device))
        state.init_buffers.append(importer)
        init_inputs = [values.decode(item, importer.open) for item in request["init_inputs"]]
        reply: dict[str, Any] = {}
        if not generalised and request.get("reference"):
            reply["beside_reference"] = self._build_beside(request, init_inputs)
        model_class = state.model_class if generalised else self._model_class(request)
        if model_class is None:
            raise WorkerError("protocol", "the generalisation instance is loaded after the main one")
        try:
            torch.manual_seed(int(request["seed"]))
            model = model_class(*init_inputs).to(state.device).eval()
        except BaseException as exc:  # noqa: BLE001
            raise self._fail("constructor_error", exc) from None
        problems = mode_stack_problems() + _model_tensor_problems(model)
        if problems:
            clear_foreign_modes()
            raise WorkerError(
                "dispatch-mode-tampering",
                "; ".join(problems) + ": kforge must handle the candidate's tensors without the candidate's "
                "code running inside its operations",
            )
        if generalised:
            state.generalised_model = model
        else:
            state.model, state.model_class = model, model_class
        return {**reply, "perturbation": self._perturb_parameters(model, request.get("parameters"))}

    def _build_beside(self, request: dict[str, Any], init_inputs: list[Any]) -> dict[str, Any]:
        """The problem's Model, built here before the candidate's code is imported, to be timed beside
        ModelNew in this process (beside_reference.py). A failure is no fault of the candidate: timing
        then compares across processes, and the verdict says why."""
        state = self.state
        parameters = request.get("parameters") or {}
        importer = SharedTensorImporter(state.device, state.transfer_dir, cuda_driver_for(state.device))
        try:
            perturbed = {
                str(name): values.decode(item, importer.open).clone()
                for name, item in zip(
                    parameters.get("names", []), parameters.get("perturbed", []), strict=True
                )
            }
            state.beside = build_beside_reference(
                request["reference"], state.device, cloned(init_inputs), perturbed
            )
            state.beside_error = None
        except BaseException as exc:  # noqa: BLE001 - the problem may not build here (its imports)
            state.beside, state.beside_error = (
                None,
                f"the reference could not be built here: {type(exc).__name__}: {exc}",
            )
        finally:
            importer.release()
        return {"built": state.beside is not None, "why": state.beside_error}

    def _model_class(self, request: dict[str, Any]) -> type:
        """Imports the candidate once and checks its ModelNew; the generalisation instance reuses it."""
        try:
            module = load_module_from_path(self.state.path, "kforge_candidate")
        except BaseException as exc:  # noqa: BLE001 - candidate code may raise anything
            raise self._fail("import_error", exc) from None
        model_class = getattr(module, "ModelNew", None)
        if not isinstance(model_class, type) or not issubclass(model_class, torch.nn.Module):
            raise WorkerError("missing_model_new", "the candidate defines no class ModelNew(nn.Module)")
        problem = _signature_problem(model_class, request.get("forward_arity"))
        if problem is not None:
            raise WorkerError("signature", problem)
        return model_class

    def _perturb_parameters(
        self, model: torch.nn.Module, parameters: dict[str, Any] | None
    ) -> dict[str, Any]:
        """Sets the reference's perturbed parameter values in ModelNew (perturbation.py); the report says
        which tensors were found, and which could not be."""
        state = self.state
        if not parameters or not parameters.get("names"):
            return {"entries": 0, "perturbed": 0, "matched": {}, "by_value": [], "unmatched": []}
        importer = SharedTensorImporter(state.device, state.transfer_dir, cuda_driver_for(state.device))
        try:
            defaults = [values.decode(item, importer.open) for item in parameters["defaults"]]
            perturbed = [values.decode(item, importer.open) for item in parameters["perturbed"]]
            return match_and_apply(model, list(parameters["names"]), defaults, perturbed).to_json()
        except BaseException as exc:  # noqa: BLE001 - ModelNew's own tensors may be anything
            raise self._fail("constructor_error", exc) from None
        finally:
            importer.release()

    def _open_inputs(self, encoded: list[Any]) -> list[Any]:
        state = self.state
        state.importer = SharedTensorImporter(state.device, state.transfer_dir, cuda_driver_for(state.device))
        return [values.decode(item, state.importer.open) for item in encoded]

    def _call(self, inputs: list[Any], model: torch.nn.Module | None = None) -> Any:
        model = model if model is not None else self.state.model
        assert model is not None, "load first"
        try:
            with torch.no_grad():
                result = model(*inputs)
            if self.state.device.type == "cuda":
                torch.cuda.synchronize(self.state.device)
        except BaseException as exc:  # noqa: BLE001
            raise self._fail("compile_error" if _is_compile_error(exc) else "forward_error", exc) from None
        return result

    def _traced_call(
        self, inputs: list[Any], ghost: bool, model: torch.nn.Module | None = None
    ) -> tuple[Any, ForwardTrace]:
        """A forward with poisoned fresh memory and every launch, ATen op and GPU kernel recorded."""
        state = self.state
        with (
            uninitialized_memory_poisoned(),
            traced_forward(state.recorder, state.device, ghost, model or state.model) as trace,
        ):
            result = self._call(inputs, model)
        return result, trace

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """One trial: forward on the shared inputs, outputs shared back with the forward's trace.
        reuse_inputs reruns on the previous trial's buffers (the judge rewrote them: input refresh);
        ghost skips the candidate's own Triton kernels (decoy detection); instance "generalisation" runs
        the ModelNew built for the generalisation trial."""
        state = self.state
        model = state.generalised_model if request.get("instance") == "generalisation" else state.model
        if model is None:
            raise WorkerError("protocol", f"no ModelNew for instance {request.get('instance', 'main')!r}")
        reuse = bool(request.get("reuse_inputs")) and state.inputs is not None
        self._release_outputs()
        if not reuse:
            self.release({})
            state.inputs = self._open_inputs(request["inputs"])
        assert state.inputs is not None
        result, trace = self._traced_call(state.inputs, bool(request.get("ghost")), model)
        state.last_run_output = result
        if trace.dispatch_problems:
            raise WorkerError(
                "dispatch-mode-tampering",
                "after forward: " + "; ".join(trace.dispatch_problems) + ": a mode left active would run the "
                "candidate's code inside kforge's own handling of the outputs",
            )
        trace_json = {**trace.to_json(), "input_attributes": input_attribute_problems(state.inputs)}
        return {**self._export_result(result, state.inputs), "trace": trace_json}

    def _export_result(self, result: Any, inputs: list[Any]) -> dict[str, Any]:
        """Shares the outputs; every operation on them runs without Python dispatch or torch-function
        handling (a mode the candidate left active would otherwise run inside the copies), after any
        such mode has been removed."""
        clear_foreign_modes()
        with kforge_owned():
            return self._export_owned(result, inputs)

    def _export_owned(self, result: Any, inputs: list[Any]) -> dict[str, Any]:
        state = self.state
        state.exporter = SharedTensorExporter(state.device, state.transfer_dir, cuda_driver_for(state.device))
        return self._encode_result(result, inputs)

    def _encode_result(self, result: Any, inputs: list[Any] | RotatingInputs) -> dict[str, Any]:
        """The result's outputs exported with the current exporter."""
        container = type(result).__name__ if isinstance(result, (tuple, list)) else None
        outputs = correctness.flatten_outputs(result)
        if container is not None and len(outputs) > correctness.MAX_OUTPUTS:
            return {"outputs": [], "container": container, "container_length": len(outputs)}
        exported = [self._export_output(item, inputs) for item in outputs]
        return {"outputs": exported, "container": container}

    def _export_output(self, item: Any, inputs: list[Any] | RotatingInputs) -> dict[str, Any]:
        assert self.state.exporter is not None
        if correctness.is_plain_value(item):  # a wrapper's count, flag or name
            return {"t": "value", "value": item if type(item) is not float else repr(item)}
        if type(item) is not torch.Tensor:
            return {"t": "other", "type": values.describe(item)}
        problem = _output_problem(item)
        if problem is not None:
            return {"t": "invalid", "reason": problem}
        exported = {"t": "tensor", "device": str(item.device), **self.state.exporter.export(item)}
        if isinstance(inputs, RotatingInputs):  # a timed output: an input of any placement
            aliased = inputs.aliased_argument(correctness.aliased_input(item, inputs.every_value()))
        else:
            aliased = correctness.aliased_input(item, inputs)
        if aliased is not None:  # allowed where the reference's output is that input too: the judge decides
            exported["aliases_input"] = aliased
        return exported

    def _release_outputs(self) -> None:
        poison_outputs(self.state.last_run_output, self.state.inputs or [])
        self.state.last_run_output = None
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
        if state.value_importer is not None:
            state.value_importer.release()
            state.value_importer = None
        state.timing_inputs = state.timing_shared = None
        state.kept_outputs = KeptOutputs()
        state.value_sets = []
        state.timed_log = TimedOutputLog()
        state.pacing = Pacing()
        if state.beside is not None:
            state.beside.shadow, state.beside.pacing = None, Pacing()
        return {}

    def _open_timing_inputs(self, request: dict[str, Any]) -> None:
        """The timing input buffers and, read-only by contract, the judge's value sets to copy into them."""
        state = self.state
        self.release({})
        shared = state.timing_shared = self._open_inputs(request["inputs"])
        # Timed on private copies in this process's caching allocator, as the judge times the reference
        # on its private clones: the same kind of memory on both sides (issue 31: on the shared cuMemAlloc
        # buffers a kernel read 0.92x against itself at 4 µs).
        with kforge_owned():
            state.timing_inputs = RotatingInputs.of(cloned(shared), state.device)
        encoded_sets = request.get("value_sets") or []
        if encoded_sets:
            state.value_importer = SharedTensorImporter(
                state.device, state.transfer_dir, cuda_driver_for(state.device)
            )
            importer = state.value_importer
            state.value_sets = [
                [values.decode(item, importer.open) for item in encoded] for encoded in encoded_sets
            ]
        state.timed_log = TimedOutputLog(
            output_problem=_output_problem  # a view of an input: the trials decided; the values tell here
        )

    def _timer(self) -> SampleTimer:
        state = self.state
        if state.timer is None:
            try:
                state.timer = SampleTimer.for_device(state.device)
            except ValueError as exc:
                raise WorkerError("usage", str(exc)) from None
        return state.timer

    def time(self, request: dict[str, Any]) -> dict[str, Any]:
        """One batch of timed calls (kforge.worker.timing): an optional warm-up, `count` samples, then
        `wall_calls` back-to-back calls. Before each sample the value set named by `value_order` is
        copied into the timing inputs; after it, the output is kept for the judge (timed_output)."""
        state = self.state
        if "inputs" in request:
            self._open_timing_inputs(request)
        if state.timing_inputs is None:
            raise WorkerError("protocol", "the first time request must carry the inputs")
        timer = self._timer()
        placements = state.timing_inputs
        count = int(request["count"])
        order = [int(index) for index in request.get("value_order", [])]
        sets = state.value_sets
        if sets and (len(order) != count or any(not 0 <= index < len(sets) for index in order)):
            raise WorkerError("protocol", f"value_order must name one of {len(sets)} value sets per sample")
        last_use = {index: position for position, index in enumerate(order)}
        warmup = WarmUpPolicy.from_request(request.get("warmup"))
        attribute_problems: list[str] = []

        def load_values(index: int) -> None:
            self._poison_last_output()
            state.kept_outputs.keep(state.last_timed_output)
            placements.advance()
            if sets:
                copy_values(placements.current, sets[index])

        def call() -> object:
            inputs = placements.current
            with torch.no_grad():
                state.last_timed_output = state.model(*inputs) if state.model is not None else None
            return state.last_timed_output

        def after_call(j: int) -> None:
            value_set = order[j] if sets else 0
            state.timed_log.record(
                state.last_timed_output, value_set, keep_whole=last_use.get(value_set, j) == j
            )
            for problem in input_attribute_problems(placements.current):
                if problem not in attribute_problems:
                    attribute_problems.append(problem)

        beside, refused = self._beside_for(request)  # its inputs copied before any candidate call
        if "inputs" in request:
            load_values(order[0] if sets and order else 0)
            self._call(placements.current)  # errors (and compile errors) are a verdict before timing starts
        wall_calls = int(request.get("wall_calls", 0))
        reply: dict[str, Any] = {}
        recorded: dict[str, Any] = {}

        def time_candidate() -> None:
            try:
                if warmup is not None:
                    warm = timer.warm_up(
                        call,
                        state.pacing,
                        warmup,
                        lambda j: load_values(j % max(1, len(sets))),
                        forget_autotune=False,
                    )
                    reply["warmup"] = warm.to_json()
                with state.recorder.recording(LaunchLog(), state.device) as launches:
                    recorded["batch"] = timer.samples(
                        call, count, state.pacing, lambda j: load_values(order[j] if sets else 0), after_call
                    )
                    if wall_calls > 0:
                        recorded["wall"] = timer.wall_per_call(call, wall_calls)
                        after_call(count - 1)  # the wall loop's last output, on the last sample's values
                recorded["launches"] = launches
            except BaseException as exc:  # noqa: BLE001
                raise self._fail("forward_error", exc) from None

        def time_reference() -> None:
            if beside is not None:
                reply.update(self._time_beside(beside, order, count, warmup))

        if warmup is not None:
            timer.forget_autotuned()  # once, before either side's first call
        sides = (
            [time_reference, time_candidate]
            if request.get("reference_first")
            else [time_candidate, time_reference]
        )
        for side in sides:
            side()
        if refused is not None:
            reply["beside_refused"] = refused
        batch, launches = recorded["batch"], recorded["launches"]
        wall = recorded.get("wall")
        if state.timing_shared is not None:
            # The judge checks that the timed calls wrote no input: the last sample's placement goes back.
            copy_values(state.timing_shared, placements.current)
        reply.update(
            samples_ms=batch.samples_ms,
            own_launches=launches.own_total(),
            side_stream_launches=sum(launches.side_stream.values()),
            calls=count + wall_calls,
            replaced_timing_functions=replaced_timing_functions(),
            input_attributes=attribute_problems,
            host_exposed=batch.host_exposed,
            sample_cost_ms=batch.sample_cost_ms,
            sleep_us=batch.sleep_us,
            checked_calls=len(state.timed_log.rows),
        )
        if wall is not None:
            reply.update(wall_ms_per_call=wall.wall_ms_per_call, host_ms_per_call=wall.host_ms_per_call)
        return reply

    def _beside_for(self, request: dict[str, Any]) -> tuple[BesideReference | None, str | None]:
        """The reference to time beside the candidate in this request, or why there is none."""
        state = self.state
        if not request.get("beside"):
            return None, None
        beside = state.beside
        if beside is None:
            return None, state.beside_error or "the load request asked for no reference here"
        if "inputs" in request:
            beside.open_inputs(state.timing_shared or [], state.value_sets, state.device)
        refused = beside.refusal() or (None if beside.shadow is not None else "no timing inputs were opened")
        return (None, refused) if refused else (beside, None)

    def _time_beside(
        self, beside: BesideReference, order: list[int], count: int, warmup: WarmUpPolicy | None
    ) -> dict[str, Any]:
        """The reference's samples in this process, as the judge takes them; a failure here is the
        reference's (it ran in the judge), so it only ends the timing beside the candidate."""
        state = self.state
        timer = self._timer()
        assert beside.shadow is not None
        hooks = beside.shadow.hooks(beside.model, order)
        reply: dict[str, Any] = {}
        try:
            with judge_switches(beside.snapshot):
                if warmup is not None:
                    warm = timer.warm_up(
                        hooks.call, beside.pacing, warmup, hooks.warm_up_before, forget_autotune=False
                    )
                    reply["reference_warmup"] = warm.to_json()
                batch: SampleBatch = timer.samples(
                    hooks.call, count, beside.pacing, hooks.before_sample, hooks.after_sample
                )
        except BaseException as exc:  # noqa: BLE001
            state.beside, state.beside_error = None, f"the reference failed here: {type(exc).__name__}: {exc}"
            return {"beside_refused": state.beside_error}
        reply.update(reference_samples_ms=batch.samples_ms, reference_sample_cost_ms=batch.sample_cost_ms)
        return reply

    def _poison_last_output(self) -> None:
        """Untimed, before each sample: the previous output becomes NaN, so a call that skips its work
        cannot return a recycled block (or a cached tensor) that still holds a correct result."""
        placements = self.state.timing_inputs
        poison_outputs(self.state.last_timed_output, placements.every_value() if placements else [])

    def timed_output(self, request: dict[str, Any]) -> dict[str, Any]:
        """Shares what was kept of the timed calls, so the judge can check what was timed: the last
        output of each value set (`slots`) and sampled elements of every timed output (`rows`, one row
        per timed call in order, at `positions` of the flattened output)."""
        state = self.state
        log = state.timed_log
        if state.timing_inputs is None or state.last_timed_output is None:
            raise WorkerError("protocol", "timed_output needs a finished time request")
        self._release_outputs()
        if log.problems or not log.rows:
            return {"problems": log.problems or ["no timed call returned a checkable output"], "slots": []}
        inputs = state.timing_inputs
        exporter = SharedTensorExporter(state.device, state.transfer_dir, cuda_driver_for(state.device))
        state.exporter = exporter
        outputs = len(log.positions)
        with kforge_owned():
            slots = [
                {"set": value_set, **self._encode_result(log.slot_result(value_set), inputs)}
                for value_set in sorted(log.slots)
            ]
            rows = [exporter.export(log.sampled_rows(index)) for index in range(outputs)]
            positions = [exporter.export(log.positions[index]) for index in range(outputs)]
        return {
            "problems": [],
            "slots": slots,
            "rows": rows,
            "positions": positions,
            "row_count": len(log.rows),
        }


def candidate_exception(exc: BaseException) -> dict[str, Any]:
    """An exception escaping a handler (e.g. SystemExit from the candidate) is still a verdict."""
    return protocol.error_response("forward_error", f"{type(exc).__name__}: {exc}")


def escaped_exception(memory_cap: DeviceMemoryCap) -> Callable[[BaseException], dict[str, Any]]:
    """candidate_exception, except that running out of memory on a GPU that other processes filled is
    the machine's error, as it is inside the handlers (CandidateWorker._fail)."""

    def reply(exc: BaseException) -> dict[str, Any]:
        if (machine := memory_cap.device_was_full(exc)) is not None:
            return protocol.error_response("environment", f"{machine} ({type(exc).__name__}: {exc})")
        return candidate_exception(exc)

    return reply


def main() -> None:
    faulthandler.enable()  # a native crash still prints the Python frames to the captured log
    worker = CandidateWorker()
    protocol.serve(worker.handlers(), escaped_exception(worker.state.memory_cap))
    protocol.exit_after_serving()


if __name__ == "__main__":
    main()
