"""The reference timed beside the candidate, in the candidate worker's own process (issue 31).

Why: a small kernel's device time carries an offset that belongs to the process (its CUDA context)
timing it. On the H200, ten processes timing the same 4096-element add read 4.19 to 4.86 µs while CUPTI
saw the same 1.2 µs kernel in each (docs/benchmarks.md, "the per-process offset"): no two processes
compare a 4 µs call within 2%. One process can. So the candidate worker builds the problem's Model as
the judge does, before it imports the candidate, and times it between its own batches with the same
method. The judge still times the reference in its own process: the supervisor uses the pair measured
here only while the reference here is not slower than in the judge by more than the offset bound
(docs/verdict.md, "Performance"), so a candidate that slows the reference in its own process gains at
most that bound, and this module refuses outright when it can see the candidate reaching for the
reference (replaced torch or Triton functions, a dispatch mode left active, threads it started).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from kforge.worker.dispatch_guard import mode_stack_problems
from kforge.worker.perturbation import perturbable_tensors
from kforge.worker.problem_sizes import apply_size_overrides
from kforge.worker.reference_timing import ShadowedReference, model_tensors
from kforge.worker.runtime import load_module_from_path
from kforge.worker.timing import Pacing

MODULE_NAME = "kforge_reference_beside"


def _watched_owners() -> list[Any]:
    """Namespaces whose functions the reference's call goes through."""
    owners: list[Any] = [torch, torch.nn.functional, torch.Tensor, torch.nn.Module, torch.cuda]
    try:
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction

        owners += [JITFunction, Autotuner]
    except ImportError:  # pragma: no cover - Triton is always there in a worker
        pass
    return owners


def _matmul_backend() -> Any:
    return torch.backends.cuda.matmul


# Global switches that change how fast the reference runs: (name, read, write).
_SWITCHES: tuple[tuple[str, Callable[[], Any], Callable[[Any], None]], ...] = (
    (
        "torch.backends.cuda.matmul.allow_tf32",
        lambda: _matmul_backend().allow_tf32,
        lambda v: setattr(_matmul_backend(), "allow_tf32", v),
    ),
    (
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
        lambda: _matmul_backend().allow_fp16_reduced_precision_reduction,
        lambda v: setattr(_matmul_backend(), "allow_fp16_reduced_precision_reduction", v),
    ),
    (
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
        lambda: _matmul_backend().allow_bf16_reduced_precision_reduction,
        lambda v: setattr(_matmul_backend(), "allow_bf16_reduced_precision_reduction", v),
    ),
    (
        "torch.backends.cudnn.enabled",
        lambda: torch.backends.cudnn.enabled,
        lambda v: setattr(torch.backends.cudnn, "enabled", v),
    ),
    (
        "torch.backends.cudnn.benchmark",
        lambda: torch.backends.cudnn.benchmark,
        lambda v: setattr(torch.backends.cudnn, "benchmark", v),
    ),
    (
        "torch.backends.cudnn.deterministic",
        lambda: torch.backends.cudnn.deterministic,
        lambda v: setattr(torch.backends.cudnn, "deterministic", v),
    ),
    (
        "torch.backends.cudnn.allow_tf32",
        lambda: torch.backends.cudnn.allow_tf32,
        lambda v: setattr(torch.backends.cudnn, "allow_tf32", v),
    ),
    (
        "torch.deterministic_algorithms",
        lambda: (
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
        ),
        lambda v: torch.use_deterministic_algorithms(v[0], warn_only=v[1]),
    ),
)


def _read_switches() -> dict[str, Any]:
    found = {}
    for name, read, _ in _SWITCHES:
        try:
            found[name] = read()
        except Exception:  # noqa: BLE001 - a switch this torch build lacks is not one to restore
            continue
    return found


def _write_switches(wanted: dict[str, Any]) -> None:
    for name, _, write in _SWITCHES:
        if name in wanted:
            write(wanted[name])


@dataclass(frozen=True)
class ProcessSnapshot:
    """What the process looked like before the candidate's code ran: the honest state of the reference."""

    functions: tuple[tuple[Any, str, Any], ...]  # (owner, name, value) of every watched callable
    switches: dict[str, Any]
    threads: frozenset[int]

    @staticmethod
    def take() -> ProcessSnapshot:
        import torch._dynamo  # noqa: F401 - its first import wraps torch.manual_seed: not the candidate's doing

        functions = tuple(
            (owner, name, value)
            for owner in _watched_owners()
            for name, value in vars(owner).items()
            if callable(value)
        )
        return ProcessSnapshot(
            functions, _read_switches(), frozenset(t.ident or 0 for t in threading.enumerate())
        )

    def replaced_functions(self) -> list[str]:
        return [
            f"{getattr(owner, '__name__', owner)}.{name}"
            for owner, name, value in self.functions
            if vars(owner).get(name) is not value
        ]

    def new_threads(self) -> list[str]:
        return [t.name for t in threading.enumerate() if (t.ident or 0) not in self.threads and t.is_alive()]


@contextmanager
def judge_switches(snapshot: ProcessSnapshot) -> Iterator[None]:
    """The reference runs with the global switches the process had before the candidate's code ran (as in
    the judge); the candidate's own settings come back afterwards."""
    candidate_settings = _read_switches()
    _write_switches(snapshot.switches)
    try:
        yield
    finally:
        _write_switches(candidate_settings)


@dataclass
class BesideReference:
    """The problem's Model built in the candidate worker, with its timing state."""

    model: torch.nn.Module
    snapshot: ProcessSnapshot
    pacing: Pacing = field(default_factory=Pacing)
    shadow: ShadowedReference | None = None
    warmed: bool = False

    def refusal(self) -> str | None:
        """Why the reference cannot be timed in this process now, or None."""
        problems = mode_stack_problems()
        replaced = self.snapshot.replaced_functions()
        if replaced:
            problems.append(f"the candidate replaced {', '.join(replaced[:5])}")
        threads = self.snapshot.new_threads()
        if threads:
            problems.append(f"the candidate started thread(s) {', '.join(threads[:5])}")
        return "; ".join(problems) or None

    def open_inputs(self, inputs: list[Any], value_sets: list[list[Any]], device: torch.device) -> None:
        """Private copies of the timing inputs; the value sets are only read."""
        self.shadow = ShadowedReference.of(inputs, value_sets, model_tensors(self.model), device)


def build_beside_reference(
    spec: dict[str, Any], device: torch.device, init_inputs: list[Any], perturbed: dict[str, torch.Tensor]
) -> BesideReference:
    """Imports the problem file kforge copied for this worker and builds Model as the judge did: the same
    size constants, seed, constructor arguments and perturbed parameter values."""
    snapshot = ProcessSnapshot.take()
    problem = load_module_from_path(str(spec["path"]), MODULE_NAME)
    apply_size_overrides(problem, False, dict(spec.get("sizes") or {}))
    torch.manual_seed(int(spec["seed"]))
    model = problem.Model(*init_inputs).to(device).eval()
    if perturbed:
        tensors = dict(perturbable_tensors(model))
        missing = sorted(set(perturbed) - set(tensors))
        if missing:
            raise ValueError(f"Model here has no tensor {', '.join(missing[:3])} the judge perturbed")
        with torch.no_grad():
            for name, value in perturbed.items():
                tensors[name].copy_(value)
    return BesideReference(model, snapshot)
