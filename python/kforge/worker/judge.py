"""The judge: trusted, imports only the problem. Builds inputs from seeds, keeps pristine copies,
computes reference outputs, and compares what the candidate hands back. Run by the kforge binary as
`python -m kforge.worker.judge` with the protocol pipes on fds 3 and 4.
"""

from __future__ import annotations

import contextlib
import gc
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import torch

from kforge.worker import (
    argument_objects,
    autotune_room,
    correctness,
    generalisation,
    protocol,
    rounding_slack,
    tf32_slack,
    values,
)
from kforge.worker.device_memory import CPU_ALLOCATOR_FAILURE, is_out_of_memory
from kforge.worker.interpreter import prepare_triton_interpreter
from kforge.worker.perturbation import PerturbedTensor, at_default, perturb_model
from kforge.worker.problem_sizes import apply_size_overrides
from kforge.worker.protocol import WorkerError
from kforge.worker.reference_cache import ACTIVE_SHARE, DEFAULT_ENTRIES, IDLE_SHARE, ReferenceCache, memory_of
from kforge.worker.reference_timing import ShadowedReference, model_tensors
from kforge.worker.runtime import (
    cuda_driver_for,
    device_facts,
    load_module_from_path,
    select_device,
    to_device,
)
from kforge.worker.sampled_check import first_wrong_row, sampled_reference, sampled_undefined
from kforge.worker.tensors import SharedTensorExporter, SharedTensorImporter
from kforge.worker.timed_outputs import Spacers, cloned, cloned_apart, tensor_bytes, tensors_in
from kforge.worker.timing import Pacing, SampleTimer, WarmUpPolicy
from kforge.worker.timing_stream import TimingStream, use_timing_stream
from kforge.worker.trace import LaunchRecorder, traced_forward
from kforge.worker.tracebacks import exception_summary
from kforge.worker.uninitialized import (
    may_hold_poison,
    poison_elements,
    undefined_elements,
    uninitialized_memory_poisoned,
    uninitialized_memory_poisoned_differently,
)

# The determinism check's extra runs of a fast reference (races show only now and then): at most this
# many, started within this many seconds of the first extra run.
DETERMINISM_EXTRA_RUNS = 3
DETERMINISM_SECONDS = 0.5
# The seed of the run that shows a reference drawing its own random numbers (any seed but the trial's).
OTHER_RNG_SEED = 0x5EED
# A trial whose inputs and outputs take this much: its end hands the allocator's free blocks back.
LARGE_TRIAL_BYTES = 1 << 30
REFERENCE_CALL_REPEATS = 5  # timed forwards of the reference at load (the fastest sets the call limits)
REFERENCE_CALL_BUDGET_S = 0.5  # ... fewer when the reference is slow


@dataclass
class Trial:
    exporter: SharedTensorExporter
    shared: list[torch.Tensor]  # what the candidate sees, in export order
    pristine: list[torch.Tensor]  # untouched copies, same order
    reference_inputs: list[Any]  # the inputs the reference ran on (cached, never handed out)
    reference: list[Any]
    reference_container: str | None = None  # "tuple"/"list" when forward returned several outputs
    shadow: ShadowedReference | None = None  # the reference's timing inputs (private copies), made on demand
    # Timing trial: the input value sets rotated through the timing inputs (set 0: this trial's own)
    value_sets: list[Reference] = field(default_factory=list)
    value_shared: list[list[torch.Tensor]] = field(default_factory=list)  # each set's buffers, shared
    pacing: dict[str, Pacing] = field(default_factory=dict)  # per baseline: the reference's host pace
    undefined: list[torch.Tensor | None] = field(default_factory=list)  # per output: left unwritten
    aliases: list[int | None] = field(default_factory=list)  # per output: the input the reference returned
    source: Reference | None = None  # the cached reference the trial's inputs and outputs come from

    def own_reference(self) -> Reference:
        """The reference its inputs and outputs come from (value set 0 of its timed calls)."""
        if self.source is not None:
            return self.source
        return Reference(self.reference_inputs, self.reference, self.reference_container, [], self.undefined)


@dataclass
class Reference:
    """One seed's inputs and reference outputs, computed once and reused by every candidate."""

    inputs: list[Any]  # on the device; never shared, never modified
    outputs: list[Any]
    container: str | None
    float_dtypes: list[str]
    undefined: list[torch.Tensor | None]  # per output: the elements the reference leaves unwritten
    aliases: list[int | None] = field(default_factory=list)  # per output: the input it is a view of
    rng: tuple[torch.Tensor, list[torch.Tensor]] | None = None  # the RNG state its forward started from
    at_defaults: bool = False  # computed with the model's perturbed tensors back at their defaults
    # Per output, its distance from the float64 run (rounding_slack), or why that was not measured;
    # measured when a float32 output first fails its comparison on these inputs.
    rounding: list[rounding_slack.RoundingSlack | None] | str | None = None


@dataclass
class JudgeState:
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    problem: ModuleType | None = None
    problem_path: str = ""
    model: torch.nn.Module | None = None
    init_inputs: list[Any] = field(default_factory=list)
    trials: dict[str, Trial] = field(default_factory=dict)  # key: "<evaluation>:<trial>"
    init_exporters: dict[str, SharedTensorExporter] = field(default_factory=dict)  # key: evaluation
    references: ReferenceCache = field(default_factory=ReferenceCache)  # key: (seed, parameters perturbed)
    perturbed: list[PerturbedTensor] = field(default_factory=list)  # the model's tensors kforge perturbed
    timer: SampleTimer | None = None
    timing_stream: TimingStream | None = None  # chosen once per process (timing_stream.py)
    compiled_model: Any = None  # torch.compile(model), built when a compile baseline is asked for
    # Whether the reference was run twice on the same inputs yet, and what that showed if it disagreed
    # with itself (every evaluation against it is then the problem's error).
    determinism_checked: bool = False
    nondeterminism: str | None = None
    # Per output, how far the reference's float32 answer moves with TF32 off (None: not measured yet).
    tf32_slack: list[float] | None = None


def release_device_memory(device: torch.device) -> None:
    """Hands the caching allocator's free blocks back to the device (a no-op on the CPU)."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()


def _init_inputs(problem: ModuleType, change_values: bool) -> tuple[list[Any], list[str]]:
    """get_init_inputs(), with its numbers changed for the generalisation instance when asked."""
    init_inputs = list(problem.get_init_inputs())
    if not change_values:
        return init_inputs, []
    return generalisation.changed_init_values(init_inputs)


def _compare_plain_value(index: int, encoded: Any, ref: Any) -> dict[str, Any]:
    """A non-tensor output (None, a bool, int, float or string a wrapper returns beside its tensors): equal
    to the reference's, a float within the float32 default tolerance."""
    if not (isinstance(encoded, dict) and encoded.get("t") == "value"):
        return {"passed": False, "reason": f"output {index} is not a plain value, expected {ref!r}"}
    found = encoded.get("value")
    if type(ref) is float:  # the candidate sends a float as its repr (JSON has no NaN)
        value = float(str(found))
        tolerance = correctness.default_tolerance(torch.float32)
        same = (math.isnan(value) and math.isnan(ref)) or math.isclose(
            value, ref, rel_tol=tolerance.rtol, abs_tol=tolerance.atol
        )
    else:
        same = type(found) is type(ref) and found == ref
    if same:
        return {"passed": True, "value": repr(ref)}
    return {"passed": False, "reason": f"output {index} is {found!r}, expected {ref!r}"}


def _float_dtypes(tensors: list[Any]) -> list[str]:
    """Floating dtypes of the problem's tensor inputs and reference outputs: a float32 problem must not be
    computed in fp16, but a problem whose reference answers in fp16 is an fp16 problem."""
    return sorted(
        {values.dtype_name(v.dtype) for v in tensors if isinstance(v, torch.Tensor) and v.is_floating_point()}
    )


def _with_variation(
    report: dict[str, Any], out: torch.Tensor, ref: torch.Tensor, variation: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The elementwise report, with the relative-variation criterion applied to an output that passed
    it (check id `output-variation`): within atol is not enough when the reference varies less than
    atol. `variation`: the criterion's result already measured on these tensors."""
    if variation is None:
        variation = correctness.variation_check(out, ref, rtol=report.get("rtol", 0.0))
    report.update(variation)
    if report["passed"] and not variation["variation_passed"]:
        report["passed"] = False
        report["check"] = "output-variation"
    return report


def _rng_state(device: torch.device) -> tuple[torch.Tensor, list[torch.Tensor]]:
    return torch.get_rng_state(), torch.cuda.get_rng_state_all() if device.type == "cuda" else []


def _restore_rng_state(device: torch.device, state: tuple[torch.Tensor, list[torch.Tensor]]) -> None:
    torch.set_rng_state(state[0])
    if device.type == "cuda":
        torch.cuda.set_rng_state_all(state[1])


def problem_inputs(problem: ModuleType, device: torch.device) -> list[Any]:
    """The problem's get_inputs() on `device`. On a GPU it runs with the device as torch's default, so its
    tensors are drawn there: KernelBench's level-1 inputs are up to 6 GiB, and the host's generator takes
    tens of seconds per draw, several draws per evaluation. A get_inputs that cannot run so (one that hands
    a tensor to numpy) runs on the host from the same generator state; either way every call of one
    problem takes the same path, so a seed gives the same inputs each time."""
    if device.type == "cuda":
        before = _rng_state(device)
        try:
            with device:
                return [to_device(value, device) for value in problem.get_inputs()]
        except Exception:  # noqa: BLE001 - drawn on the host instead, as the problem was written
            _restore_rng_state(device, before)
    return [to_device(value, device) for value in problem.get_inputs()]


def _problem_error(stage: str, exc: BaseException, state: JudgeState) -> WorkerError:
    summary = exception_summary(exc, state.problem_path)
    if is_out_of_memory(exc) and (state.device.type != "cuda" or CPU_ALLOCATOR_FAILURE in str(exc)):
        return WorkerError(
            "environment",
            f"the machine ran out of memory in the problem's {stage}: run fewer evaluations at once (-j) "
            f"or the problem at smaller sizes (--size); {summary['exception']}: {summary['message']}",
            summary,
        )
    if is_out_of_memory(exc):  # the machine's limit, not a defect
        free, total = torch.cuda.mem_get_info(state.device)
        held = torch.cuda.memory_reserved(state.device)
        return WorkerError(
            "environment",
            f"the GPU ran out of memory in the problem's {stage} ({free / 2**30:.2f} GiB free of "
            f"{total / 2**30:.2f} GiB; the judge holds {held / 2**30:.2f} GiB, other processes the rest): "
            "run fewer evaluations at once (-j) or the problem at smaller sizes (--size); "
            f"{summary['exception']}: {summary['message']}",
            summary,
        )
    return WorkerError(
        "problem", f"the problem's {stage} raised {summary['exception']}: {summary['message']}", summary
    )


class Judge:
    def __init__(self) -> None:
        self.state = JudgeState()
        self.generalised: Judge | None = None  # the generalisation trial's instance (generalisation.py)

    def handlers(self) -> dict[str, protocol.Handler]:
        own = self._own_handlers()
        routed = {op: self._routed(op, handler) for op, handler in own.items()}
        return {
            **routed,
            "load_generalisation": self.load_generalisation,
            "end_evaluation": self.end_evaluation,
            "trim": self.trim,
        }

    def _own_handlers(self) -> dict[str, protocol.Handler]:
        return {
            "load": self.load,
            "export_init": self.export_init,
            "start_trial": self.start_trial,
            "check_trial": self.check_trial,
            "end_trial": self.end_trial,
            "refresh_trial": self.refresh_trial,
            "add_value_sets": self.add_value_sets,
            "check_timed": self.check_timed,
            "time": self.time,
            "trace_reference": self.trace_reference,
        }

    def _routed(self, op: str, handler: protocol.Handler) -> protocol.Handler:
        """Requests that name `"instance": "generalisation"` go to the generalised instance's judge."""

        def call(request: dict[str, Any]) -> dict[str, Any]:
            if request.get("instance") != "generalisation":
                return handler(request)
            if self.generalised is None:
                raise WorkerError(
                    "protocol", f"{op} for the generalisation instance before load_generalisation"
                )
            return self.generalised._own_handlers()[op](request)

        return call

    def load_generalisation(self, request: dict[str, Any]) -> dict[str, Any]:
        """Builds the problem's second instance (other sizes, other constructor numbers) from the main
        instance's settings: the first attempt whose reference builds and runs. The reply says which, or
        why none could be built ("possible": false)."""
        state = self.state
        if state.problem is None:
            raise WorkerError("protocol", "load_generalisation before load")
        tries, note = generalisation.attempts(state.problem)
        base_sizes = {**dict(request.get("sizes", {}))}
        failures = []
        for attempt in tries:
            candidate = Judge()
            try:
                reply = candidate.load(
                    {
                        **request,
                        "sizes": {**base_sizes, **attempt.sizes},
                        "module_name": "kforge_problem_generalised",
                        "change_init_values": attempt.change_init_values,
                    }
                )
            except WorkerError as error:
                failures.append(f"{attempt.describe()}: {error.message}")
                continue
            unwritten = candidate._unwritten_output()
            if unwritten is not None:
                failures.append(f"{attempt.describe()}: {unwritten}")
                continue
            changes = reply.get("init_changes", [])
            if not attempt.sizes and not changes:
                continue  # nothing would differ from the main instance
            self.generalised = candidate
            return {"possible": True, "sizes": attempt.sizes, "init_changes": changes, **reply}
        reasons = "; ".join([note, *failures[-2:]] if note else failures[-2:]) or "nothing to change"
        return {"possible": False, "reason": reasons}

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        """Import the problem and build Model once; every candidate of this problem reuses it."""
        state = self.state
        state.device = select_device(str(request["device"]))
        if state.device.type == "cpu":
            prepare_triton_interpreter()  # a Triton reference (kernel mode) runs as the candidate does
        elif state.timing_stream is None:
            state.timing_stream = use_timing_stream(state.device)
        state.problem_path = str(request["problem_path"])
        state.determinism_checked, state.nondeterminism = False, None
        memory = memory_of(state.device)
        state.references = ReferenceCache(
            int(request.get("reference_cache", DEFAULT_ENTRIES)),
            int(request.get("reference_cache_bytes", memory // ACTIVE_SHARE)),
        )
        try:
            module_name = str(request.get("module_name", "kforge_problem"))
            problem = load_module_from_path(state.problem_path, module_name)
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
            init_inputs, init_changes = _init_inputs(problem, bool(request.get("change_init_values")))
            torch.manual_seed(seed)
            model = problem.Model(*init_inputs).to(state.device).eval()
        except BaseException as exc:  # noqa: BLE001
            raise _problem_error("Model construction", exc, state) from None
        state.problem, state.model, state.init_inputs = problem, model, init_inputs
        try:
            sample_inputs = problem_inputs(problem, state.device)
        except BaseException as exc:  # noqa: BLE001
            raise _problem_error("get_inputs", exc, state) from None
        reply = {"input_count": len(sample_inputs), "device": device_facts(state.device), "sizes": sizes}
        reply.update(self._footprint(sample_inputs))  # the candidate's GPU memory share is derived from it
        reply["perturbation"] = self._perturb_parameters(request.get("perturbation_seed"))
        reply["init_changes"] = init_changes
        reply["reference_call_s"] = self._reference_call_seconds(sample_inputs)
        del sample_inputs  # drawn on the device: freed before the memory is given back
        if state.device.type == "cuda":
            release_device_memory(state.device)  # a judge waiting for its turn holds only its model
            free, total = torch.cuda.mem_get_info(state.device)
            reply["gpu_memory"] = {"free": free, "total": total}
        return reply

    def _footprint(self, inputs: list[Any]) -> dict[str, int]:
        """Bytes of one instance of the problem on the device: inputs (problem_inputs', on the device), the
        reference's outputs (one forward on them) and the model's parameters and buffers."""
        state = self.state
        assert state.model is not None
        cuda = state.device.type == "cuda"
        if cuda:  # the forward's working memory: workspaces (cuDNN, im2col) and temporaries beside outputs
            torch.cuda.synchronize(state.device)
            torch.cuda.reset_peak_memory_stats(state.device)
            before = torch.cuda.memory_allocated(state.device)
        try:
            with torch.no_grad():
                outputs = correctness.flatten_outputs(state.model(*inputs))
        except BaseException as exc:  # noqa: BLE001
            raise _problem_error("reference forward", exc, state) from None
        working = torch.cuda.max_memory_allocated(state.device) - before if cuda else 0
        return {
            "input_bytes": tensor_bytes(inputs),
            "output_bytes": tensor_bytes(outputs),
            "parameter_bytes": tensor_bytes([*state.model.parameters(), *state.model.buffers()]),
            "reference_working_bytes": max(0, working),
        }

    def _unwritten_output(self) -> str | None:
        """For a generalisation attempt: does the reference define every output element here?"""
        state = self.state
        assert state.problem is not None and state.model is not None
        try:
            torch.manual_seed(0)
            inputs = problem_inputs(state.problem, state.device)
            with torch.no_grad():
                outputs = correctness.flatten_outputs(state.model(*cloned(inputs)))
            return generalisation.unwritten_output(state.model, inputs, outputs)
        except BaseException as exc:  # noqa: BLE001 - the attempt is not usable
            return f"the reference failed: {type(exc).__name__}: {exc}"

    def _perturb_parameters(self, seed: Any) -> dict[str, Any]:
        """Moves the model's parameters off their default initialisation (perturbation.py); no seed, no
        perturbation (a caller that does not ask for one)."""
        state = self.state
        assert state.model is not None
        if seed is None:
            state.perturbed = []
            return {"tensors": 0, "names": []}
        state.perturbed = perturb_model(state.model, int(seed))
        return {"tensors": len(state.perturbed), "names": [entry.name for entry in state.perturbed]}

    def _export_parameters(self, exporter: SharedTensorExporter) -> dict[str, Any]:
        """The perturbed tensors' names, default and perturbed values, for the candidate worker to find
        and set in ModelNew."""
        entries = self.state.perturbed
        return {
            "names": [entry.name for entry in entries],
            "defaults": [values.encode(entry.default, exporter.export) for entry in entries],
            "perturbed": [values.encode(entry.perturbed, exporter.export) for entry in entries],
        }

    def _reference_call_seconds(self, inputs: list[Any]) -> float:
        """One warm forward of the reference: the basis of each candidate call's time limit
        (src/verify/call_deadlines). The first call pays for lazy set-up (cuBLAS handles, thread pools);
        the fastest of a few more is kept, since a busy machine only ever makes a call slower."""
        state = self.state
        assert state.model is not None

        def timed_call() -> float:
            start = time.perf_counter()
            state.model(*inputs)
            if state.device.type == "cuda":
                torch.cuda.synchronize(state.device)
            return time.perf_counter() - start

        try:
            with torch.no_grad():
                first = timed_call()
                times = [timed_call()]
                while len(times) < REFERENCE_CALL_REPEATS and first + sum(times) < REFERENCE_CALL_BUDGET_S:
                    times.append(timed_call())
        except BaseException as exc:  # noqa: BLE001
            raise _problem_error("reference forward", exc, state) from None
        return min(times)

    def export_init(self, request: dict[str, Any]) -> dict[str, Any]:
        """The init inputs, copied into buffers of one evaluation (a candidate may scribble on its own)."""
        state = self.state
        evaluation = str(request["evaluation"])
        exporter = self._exporter(request)
        previous = state.init_exporters.pop(evaluation, None)
        if previous is not None:
            previous.release()
        state.init_exporters[evaluation] = exporter
        return {
            "init_inputs": [values.encode(value, exporter.export) for value in state.init_inputs],
            "parameters": self._export_parameters(exporter),
        }

    def end_evaluation(self, request: dict[str, Any]) -> dict[str, Any]:
        """Free every buffer of one evaluation, whatever state its candidate left it in."""
        if self.generalised is not None:
            self.generalised.end_evaluation(request)
        evaluation = str(request["evaluation"])
        for key in [key for key in self.state.trials if key.split(":", 1)[0] == evaluation]:
            self.state.trials.pop(key).exporter.release()
        exporter = self.state.init_exporters.pop(evaluation, None)
        if exporter is not None:
            exporter.release()
        return {}

    def trim(self, request: dict[str, Any]) -> dict[str, Any]:
        """The problem has nothing queued: its cached references shrink to `keep_bytes` (default: an idle
        share of the device's memory) and the allocator hands its free blocks back, so the judges of the
        next problems find the memory free. Open trials keep what they hold."""
        judges = [self] if self.generalised is None else [self, self.generalised]
        keep = request.get("keep_bytes")
        freed = 0
        for judge in judges:
            state = judge.state
            limit = int(keep) if keep is not None else memory_of(state.device) // IDLE_SHARE
            freed += state.references.shrink_to(limit)
        device = self.state.device
        release_device_memory(device)
        return {
            "freed_bytes": freed,
            "cached_bytes": sum(judge.state.references.total_bytes for judge in judges),
            "reserved_bytes": torch.cuda.memory_reserved(device) if device.type == "cuda" else 0,
        }

    def _exporter(self, request: dict[str, Any]) -> SharedTensorExporter:
        device = self.state.device
        return SharedTensorExporter(device, str(request["transfer_dir"]), cuda_driver_for(device))

    def _importer(self, request: dict[str, Any]) -> SharedTensorImporter:
        device = self.state.device
        return SharedTensorImporter(device, str(request["transfer_dir"]), cuda_driver_for(device))

    def _reference(self, seed: int, perturbed: bool = True) -> Reference:
        """Inputs from the seed and the reference's outputs on a private copy, with the model's parameters
        perturbed or (when the candidate's could not be) at their defaults; cached by both."""
        state = self.state
        key = (seed, perturbed or not state.perturbed)
        cached = state.references.get(key)
        if cached is not None:
            return cached
        if not key[1]:
            with at_default(state.perturbed):
                return self._computed_reference(seed, key)
        return self._computed_reference(seed, key)

    def _computed_reference(self, seed: int, key: tuple[int, bool]) -> Reference:
        state = self.state
        assert state.problem is not None and state.model is not None, "load first"
        if state.nondeterminism is not None:
            raise WorkerError("problem", state.nondeterminism)
        try:
            torch.manual_seed(seed)
            inputs = problem_inputs(state.problem, state.device)
            rng = _rng_state(state.device)
            with uninitialized_memory_poisoned():  # as the candidate's forward runs
                raw_reference, arguments = self._forward_with_arguments(inputs)
            outputs = correctness.flatten_outputs(raw_reference)
            aliases = [
                correctness.aliased_input(value, arguments) if isinstance(value, torch.Tensor) else None
                for value in outputs
            ]
            container = type(raw_reference).__name__ if isinstance(raw_reference, (tuple, list)) else None
            undefined = self._unwritten_elements(inputs, outputs, rng)
            _refuse_all_nan_outputs(outputs)  # after: an output never written is NaN-poisoned everywhere
            if state.tf32_slack is None:
                state.tf32_slack = self._tf32_slack(inputs, outputs, rng)
        except WorkerError:
            raise
        except BaseException as exc:  # noqa: BLE001
            raise _problem_error("reference forward", exc, state) from None
        dtypes = _float_dtypes([*inputs, *outputs])
        reference = Reference(inputs, outputs, container, dtypes, undefined, aliases, rng, not key[1])
        state.references.put(key, reference)
        return reference

    def _forward(self, inputs: list[Any], moved: bool = False) -> Any:
        """The reference on a private copy of the inputs (it may write into its own arguments); `moved`:
        copies at other addresses, among other neighbours (cloned_apart)."""
        return self._forward_with_arguments(inputs, moved)[0]

    def _rerun(
        self,
        inputs: list[Any],
        rng: tuple[torch.Tensor, list[torch.Tensor]] | None,
        poison: Callable[[], contextlib.AbstractContextManager[Any]] = uninitialized_memory_poisoned,
        moved: bool = False,
    ) -> list[Any]:
        """The reference's outputs once more on the same inputs, from the RNG state its first run started
        from (the checks that compare two runs need the same draws), with fresh memory poisoned."""
        if rng is not None:
            _restore_rng_state(self.state.device, rng)
        with poison():
            return correctness.flatten_outputs(self._forward(inputs, moved))

    def _forward_with_arguments(self, inputs: list[Any], moved: bool = False) -> tuple[Any, list[Any]]:
        """The reference's result and the private copies it was called with (an output may be one)."""
        state = self.state
        assert state.model is not None, "load first"
        arguments, spacers = cloned_apart(inputs) if moved else (cloned(inputs), Spacers())
        with torch.no_grad(), _written_copies_apart(state.problem if moved else None, spacers):
            raw = state.model(*arguments)
        if state.device.type == "cuda":
            torch.cuda.synchronize(state.device)
        if written := spacers.written():
            state.nondeterminism = (
                f"the reference writes outside its arguments (into memory just {', '.join(written)}): "
                "whatever lies there is overwritten, other buffers of the judge or of the candidate's timed "
                "calls included, so no candidate can be judged against it; fix its indexing (strides, "
                "masks)"
            )
            raise WorkerError("problem", state.nondeterminism)
        return raw, arguments

    def _unwritten_elements(
        self, inputs: list[Any], outputs: list[Any], rng: tuple[torch.Tensor, list[torch.Tensor]]
    ) -> list[torch.Tensor | None]:
        """Per output, the elements the reference leaves unwritten (None: every element is written).

        The reference runs again on the same inputs, from the same RNG state, with a second poison: for
        an output holding torch's poison somewhere (only then can an element be unwritten), and once per
        problem in any case. Elements apart by more than the tolerance are undefined where the first run
        held the poison there, and otherwise show a reference that disagrees with itself: a race, a read
        outside its inputs, state kept between calls. That is the problem's error, as is an output that
        is undefined everywhere: there is nothing to compare."""
        state = self.state
        tensors = [value if isinstance(value, torch.Tensor) else None for value in outputs]
        poisoned = any(tensor is not None and may_hold_poison(tensor) for tensor in tensors)
        if not poisoned and state.determinism_checked:
            return [None] * len(outputs)
        first_check = not state.determinism_checked
        state.determinism_checked = True
        started = time.perf_counter()
        # Poisoned differently, and the arguments moved: reads past them show.
        second = self._rerun(inputs, rng, uninitialized_memory_poisoned_differently, moved=True)
        masks = self._compare_runs(tensors, second)
        if first_check:
            self._refuse_random_draws(inputs, tensors, rng)
            # A race shows only now and then: more runs while they are cheap.
            deadline = started + DETERMINISM_SECONDS
            for _ in range(DETERMINISM_EXTRA_RUNS):
                if time.perf_counter() > deadline:
                    break
                self._compare_runs(tensors, self._rerun(inputs, rng))
        return masks

    def _refuse_random_draws(
        self,
        inputs: list[Any],
        tensors: list[torch.Tensor | None],
        rng: tuple[torch.Tensor, list[torch.Tensor]],
    ) -> None:
        """The reference once more on the same inputs from another state of the random generator: outputs
        that change draw their own random numbers (a wrapper that makes its operands with torch.rand).
        The candidate's process cannot be given the judge's draws without handing it the secret input
        seeds, so no candidate can match such a reference: the problem's error, with that reason."""
        torch.manual_seed(OTHER_RNG_SEED)
        try:
            with uninitialized_memory_poisoned():
                other = correctness.flatten_outputs(self._forward(inputs))
        finally:
            _restore_rng_state(self.state.device, rng)
        for index, tensor in enumerate(tensors):
            redrawn = other[index] if index < len(other) else None
            if tensor is None or not isinstance(redrawn, torch.Tensor) or redrawn.shape != tensor.shape:
                continue
            differs = undefined_elements(tensor, redrawn, correctness.default_tolerance(tensor.dtype))
            if bool((differs & ~poison_elements(tensor)).any().item()):
                self._compare_runs(tensors, self._rerun(inputs, rng))  # a race differs here too: named as one
                self.state.nondeterminism = (
                    f"the reference's output {index} ({values.describe(tensor)}) changes with the random "
                    "generator's state alone: on the same inputs it agreed with itself, and differed once "
                    "torch was seeded otherwise. It draws its own random numbers (torch.rand/randn inside "
                    "forward or the wrapper), so its outputs do not follow its inputs, and no candidate can "
                    "be given the same draws without revealing the judge's secret seeds; pass the random "
                    "tensors in as inputs"
                )
                raise WorkerError("problem", self.state.nondeterminism)

    def _tf32_slack(
        self, inputs: list[Any], outputs: list[Any], rng: tuple[torch.Tensor, list[torch.Tensor]]
    ) -> list[float]:
        """Per output, how far the reference's float32 answer moves when the same call runs in full float32
        (docs/verdict.md, "TF32 in the reference"); measured once per problem, on a GPU only."""
        state = self.state
        measurable = tf32_slack.tf32_in_use() and tf32_slack.has_tf32_outputs(outputs)
        if state.device.type != "cuda" or not measurable:
            return [0.0] * len(outputs)
        with tf32_slack.tf32_disabled():
            full = self._rerun(inputs, rng)
        return tf32_slack.output_slack(outputs, full)

    def _tolerance(
        self, output: int, dtype: torch.dtype, request: dict[str, Any]
    ) -> tuple[correctness.Tolerance, float]:
        """The output's tolerance: the user's --atol/--rtol, else the dtype's default with room for the
        reference's own TF32 rounding; and the TF32 slack that widened it (0 when it did not)."""
        tolerance = correctness.resolve_tolerance(dtype, request.get("atol"), request.get("rtol"))
        slack = self.state.tf32_slack or []
        if request.get("atol") is not None or output >= len(slack) or slack[output] <= 0:
            return tolerance, 0.0
        widened = tf32_slack.widened(tolerance, slack[output])
        return widened, slack[output] if widened.atol != tolerance.atol else 0.0

    def _compare_runs(
        self, tensors: list[torch.Tensor | None], second: list[Any]
    ) -> list[torch.Tensor | None]:
        """The undefined elements of each output between two runs of the reference on the same inputs;
        raises the problem's error where they disagree outside the poison (see _unwritten_elements)."""
        state = self.state
        masks: list[torch.Tensor | None] = []
        for index, tensor in enumerate(tensors):
            other = second[index] if index < len(second) else None
            if tensor is None or not isinstance(other, torch.Tensor) or other.shape != tensor.shape:
                masks.append(None)
                continue
            mask = undefined_elements(tensor, other, correctness.default_tolerance(tensor.dtype))
            disagreeing = mask & ~poison_elements(tensor)
            if bool(disagreeing.any().item()):
                state.nondeterminism = _nondeterminism_message(index, tensor, other, disagreeing)
                raise WorkerError("problem", state.nondeterminism)
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
        reference = self._reference(seed, bool(request.get("perturbed", True)))
        exporter = self._exporter(request)
        trial = Trial(exporter, [], [], reference.inputs, reference.outputs, reference.container)
        trial.undefined, trial.aliases, trial.source = reference.undefined, reference.aliases, reference

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
        self._release_if_large(reference)
        return {"inputs": encoded, "input_dtypes": reference.float_dtypes}

    def _release_if_large(self, reference: Reference) -> None:
        """After a large reference was computed, its extra runs' temporaries (the determinism, unwritten
        and TF32 runs, each as large as the outputs) go back to the device before the candidate's forward,
        which runs in another process and cannot use the judge's free blocks."""
        if self.state.device.type == "cuda" and (
            tensor_bytes([*reference.inputs, *reference.outputs]) >= LARGE_TRIAL_BYTES
        ):
            release_device_memory(self.state.device)

    def refresh_trial(self, request: dict[str, Any]) -> dict[str, Any]:
        """New values from a new seed, written into the same shared buffers the candidate holds: its
        next output must follow them (a cache keyed on pointers or shapes cannot)."""
        trial = self.state.trials[str(request["trial"])]
        fresh = self._reference(int(request["seed"]), bool(request.get("perturbed", True)))
        tensors = tensors_in(fresh.inputs)  # as start_trial exported them
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
        trial.undefined, trial.aliases, trial.source = fresh.undefined, fresh.aliases, fresh
        trial.shadow = None
        self._release_if_large(fresh)
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
            undefined = _undefined_at(trial.undefined, index)
            report = self._aliasing_problem(index, encoded, trial.aliases)
            report = report or self._compare_one(index, encoded, ref, importer, request, undefined, trial)
            if isinstance(encoded, dict) and encoded.get("aliases_input") is not None:
                report["aliases_input"] = encoded["aliases_input"]  # passed through: no kernel computed it
            reports.append(report)
            if not report["passed"]:
                failures.append(report.get("reason") or self._failure_reason(index, report))
                checks.append("output-type" if "reason" in report else report.get("check", "output-mismatch"))
        return {
            "passed": not failures,
            "failures": failures,
            "checks": checks,
            "outputs": reports,
            "mutated_inputs": mutated,
        }

    @staticmethod
    def _aliasing_problem(index: int, encoded: Any, aliases: list[int | None]) -> dict[str, Any] | None:
        """An output that is a view of an input passes only where the reference's is that input too (a
        wrapper returning its own arguments); its values are then compared like any output's."""
        aliased = encoded.get("aliases_input") if isinstance(encoded, dict) else None
        if aliased is None or (index < len(aliases) and aliases[index] == aliased):
            return None
        reason = f"output {index} is a view of input {aliased}, expected a tensor of its own"
        return {"passed": False, "reason": reason}

    def _compare_one(
        self,
        index: int,
        encoded: Any,
        ref: Any,
        importer: SharedTensorImporter,
        request: dict[str, Any],
        undefined: torch.Tensor | None = None,
        trial: Trial | None = None,
    ) -> dict[str, Any]:
        if correctness.is_plain_value(ref):
            return _compare_plain_value(index, encoded, ref)
        if not isinstance(ref, torch.Tensor):
            raise WorkerError(
                "problem",
                f"reference output {index} is {values.describe(ref)}; kforge compares tensors and plain "
                "values (None, bool, int, float, str)",
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
        tolerance, slack = self._tolerance(index, ref.dtype, request)
        if undefined is None:
            report = _with_variation(correctness.compare_tensor(out, ref, tolerance), out, ref)
        else:  # every criterion sees only the elements the reference writes
            defined_out, defined_ref = correctness.defined_elements(out, ref, undefined)
            report = _with_variation(
                correctness.compare_tensor(defined_out, defined_ref, tolerance), defined_out, defined_ref
            )
            report.update(shape=list(ref.shape), undefined_elements=int(undefined.sum().item()))
        if slack:
            report["tf32_slack"] = slack
        numeric_failure = not report["passed"] and "reason" not in report
        if numeric_failure and request.get("atol") is None and rounding_slack.roomable(ref.dtype) and trial:
            report = self._with_rounding_room(index, report, (out, ref, undefined), tolerance, trial)
        return report

    def _with_rounding_room(
        self,
        index: int,
        report: dict[str, Any],
        compared: tuple[torch.Tensor, torch.Tensor, torch.Tensor | None],
        tolerance: correctness.Tolerance,
        trial: Trial,
    ) -> dict[str, Any]:
        """An output that failed, compared again with room for the reference's own variability: its
        criteria widened by how far the reference is from its float64 run (rounding_slack, float32) and
        from itself under its autotuners' other configs (autotune_room, any floating dtype)."""
        measured = self._rounding(trial.source)
        if isinstance(measured, str):
            return {**report, "rounding_slack": f"not measured: {measured}"}
        room = measured[index] if index < len(measured) else None
        if room is None or room.max_abs == 0.0:
            return report
        out, ref, undefined = compared
        if undefined is not None:
            out, ref = correctness.defined_elements(out, ref, undefined)
        again = correctness.compare_tensor(out, ref, rounding_slack.widened(tolerance, room))
        measured_variation = {key: report[key] for key in correctness.VARIATION_KEYS if key in report}
        again = _with_variation(again, out, ref, rounding_slack.with_variation_room(measured_variation, room))
        kept = {key: report[key] for key in ("shape", "undefined_elements", "tf32_slack") if key in report}
        return {**again, **kept, "rounding_slack": room.as_json()}

    def _rounding(self, reference: Reference | None) -> list[rounding_slack.RoundingSlack | None] | str:
        """The reference's own variability on its inputs (_measure_rounding), once per cached reference."""
        if reference is None:
            return "no reference to measure"
        if reference.rounding is None:
            reference.rounding = self._measure_rounding(reference)
        return reference.rounding

    def _measure_rounding(self, reference: Reference) -> list[rounding_slack.RoundingSlack | None] | str:
        """The reference's own variability on its inputs: its distance from its float64 run and from its
        runs under its autotuners' other configs (autotune_room), the larger per output."""
        float64 = self._float64_room(reference)
        tuned = self._autotune_room(reference)
        if tuned is None:
            return float64
        return tuned if isinstance(float64, str) else rounding_slack.widest(float64, tuned)

    def _autotune_room(self, reference: Reference) -> list[rounding_slack.RoundingSlack | None] | None:
        state = self.state
        try:
            with at_default(state.perturbed) if reference.at_defaults else contextlib.nullcontext():
                return autotune_room.measured(
                    reference.outputs, lambda: self._rerun(reference.inputs, reference.rng)
                )
        finally:
            release_device_memory(state.device)

    def _float64_room(self, reference: Reference) -> list[rounding_slack.RoundingSlack | None] | str:
        state = self.state
        assert state.model is not None, "load first"
        if not any(
            isinstance(out, torch.Tensor) and rounding_slack.applies_to(out.dtype)
            for out in reference.outputs
        ):
            return "no float32 or complex64 output"  # a float64 run would give no output room: not run
        try:
            with at_default(state.perturbed) if reference.at_defaults else contextlib.nullcontext():
                exact_model = rounding_slack.float64_model(state.model)  # the parameters it ran with
            exact_inputs = rounding_slack.in_float64(reference.inputs)
            if reference.rng is not None:
                _restore_rng_state(state.device, reference.rng)
            # Poisoned: elements it leaves unwritten stay NaN, which the measurement skips.
            with torch.no_grad(), uninitialized_memory_poisoned():
                exact = correctness.flatten_outputs(exact_model(*exact_inputs))
            if state.device.type == "cuda":
                torch.cuda.synchronize(state.device)
            return rounding_slack.measured(reference.outputs, exact)
        except Exception as exc:  # noqa: BLE001 - a model that cannot run in float64 keeps the plain criteria
            return f"the reference does not run in float64 ({type(exc).__name__}: {str(exc)[:200]})"
        finally:
            exact_model = exact_inputs = exact = None  # type: ignore[assignment]
            release_device_memory(state.device)

    @classmethod
    def _failure_reason(cls, index: int, report: dict[str, Any]) -> str:
        if report.get("check") == "output-variation":
            return (
                f"output {index} is within atol={report['atol']:g} rtol={report['rtol']:g} of the reference "
                f"but does not follow its variation: ||out - ref|| / ||ref - mean(ref)|| = "
                f"{report['rel_variation_error']:.3g}, above {report['variation_bound']:g} for "
                f"{report['dtype']} (a constant output scores at least 1), and it does not vary with it "
                f"either (slope of out on ref {report['variation_slope']:.3g}, rel-L2 error "
                f"{report['rel_l2_error']:.3g} against rtol {report['rtol']:g})"
            )
        return cls._mismatch_reason(index, report)

    @staticmethod
    def _mismatch_reason(index: int, report: dict[str, Any]) -> str:
        return (
            f"output {index}: {report['mismatched_elements']} of {report['total_elements']} elements outside "
            f"atol={report['atol']:g} rtol={report['rtol']:g} (max abs error {report['max_abs_error']:.3g}, "
            f"max rel error {report['max_rel_error']:.3g}, "
            f"{report['nonfinite_mismatches']} NaN/Inf mismatches)"
            + Judge._undefined_note(report)
            + Judge._tf32_note(report)
        )

    @staticmethod
    def _tf32_note(report: dict[str, Any]) -> str:
        slack = report.get("tf32_slack")
        return (
            f"; atol widened for the reference's TF32 rounding (full float32 moves it by {slack:.3g})"
            if slack
            else ""
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

    def trace_reference(self, request: dict[str, Any]) -> dict[str, Any]:
        """One reference call on the trial's inputs, traced as the candidate's forwards are (Triton launches,
        ATen compute, GPU kernels, host reads). In kernel mode the reference is itself a Triton program, and
        the PyTorch work it runs around its kernels is what a candidate may run too (reference parity,
        docs/rules.md). Triton's launchers are wrapped for this call only."""
        state = self.state
        trial = self._trial(request)
        arguments = cloned(trial.reference_inputs)
        recorder = LaunchRecorder()
        try:
            with (
                recorder.installed(),
                uninitialized_memory_poisoned(),
                traced_forward(recorder, state.device, model=state.model) as trace,
                torch.no_grad(),
            ):
                assert state.model is not None, "load first"
                state.model(*arguments)
        except WorkerError:
            raise
        except BaseException as exc:  # noqa: BLE001
            raise _problem_error("reference forward", exc, state) from None
        return {"trace": trace.to_json()}

    def end_trial(self, request: dict[str, Any]) -> dict[str, Any]:
        trial = self.state.trials.pop(str(request["trial"]), None)
        if trial is not None:
            trial.exporter.release()
            if tensor_bytes([*trial.reference_inputs, *trial.reference]) >= LARGE_TRIAL_BYTES:
                del trial
                release_device_memory(self.state.device)  # its temporaries, back to the other processes
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

    def _timer(self) -> SampleTimer:
        state = self.state
        if state.timer is None:
            try:
                state.timer = SampleTimer.for_device(state.device)
            except ValueError as exc:
                raise WorkerError("usage", str(exc)) from None
        return state.timer

    def time(self, request: dict[str, Any]) -> dict[str, Any]:
        """Times the reference (eager or compiled) on its private copy of the timing inputs, exactly as
        the candidate worker times the candidate (kforge.worker.timing): an optional warm-up, `count`
        samples with the value set named by `value_order` copied in before each, `wall_calls`
        back-to-back calls."""
        state = self.state
        timer = self._timer()
        trial = self._trial(request)
        baseline = str(request.get("baseline", "eager"))
        model = self._timed_model(baseline)
        if trial.shadow is None:
            trial.shadow = ShadowedReference.of(
                trial.reference_inputs,
                [value_set.inputs for value_set in trial.value_sets],
                model_tensors(state.model),  # an output that is a view of the weights is never poisoned
                state.device,
            )
        count = int(request["count"])
        order = [int(index) for index in request.get("value_order", [])]
        sets = trial.value_sets
        if sets and (len(order) != count or any(not 0 <= index < len(sets) for index in order)):
            raise WorkerError("protocol", f"value_order must name one of {len(sets)} value sets per sample")
        pacing = trial.pacing.setdefault(baseline, Pacing())
        warmup = WarmUpPolicy.from_request(request.get("warmup"))
        wall_calls = int(request.get("wall_calls", 0))
        hooks = trial.shadow.hooks(model, order)
        reply: dict[str, Any] = {}
        try:
            if warmup is not None:
                warm = timer.warm_up(hooks.call, pacing, warmup, hooks.warm_up_before)
                reply["warmup"] = warm.to_json()
            batch = timer.samples(hooks.call, count, pacing, hooks.before_sample, hooks.after_sample)
            if wall_calls > 0:
                wall = timer.wall_per_call(hooks.call, wall_calls)
                hooks.after_sample(count - 1)
                reply.update(wall_ms_per_call=wall.wall_ms_per_call, host_ms_per_call=wall.host_ms_per_call)
        except BaseException as exc:  # noqa: BLE001 - torch.compile may fail on the problem's model
            raise _problem_error(f"{baseline} baseline", exc, state) from None
        reply.update(
            samples_ms=batch.samples_ms,
            host_exposed=batch.host_exposed,
            sample_cost_ms=batch.sample_cost_ms,
            sleep_us=batch.sleep_us,
        )
        return reply

    def add_value_sets(self, request: dict[str, Any]) -> dict[str, Any]:
        """More input value sets for a timing trial, from `seeds`: each set's inputs are shared with the
        candidate in buffers of their own (copied into the timing inputs between samples), and its
        reference outputs kept to check the timed calls. At most `max_bytes` of inputs in all; sets
        whose shapes, dtypes or non-tensor arguments differ from the trial's are not used."""
        state = self.state
        trial = self._trial(request)
        first = trial.own_reference()
        sets = [first]
        set_bytes = sum(v.nbytes for v in first.inputs if isinstance(v, torch.Tensor))
        budget = int(request.get("max_bytes", 0))
        if state.device.type == "cuda":
            budget = min(budget, torch.cuda.mem_get_info(state.device)[0] // 4)
        reason = None
        for seed in request.get("seeds", []):
            if set_bytes * (len(sets) + 1) > budget:
                reason = f"the timing inputs ({set_bytes} bytes a set) leave no room for more value sets"
                break
            fresh = self._reference(int(seed))
            reason = _value_set_mismatch(first.inputs, fresh.inputs)
            if reason is not None:
                break
            sets.append(fresh)
        if len(sets) < 2:
            return {"value_sets": [], "count": 1, "reason": reason}
        exporter = trial.exporter
        encoded_sets = []
        trial.value_shared = []
        for value_set in sets:
            shared: list[torch.Tensor] = []

            def export_and_keep(tensor: torch.Tensor, shared: list[torch.Tensor] = shared) -> dict[str, Any]:
                descriptor = exporter.export(tensor)
                shared.append(exporter.last_view)
                return descriptor

            encoded_sets.append([values.encode(value, export_and_keep) for value in value_set.inputs])
            trial.value_shared.append(shared)
        trial.value_sets, trial.shadow = sets, None
        return {"value_sets": encoded_sets, "count": len(sets), "reason": reason}

    def check_timed(self, request: dict[str, Any]) -> dict[str, Any]:
        """Checks what the candidate kept of its timed calls against the references of the value sets
        they ran on: the whole last output of each set (`slots`) and sampled elements of every timed
        call (`rows`, the set of each in `order`); and that no timing input or value set was modified."""
        trial = self._trial(request)
        sets = trial.value_sets or [trial.own_reference()]
        importer = self._importer(request)
        try:
            failures, checks = self._check_timed_inputs(trial, sets, int(request.get("last_set", 0)))
            for slot in request.get("slots", []):
                value_set = int(slot.get("set", -1))
                if not 0 <= value_set < len(sets):
                    failures.append(f"a kept timed output names value set {value_set} of {len(sets)}")
                    continue
                reference = sets[value_set]
                probe = Trial(
                    trial.exporter, [], [], reference.inputs, reference.outputs, reference.container
                )
                probe.undefined, probe.source = reference.undefined, reference
                result = self._compare(probe, {**request, **slot}, importer)
                failures += [
                    f"last timed output on value set {value_set}: {text}" for text in result["failures"]
                ]
                checks += result["checks"]
            sampled = self._check_sampled_rows(sets, request, importer)
            failures += sampled
            checks += ["output-mismatch"] * len(sampled)
        finally:
            importer.release()
        return {"passed": not failures, "failures": failures, "checks": checks}

    def _check_timed_inputs(
        self, trial: Trial, sets: list[Reference], last_set: int
    ) -> tuple[list[str], list[str]]:
        last = sets[last_set] if 0 <= last_set < len(sets) else sets[0]
        pristine = tensors_in(last.inputs)
        failures = []
        mutated = correctness.mutated_inputs(trial.shared, pristine)
        if mutated:
            failures.append(f"the timed calls modified tensor input(s) {mutated} in place")
        for index, (shared, value_set) in enumerate(zip(trial.value_shared, sets, strict=False)):
            if correctness.mutated_inputs(shared, tensors_in(value_set.inputs)):
                failures.append(f"the candidate wrote into the timing value set {index}")
        return failures, ["input-mutation"] * len(failures)

    def _check_sampled_rows(
        self, sets: list[Reference], request: dict[str, Any], importer: SharedTensorImporter
    ) -> list[str]:
        order = [int(index) for index in request.get("order", [])]
        rows_encoded, positions_encoded = request.get("rows", []), request.get("positions", [])
        reference = sets[0].outputs
        if len(rows_encoded) != len(reference) or len(positions_encoded) != len(reference):
            return [f"the timed calls kept {len(rows_encoded)} output(s), the reference has {len(reference)}"]
        if any(not 0 <= index < len(sets) for index in order):
            return ["a timed call names a value set that does not exist"]
        failures = []
        for output, (rows_descriptor, positions_descriptor) in enumerate(
            zip(rows_encoded, positions_encoded, strict=True)
        ):
            if not isinstance(reference[output], torch.Tensor):  # a plain value: the kept output checks it
                continue
            try:
                rows, positions = importer.open(rows_descriptor), importer.open(positions_descriptor)
            except (KeyError, TypeError, ValueError, OSError, RuntimeError) as exc:
                raise WorkerError(
                    "bad_output", f"timed output samples could not be read back: {exc}"
                ) from None
            expected = sampled_reference(
                [sets[index].outputs[output] for index in order], positions, rows.shape
            )
            if isinstance(expected, str):
                failures.append(f"timed output {output}: {expected}")
                continue
            if rows.dtype != expected.dtype:
                failures.append(
                    f"timed output {output} is {values.dtype_name(rows.dtype)}, "
                    f"expected {values.dtype_name(expected.dtype)}"
                )
                continue
            tolerance, _ = self._tolerance(output, expected.dtype, request)
            ignored = sampled_undefined(
                [_undefined_at(sets[index].undefined, output) for index in order], positions, rows.shape
            )
            wrong = first_wrong_row(rows, expected, tolerance, ignored)
            roundable = request.get("atol") is None and rounding_slack.roomable(expected.dtype)
            if wrong is not None and roundable:  # room for the reference's rounding, as in the trials
                widened = self._timed_rounding_room(output, tolerance, [sets[index] for index in set(order)])
                wrong = first_wrong_row(rows, expected, widened, ignored) if widened else wrong
            if wrong is not None:
                failures.append(
                    f"output {output} of timed call {wrong + 1} of {len(order)} (value set {order[wrong]}) "
                    "differs from the reference at sampled elements"
                )
        return failures

    def _timed_rounding_room(
        self, output: int, tolerance: correctness.Tolerance, sets: list[Reference]
    ) -> correctness.Tolerance | None:
        """The timed calls' tolerance with room for the reference's own rounding on every value set they
        used, as the trials' comparison gives it (None where it cannot be measured)."""
        rooms = []
        for reference in sets:
            measured = self._rounding(reference)
            room = None if isinstance(measured, str) or output >= len(measured) else measured[output]
            if room is None:
                return None
            rooms.append(room)
        widest = max(rooms, key=lambda room: room.max_abs, default=None)
        return rounding_slack.widened(tolerance, widest) if widest is not None else None


def _nondeterminism_message(
    index: int, first: torch.Tensor, second: torch.Tensor, disagreeing: torch.Tensor
) -> str:
    count = int(disagreeing.sum().item())
    if first.is_floating_point():
        gap = (first.double() - second.double()).abs()[disagreeing]
        spread = f", by up to {float(gap.max().item()):.3g}"
    else:
        spread = ""
    return (
        f"the reference disagrees with itself: run twice on the same inputs, its output {index} "
        f"({values.describe(first)}) differed in {count} of {first.numel()} elements{spread}. It races "
        "(overlapping writes, unordered atomics), reads memory outside its inputs, or keeps state between "
        "calls, so no candidate can be judged against it; make the reference deterministic"
    )


@contextmanager
def _written_copies_apart(problem: ModuleType | None, spacers: Spacers) -> Iterator[None]:
    """While the block runs, a kernel-mode adapter's private copies of the arguments its wrapper writes
    (`_kf_private_copy`) are made between spacers too: writes past such an argument show."""
    original = getattr(problem, "_kf_private_copy", None) if problem is not None else None
    if original is None:
        yield
        return
    problem.__dict__["_kf_private_copy"] = spacers.copy_apart
    try:
        yield
    finally:
        problem.__dict__["_kf_private_copy"] = original


def _refuse_all_nan_outputs(outputs: list[Any]) -> None:
    """An output the reference makes NaN in every element leaves nothing to compare (NaN matches NaN, so
    any candidate, even one that launches nothing, would pass): the problem's error."""
    for index, value in enumerate(outputs):
        if (
            isinstance(value, torch.Tensor)
            and value.numel() > 0
            and (value.is_floating_point() or value.is_complex())
            and bool(torch.isnan(value).all().item())
        ):
            raise WorkerError(
                "problem",
                f"reference output {index} ({values.describe(value)}) is NaN in every element, so no "
                "candidate's output can be told right or wrong; fix the reference or its inputs (a softmax "
                "over a row that is masked out entirely gives NaN, for example)",
            )


def _undefined_at(undefined: list[torch.Tensor | None], output: int) -> torch.Tensor | None:
    """The elements of `output` its reference leaves unwritten (None: all written, or not known)."""
    return undefined[output] if output < len(undefined) else None


def _value_set_mismatch(first: list[Any], other: list[Any]) -> str | None:
    """Why another seed's inputs cannot be rotated through the same buffers (None if they can)."""
    if len(first) != len(other):
        return "get_inputs() gives another number of inputs for another seed"
    for index, (a, b) in enumerate(zip(first, other, strict=True)):
        if isinstance(a, torch.Tensor) != isinstance(b, torch.Tensor):
            return f"input {index} is a tensor for one seed and not for another"
        if isinstance(a, torch.Tensor):
            if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
                return f"get_inputs() gives input {index} another shape or dtype for another seed"
        elif argument_objects.is_argument_object(a):
            if not argument_objects.same_layout(a, b):
                return f"get_inputs() gives object input {index} other attributes for another seed"
        elif argument_objects.is_tensor_sequence(a):
            if type(a) is not type(b) or _value_set_mismatch(list(a), list(b)) is not None:
                return f"get_inputs() gives sequence input {index} other items for another seed"
        elif type(a) is not type(b) or not _same_value(a, b):
            return f"get_inputs() gives non-tensor input {index} another value for another seed"
    return None


def _same_value(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - a value whose == is not a truth value (an array) counts as different
        return False


def judge_exception(exc: BaseException) -> dict[str, Any]:
    """An exception no handler turned into a verdict: running out of GPU memory (the CUDA context of a
    judge starting on a GPU other processes filled, a driver allocation) is the machine's state, which a
    later attempt may not meet; anything else is a defect of kforge's own worker code."""
    if is_out_of_memory(exc):
        summary = exception_summary(exc, "")
        return protocol.error_response(
            "environment",
            "the GPU ran out of memory while the judge worked (other processes hold it): run fewer "
            f"evaluations at once (-j) or free the GPU; {summary['exception']}: {summary['message']}",
            summary,
        )
    return protocol.internal_error(exc)


def main() -> None:
    judge = Judge()
    protocol.serve(judge.handlers(), judge_exception)
    protocol.exit_after_serving()


if __name__ == "__main__":
    main()
