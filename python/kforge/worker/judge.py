"""The judge: trusted, imports only the problem. Builds inputs from seeds, keeps pristine copies,
computes reference outputs, and compares what the candidate hands back. Run by the kforge binary as
`python -m kforge.worker.judge` with the protocol pipes on fds 3 and 4.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import torch

from kforge.worker import correctness, protocol, values
from kforge.worker.interpreter import prepare_triton_interpreter
from kforge.worker.protocol import WorkerError
from kforge.worker.runtime import (
    cuda_driver_for,
    device_facts,
    load_module_from_path,
    select_device,
    to_device,
)
from kforge.worker.tensors import SharedTensorExporter, SharedTensorImporter
from kforge.worker.timing import SampleTimer
from kforge.worker.tracebacks import exception_summary
from kforge.worker.uninitialized import (
    may_hold_poison,
    undefined_elements,
    uninitialized_memory_poisoned,
    uninitialized_memory_poisoned_differently,
)

SMALL_SIZES_NAME = "KFORGE_SMALL"
DEFAULT_REFERENCE_CACHE = 8  # seeds whose inputs and outputs a judge keeps (trials, probe, timing)


@dataclass
class Trial:
    exporter: SharedTensorExporter
    shared: list[torch.Tensor]  # what the candidate sees, in export order
    pristine: list[torch.Tensor]  # untouched copies, same order
    reference_inputs: list[Any]  # the inputs the reference ran on (cached, never handed out)
    reference: list[Any]
    reference_container: str | None = None  # "tuple"/"list" when forward returned several outputs
    private_inputs: list[Any] | None = None  # a private copy for timing the reference, made on demand
    undefined: list[torch.Tensor | None] = field(default_factory=list)  # per output: left unwritten


@dataclass
class Reference:
    """One seed's inputs and reference outputs, computed once and reused by every candidate."""

    inputs: list[Any]  # on the device; never shared, never modified
    outputs: list[Any]
    container: str | None
    float_dtypes: list[str]
    undefined: list[torch.Tensor | None]  # per output: the elements the reference leaves unwritten


@dataclass
class JudgeState:
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    problem: ModuleType | None = None
    problem_path: str = ""
    model: torch.nn.Module | None = None
    init_inputs: list[Any] = field(default_factory=list)
    trials: dict[str, Trial] = field(default_factory=dict)  # key: "<evaluation>:<trial>"
    init_exporters: dict[str, SharedTensorExporter] = field(default_factory=dict)  # key: evaluation
    references: OrderedDict[int, Reference] = field(default_factory=OrderedDict)
    reference_cache_size: int = DEFAULT_REFERENCE_CACHE
    timer: SampleTimer | None = None
    compiled_model: Any = None  # torch.compile(model), built when a compile baseline is asked for


def apply_size_overrides(problem: ModuleType, small: bool, overrides: dict[str, Any]) -> dict[str, Any]:
    """Set module-level size constants before get_inputs/get_init_inputs read them."""
    applied: dict[str, Any] = {}
    if small:
        table = getattr(problem, SMALL_SIZES_NAME, None)
        if not isinstance(table, dict):
            raise WorkerError(
                "usage",
                f"--small needs a module-level dict {SMALL_SIZES_NAME} in the problem; "
                "give sizes explicitly with --size NAME=VALUE instead",
            )
        applied.update(table)
    applied.update(overrides)
    for name, value in applied.items():
        current = getattr(problem, name, None)
        if not isinstance(current, (int, float)) or isinstance(current, bool):
            raise WorkerError(
                "usage", f"size override {name}: the problem has no module-level int/float constant {name!r}"
            )
        setattr(problem, name, type(current)(value))
    return applied


def _clone(value: Any) -> Any:
    return value.clone() if isinstance(value, torch.Tensor) else value


def _float_dtypes(tensors: list[Any]) -> list[str]:
    """Floating dtypes of the problem's tensor inputs and reference outputs: a float32 problem must not be
    computed in fp16, but a problem whose reference answers in fp16 is an fp16 problem."""
    return sorted(
        {values.dtype_name(v.dtype) for v in tensors if isinstance(v, torch.Tensor) and v.is_floating_point()}
    )


def _rng_state(device: torch.device) -> tuple[torch.Tensor, list[torch.Tensor]]:
    return torch.get_rng_state(), torch.cuda.get_rng_state_all() if device.type == "cuda" else []


def _restore_rng_state(device: torch.device, state: tuple[torch.Tensor, list[torch.Tensor]]) -> None:
    torch.set_rng_state(state[0])
    if device.type == "cuda":
        torch.cuda.set_rng_state_all(state[1])


def _problem_error(stage: str, exc: BaseException, state: JudgeState) -> WorkerError:
    summary = exception_summary(exc, state.problem_path)
    return WorkerError(
        "problem", f"the problem's {stage} raised {summary['exception']}: {summary['message']}", summary
    )


class Judge:
    def __init__(self) -> None:
        self.state = JudgeState()

    def handlers(self) -> dict[str, protocol.Handler]:
        return {
            "load": self.load,
            "export_init": self.export_init,
            "end_evaluation": self.end_evaluation,
            "start_trial": self.start_trial,
            "check_trial": self.check_trial,
            "end_trial": self.end_trial,
            "refresh_trial": self.refresh_trial,
            "time": self.time,
        }

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        """Import the problem and build Model once; every candidate of this problem reuses it."""
        state = self.state
        state.device = select_device(str(request["device"]))
        if state.device.type == "cpu":
            prepare_triton_interpreter()  # a Triton reference (kernel mode) runs as the candidate does
        state.problem_path = str(request["problem_path"])
        state.reference_cache_size = max(1, int(request.get("reference_cache", DEFAULT_REFERENCE_CACHE)))
        try:
            problem = load_module_from_path(state.problem_path, "kforge_problem")
        except WorkerError:
            raise
        except BaseException as exc:  # noqa: BLE001 - a broken problem file is the user's to fix
            raise _problem_error("import", exc, state) from None
        for name in ("Model", "get_inputs", "get_init_inputs"):
            if not hasattr(problem, name):
                raise WorkerError(
                    "problem",
                    f"the problem file defines no {name}; KernelBench format needs "
                    "class Model, get_inputs() and get_init_inputs()",
                )
        sizes = apply_size_overrides(problem, bool(request.get("small")), dict(request.get("sizes", {})))
        seed = int(request["seed"])
        try:
            init_inputs = list(problem.get_init_inputs())
            torch.manual_seed(seed)
            model = problem.Model(*init_inputs).to(state.device).eval()
        except BaseException as exc:  # noqa: BLE001
            raise _problem_error("Model construction", exc, state) from None
        state.problem, state.model, state.init_inputs = problem, model, init_inputs
        try:
            sample_inputs = list(problem.get_inputs())
        except BaseException as exc:  # noqa: BLE001
            raise _problem_error("get_inputs", exc, state) from None
        input_bytes = sum(value.nbytes for value in sample_inputs if isinstance(value, torch.Tensor))
        reply = {"input_count": len(sample_inputs), "device": device_facts(state.device), "sizes": sizes}
        reply["input_bytes"] = input_bytes  # the scheduler's estimate of an evaluation's GPU memory
        if state.device.type == "cuda":
            free, total = torch.cuda.mem_get_info(state.device)
            reply["gpu_memory"] = {"free": free, "total": total}
        return reply

    def export_init(self, request: dict[str, Any]) -> dict[str, Any]:
        """The init inputs, copied into buffers of one evaluation (a candidate may scribble on its own)."""
        state = self.state
        evaluation = str(request["evaluation"])
        exporter = self._exporter(request)
        previous = state.init_exporters.pop(evaluation, None)
        if previous is not None:
            previous.release()
        state.init_exporters[evaluation] = exporter
        return {"init_inputs": [values.encode(value, exporter.export) for value in state.init_inputs]}

    def end_evaluation(self, request: dict[str, Any]) -> dict[str, Any]:
        """Free every buffer of one evaluation, whatever state its candidate left it in."""
        evaluation = str(request["evaluation"])
        for key in [key for key in self.state.trials if key.split(":", 1)[0] == evaluation]:
            self.state.trials.pop(key).exporter.release()
        exporter = self.state.init_exporters.pop(evaluation, None)
        if exporter is not None:
            exporter.release()
        return {}

    def _exporter(self, request: dict[str, Any]) -> SharedTensorExporter:
        device = self.state.device
        return SharedTensorExporter(device, str(request["transfer_dir"]), cuda_driver_for(device))

    def _importer(self, request: dict[str, Any]) -> SharedTensorImporter:
        device = self.state.device
        return SharedTensorImporter(device, str(request["transfer_dir"]), cuda_driver_for(device))

    def _reference(self, seed: int) -> Reference:
        """Inputs from the seed and the reference's outputs on a private copy; cached by seed."""
        state = self.state
        cached = state.references.get(seed)
        if cached is not None:
            state.references.move_to_end(seed)
            return cached
        assert state.problem is not None and state.model is not None, "load first"
        try:
            torch.manual_seed(seed)
            inputs = [to_device(value, state.device) for value in state.problem.get_inputs()]
            rng = _rng_state(state.device)
            with uninitialized_memory_poisoned():  # as the candidate's forward runs
                raw_reference = self._forward(inputs)
            outputs = correctness.flatten_outputs(raw_reference)
            container = type(raw_reference).__name__ if isinstance(raw_reference, (tuple, list)) else None
            undefined = self._unwritten_elements(inputs, outputs, rng)
        except WorkerError:
            raise
        except BaseException as exc:  # noqa: BLE001
            raise _problem_error("reference forward", exc, state) from None
        reference = Reference(inputs, outputs, container, _float_dtypes([*inputs, *outputs]), undefined)
        state.references[seed] = reference
        while len(state.references) > state.reference_cache_size:
            state.references.popitem(last=False)
        return reference

    def _forward(self, inputs: list[Any]) -> Any:
        """The reference on a private copy of the inputs (it may write into its own arguments)."""
        state = self.state
        assert state.model is not None, "load first"
        with torch.no_grad():
            raw = state.model(*[_clone(value) for value in inputs])
        if state.device.type == "cuda":
            torch.cuda.synchronize(state.device)
        return raw

    def _unwritten_elements(
        self, inputs: list[Any], outputs: list[Any], rng: tuple[torch.Tensor, list[torch.Tensor]]
    ) -> list[torch.Tensor | None]:
        """Per output, the elements the reference leaves unwritten (None: every element is written).

        Only an output holding torch's poison somewhere can have any: the reference then runs again, from
        the same RNG state, with a second poison; what follows the poison is undefined. An output that is
        undefined everywhere is the problem's error: there is nothing to compare."""
        tensors = [value if isinstance(value, torch.Tensor) else None for value in outputs]
        if not any(tensor is not None and may_hold_poison(tensor) for tensor in tensors):
            return [None] * len(outputs)
        _restore_rng_state(self.state.device, rng)
        with uninitialized_memory_poisoned_differently():
            second = correctness.flatten_outputs(self._forward(inputs))
        masks: list[torch.Tensor | None] = []
        for index, tensor in enumerate(tensors):
            other = second[index] if index < len(second) else None
            if tensor is None or not isinstance(other, torch.Tensor) or other.shape != tensor.shape:
                masks.append(None)
                continue
            mask = undefined_elements(tensor, other, correctness.default_tolerance(tensor.dtype))
            if tensor.numel() and bool(mask.all().item()):
                raise WorkerError(
                    "problem",
                    f"reference output {index} ({values.describe(tensor)}) is never written by the "
                    "reference: every element is whatever its uninitialized memory held; make the reference "
                    "write it, or leave it out of what it returns (kernel mode: of the arguments it writes)",
                )
            masks.append(mask if bool(mask.any().item()) else None)
        return masks

    def start_trial(self, request: dict[str, Any]) -> dict[str, Any]:
        """Fresh inputs from the trial's seed, copied into buffers of the evaluation's own."""
        state = self.state
        key, seed = str(request["trial"]), int(request["seed"])
        reference = self._reference(seed)
        exporter = self._exporter(request)
        trial = Trial(exporter, [], [], reference.inputs, reference.outputs, reference.container)
        trial.undefined = reference.undefined

        def export_and_remember(tensor: torch.Tensor) -> dict[str, Any]:
            descriptor = exporter.export(tensor)
            trial.shared.append(exporter.last_view)
            trial.pristine.append(tensor)
            return descriptor

        encoded = [values.encode(value, export_and_remember) for value in reference.inputs]
        previous = state.trials.pop(key, None)
        if previous is not None:
            previous.exporter.release()
        state.trials[key] = trial
        return {"inputs": encoded, "input_dtypes": reference.float_dtypes}

    def refresh_trial(self, request: dict[str, Any]) -> dict[str, Any]:
        """New values from a new seed, written into the same shared buffers the candidate holds: its
        next output must follow them (a cache keyed on pointers or shapes cannot)."""
        trial = self.state.trials[str(request["trial"])]
        fresh = self._reference(int(request["seed"]))
        tensors = [value for value in fresh.inputs if isinstance(value, torch.Tensor)]
        if len(tensors) != len(trial.shared) or any(
            new.shape != old.shape or new.dtype != old.dtype
            for new, old in zip(tensors, trial.shared, strict=True)
        ):
            return {"refreshed": False, "reason": "get_inputs() gives other shapes for another seed"}
        for new, shared in zip(tensors, trial.shared, strict=True):
            shared.copy_(new)
        if self.state.device.type == "cuda":
            torch.cuda.synchronize(self.state.device)
        trial.pristine = tensors
        trial.reference_inputs, trial.reference = fresh.inputs, fresh.outputs
        trial.undefined = fresh.undefined
        trial.private_inputs = None
        return {"refreshed": True}

    def check_trial(self, request: dict[str, Any]) -> dict[str, Any]:
        trial = self._trial(request)
        importer = self._importer(request)
        try:
            result = self._compare(trial, request, importer)
        finally:
            importer.release()
        return result

    def _compare(
        self, trial: Trial, request: dict[str, Any], importer: SharedTensorImporter
    ) -> dict[str, Any]:
        """Failures come with the id of the check that found each (docs/threat-model.md)."""
        encoded_outputs = request["outputs"]
        failures: list[str] = []
        checks: list[str] = []
        # First: a forward that writes into its inputs (and maybe returns one) is an input mutation.
        mutated = correctness.mutated_inputs(trial.shared, trial.pristine)
        if mutated:
            failures.append(f"the candidate modified tensor input(s) {mutated} in place")
            checks.append("input-mutation")
        returned = request.get("container")
        if (returned is None) != (trial.reference_container is None):
            expected = "a tuple/list of tensors" if trial.reference_container else "a Tensor"
            count = request.get("container_length") or len(encoded_outputs)
            found = f"a {returned} of {count} item(s)" if returned else "a single value"
            return {
                "passed": False,
                "failures": [*failures, f"forward returned {found}, expected {expected}"],
                "checks": [*checks, "output-type"],
                "outputs": [],
                "mutated_inputs": mutated,
            }
        if len(encoded_outputs) != len(trial.reference):
            failures.append(
                f"forward returned {len(encoded_outputs)} output(s), expected {len(trial.reference)}"
            )
            checks.append("output-type")
        reports: list[dict[str, Any]] = []
        for index, (encoded, ref) in enumerate(zip(encoded_outputs, trial.reference, strict=False)):
            undefined = trial.undefined[index] if index < len(trial.undefined) else None
            report = self._compare_one(index, encoded, ref, importer, request, undefined)
            reports.append(report)
            if not report["passed"]:
                failures.append(report.get("reason") or self._mismatch_reason(index, report))
                checks.append("output-type" if "reason" in report else "output-mismatch")
        return {
            "passed": not failures,
            "failures": failures,
            "checks": checks,
            "outputs": reports,
            "mutated_inputs": mutated,
        }

    def _compare_one(
        self,
        index: int,
        encoded: Any,
        ref: Any,
        importer: SharedTensorImporter,
        request: dict[str, Any],
        undefined: torch.Tensor | None = None,
    ) -> dict[str, Any]:
        if not isinstance(ref, torch.Tensor):
            raise WorkerError(
                "problem", f"reference output {index} is {values.describe(ref)}; kforge compares tensors"
            )
        if isinstance(encoded, dict) and encoded.get("t") == "invalid":
            return {"passed": False, "reason": f"output {index} is {encoded.get('reason', 'invalid')}"}
        if not isinstance(encoded, dict) or encoded.get("t") != "tensor":
            kind = encoded.get("type", "unknown") if isinstance(encoded, dict) else "unknown"
            return {"passed": False, "reason": f"output {index} is {kind}, expected a torch.Tensor"}
        declared_device = str(encoded.get("device", ""))
        if torch.device(declared_device) != ref.device:
            return {
                "passed": False,
                "reason": f"output {index} is on {declared_device}, expected {ref.device}",
            }
        try:
            out = importer.open(encoded)
        except (KeyError, TypeError, ValueError, OSError, RuntimeError) as exc:
            raise WorkerError("bad_output", f"output {index} could not be read back: {exc}") from None
        problem = correctness.check_structure(out, ref, index)
        if problem is not None:
            return {"passed": False, "reason": problem}
        tolerance = correctness.resolve_tolerance(ref.dtype, request.get("atol"), request.get("rtol"))
        if undefined is None:
            return correctness.compare_tensor(out, ref, tolerance)
        # Every criterion sees only the elements the reference writes.
        defined_out, defined_ref = correctness.defined_elements(out, ref, undefined)
        report = correctness.compare_tensor(defined_out, defined_ref, tolerance)
        report.update(shape=list(ref.shape), undefined_elements=int(undefined.sum().item()))
        return report

    @staticmethod
    def _mismatch_reason(index: int, report: dict[str, Any]) -> str:
        return (
            f"output {index}: {report['mismatched_elements']} of {report['total_elements']} elements outside "
            f"atol={report['atol']:g} rtol={report['rtol']:g} (max abs error {report['max_abs_error']:.3g}, "
            f"max rel error {report['max_rel_error']:.3g}, "
            f"{report['nonfinite_mismatches']} NaN/Inf mismatches)" + Judge._undefined_note(report)
        )

    @staticmethod
    def _undefined_note(report: dict[str, Any]) -> str:
        undefined = int(report.get("undefined_elements", 0))
        return f"; {undefined} element(s) the reference leaves unwritten not compared" if undefined else ""

    def _trial(self, request: dict[str, Any]) -> Trial:
        trial = self.state.trials.get(str(request["trial"]))
        if trial is None:
            raise WorkerError("protocol", f"no trial {request['trial']!r} is open; start_trial first")
        return trial

    def end_trial(self, request: dict[str, Any]) -> dict[str, Any]:
        trial = self.state.trials.pop(str(request["trial"]), None)
        if trial is not None:
            trial.exporter.release()
        return {}

    def _timed_model(self, kind: str) -> Any:
        """The reference as the speedup's baseline: eager PyTorch or torch.compile of the same model."""
        state = self.state
        if kind == "eager":
            return state.model
        if kind != "compile":
            raise WorkerError("usage", f"unknown baseline {kind!r}; expected 'eager' or 'compile'")
        if state.compiled_model is None:
            state.compiled_model = torch.compile(state.model)
        return state.compiled_model

    def time(self, request: dict[str, Any]) -> dict[str, Any]:
        """Time the reference (eager or compiled) on its private copy of a trial's inputs."""
        state = self.state
        if state.device.type != "cuda":
            raise WorkerError("usage", "timing needs a CUDA device")
        trial = self._trial(request)
        model = self._timed_model(str(request.get("baseline", "eager")))
        if state.timer is None:
            state.timer = SampleTimer(state.device)
        if trial.private_inputs is None:
            trial.private_inputs = [_clone(value) for value in trial.reference_inputs]
        inputs = trial.private_inputs

        def call() -> object:
            with torch.no_grad():
                return model(*inputs)

        try:
            state.timer.warm_up(call, int(request.get("warmup", 0)))
            samples = state.timer.samples_ms(call, int(request["count"]))
        except BaseException as exc:  # noqa: BLE001 - torch.compile may fail on the problem's model
            raise _problem_error(f"{request.get('baseline', 'eager')} baseline", exc, state) from None
        return {"samples_ms": samples}


def main() -> None:
    judge = Judge()
    protocol.serve(judge.handlers(), protocol.internal_error)


if __name__ == "__main__":
    main()
