"""One evaluation the KernelBench way, in a fresh process: the child of naive_harness.py.

Imports torch, loads the problem and the candidate from their files, builds Model and ModelNew from the
same seed and init inputs, checks correctness on `--trials` sets of fresh random inputs with
torch.allclose, then times reference and candidate (CUDA events around each call, `--warmup` discarded
calls and `--runs` timed ones; on the CPU time.perf_counter), and prints one line
`NAIVE_RESULT {json}` on stdout. Nothing is sandboxed, cached or shared between candidates: every
candidate pays for the interpreter start, the torch import, CUDA initialisation and input generation.
"""

from __future__ import annotations

import time

START = time.perf_counter()  # before the torch import: its cost is part of what this harness pays

import argparse  # noqa: E402 - imported after the clock starts, on purpose
import importlib.util  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable  # noqa: E402
from types import ModuleType  # noqa: E402
from typing import Any  # noqa: E402

import torch  # noqa: E402

MARKER = "NAIVE_RESULT "
IMPORTED = time.perf_counter()


def load_module(path: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton.jit looks the kernel's module up by name
    spec.loader.exec_module(module)
    return module


def apply_small_sizes(problem: ModuleType) -> None:
    """The problem's KFORGE_SMALL sizes: module constants that get_inputs()/get_init_inputs() read."""
    for name, value in getattr(problem, "KFORGE_SMALL", {}).items():
        setattr(problem, name, type(getattr(problem, name))(value))


def to_device(values: list[Any], device: torch.device) -> list[Any]:
    return [value.to(device) if isinstance(value, torch.Tensor) else value for value in values]


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def short_error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300]


def time_calls(call: Callable[[], object], device: torch.device, warmup: int, runs: int) -> list[float]:
    """Milliseconds per call; on the GPU CUDA events around each call, synchronised after each."""
    for _ in range(warmup):
        call()
    synchronize(device)
    samples: list[float] = []
    for _ in range(runs):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            torch.cuda.synchronize(device)
            samples.append(start.elapsed_time(end))
        else:
            begin = time.perf_counter()
            call()
            samples.append(1000.0 * (time.perf_counter() - begin))
    return samples


def compare(out: Any, ref: torch.Tensor, atol: float, rtol: float, worst: dict[str, float]) -> str | None:
    """Why out does not match ref, or None; KernelBench's check: same shape, then torch.allclose.
    worst keeps the largest absolute and relative differences seen, also for passing trials."""
    if not isinstance(out, torch.Tensor):
        return f"output is {type(out).__name__}, expected a tensor"
    if out.shape != ref.shape:
        return f"output shape {list(out.shape)}, expected {list(ref.shape)}"
    if out.dtype != ref.dtype:
        return f"output dtype {out.dtype}, expected {ref.dtype}"
    diff = (out.double() - ref.double()).abs()
    if diff.numel():
        relative = diff / ref.double().abs().clamp_min(atol)  # near-zero references judged by atol
        worst["max_abs_diff"] = max(worst.get("max_abs_diff", 0.0), float(diff.max().item()))
        worst["max_rel_diff"] = max(worst.get("max_rel_diff", 0.0), float(relative.max().item()))
    if not torch.allclose(out, ref, atol=atol, rtol=rtol):
        return f"outputs differ: max abs diff {worst.get('max_abs_diff', float('nan')):.3g}"
    return None


def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"compiled": False, "correct": False, "error": None, "stage": None}
    phases: dict[str, float] = {"import_s": IMPORTED - START}
    result["phases"] = phases
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    clock = time.perf_counter()
    problem = load_module(args.problem, "naive_problem")
    if args.small:
        apply_small_sizes(problem)
    init_inputs = list(problem.get_init_inputs())
    torch.manual_seed(args.seed)
    model = problem.Model(*init_inputs).to(device).eval()
    try:
        candidate = load_module(args.candidate, "naive_candidate")
        torch.manual_seed(args.seed)  # same seed: identically built parameters are equal
        model_new = candidate.ModelNew(*init_inputs).to(device).eval()
        synchronize(device)
    except BaseException as exc:  # noqa: BLE001 - any failure to load or build is the candidate's
        result.update(stage="compile", error=short_error(exc))
        return result
    result["compiled"] = True
    phases["load_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    worst: dict[str, float] = {}
    result["worst"] = worst
    for trial in range(args.trials):
        torch.manual_seed(args.seed + 1 + trial)
        inputs = to_device(list(problem.get_inputs()), device)
        try:
            with torch.no_grad():
                ref = model(*inputs)
                out = model_new(*inputs)
            synchronize(device)
        except BaseException as exc:  # noqa: BLE001 - runtime errors fail the candidate
            result.update(stage="correctness", error=f"trial {trial}: {short_error(exc)}")
            phases["correctness_s"] = time.perf_counter() - clock
            return result
        mismatch = compare(out, ref, args.atol, args.rtol, worst)
        if mismatch is not None:
            result.update(stage="correctness", error=f"trial {trial}: {mismatch}")
            phases["correctness_s"] = time.perf_counter() - clock
            return result
    result["correct"] = True
    phases["correctness_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    torch.manual_seed(args.seed + 1000)  # one more input set for timing, as KernelBench draws one
    inputs = to_device(list(problem.get_inputs()), device)
    with torch.no_grad():
        ref_ms = time_calls(lambda: model(*inputs), device, args.warmup, args.runs)
        new_ms = time_calls(lambda: model_new(*inputs), device, args.warmup, args.runs)
    phases["timing_s"] = time.perf_counter() - clock
    result.update(
        ref_mean_ms=statistics.fmean(ref_ms),
        new_mean_ms=statistics.fmean(new_ms),
        ref_median_ms=statistics.median(ref_ms),
        new_median_ms=statistics.median(new_ms),
        new_std_ms=statistics.pstdev(new_ms),
        # KernelBench compares mean runtimes; the median ratio is kept beside it.
        speedup=statistics.fmean(ref_ms) / statistics.fmean(new_ms),
        speedup_median=statistics.median(ref_ms) / statistics.median(new_ms),
        timed_on=str(device),
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description="evaluate one candidate, KernelBench style")
    parser.add_argument("--problem", required=True)
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--atol", type=float, default=1e-2)
    parser.add_argument("--rtol", type=float, default=1e-2)
    parser.add_argument("--small", action="store_true", help="apply the problem's KFORGE_SMALL sizes")
    args = parser.parse_args()
    try:
        result = evaluate(args)
    except BaseException as exc:  # noqa: BLE001 - a broken problem still yields one result line
        result = {"compiled": False, "correct": False, "stage": "harness", "error": short_error(exc)}
        traceback.print_exc()
    result["total_s"] = time.perf_counter() - START
    print(MARKER + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
