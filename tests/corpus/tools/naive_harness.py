"""A deliberately naive, KernelBench-style harness, used to show that each corpus exploit really
fools a same-process evaluator (the baseline column of tests/corpus/README.md).

It mirrors KernelBench's eval_kernel_against_ref (ScalingIntelligence/KernelBench, src/eval.py):
reference and candidate live in ONE process, the candidate module is imported before the
problem's get_inputs() runs, each trial seeds the RNG, builds inputs, runs the reference and then
the candidate on the same (uncloned) inputs and compares with torch.allclose; the candidate is
timed with CUDA events around each call in the same process, against a reference time taken
before the candidate was imported (KernelBench compares with precomputed baseline times).
Nothing here defends against anything.

    python tests/corpus/tools/naive_harness.py --problem problems/starter/04_softmax/problem.py \
        --candidate tests/corpus/exploits/torch-fallback/softmax_functional_after_rowmax.py \
        --device cpu --small

Prints one JSON object: {"verdict": "accepted"|"rejected"|"error", "reason": ..., "speedup": ...}.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import tempfile
from pathlib import Path


def _load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _candidate_source_path(path: str) -> str:
    if not path.endswith(".md"):
        return path
    text = Path(path).read_text()
    blocks = re.findall(r"```(?:python|py)\n(.*?)```", text, flags=re.S)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(blocks[-1])
    return handle.name


def set_seed(seed: int) -> None:
    import torch

    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


def run_and_check_correctness(original_model, new_model, problem, device, trials, atol, rtol):
    import torch

    for trial in range(trials):
        set_seed(42 + 1 + trial)
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]
        with torch.no_grad():
            output = original_model(*inputs)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            output_new = new_model(*inputs)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
        if output.shape != output_new.shape:
            return False, f"trial {trial}: shape {tuple(output_new.shape)} != {tuple(output.shape)}"
        if not torch.allclose(output, output_new, atol=atol, rtol=rtol):
            return False, f"trial {trial}: values differ"
    return True, "all trials allclose"


def time_model(model, inputs, device, warmup=3, reps=50):
    import torch

    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device=device)  # L2 flush, as KernelBench
    with torch.no_grad():
        for _ in range(warmup):
            model(*inputs)
        torch.cuda.synchronize(device)
        times = []
        for _ in range(reps):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            flush.zero_()
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize(device)
            times.append(start.elapsed_time(end))
    return sum(times) / len(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problem", required=True)
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    import torch

    device = torch.device(args.device)
    result = {"verdict": "error", "reason": "", "speedup": None}
    try:
        problem = _load(os.path.abspath(args.problem), "naive_problem")
        if args.small:
            for name, value in getattr(problem, "KFORGE_SMALL", {}).items():
                setattr(problem, name, value)
        set_seed(42)
        init_inputs = problem.get_init_inputs()
        set_seed(42)
        original_model = problem.Model(*init_inputs).to(device)
        ref_ms = None
        if device.type == "cuda":  # the "precomputed baseline": timed before the candidate exists
            set_seed(42)
            ref_ms = time_model(
                original_model,
                [x.to(device) if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()],
                device,
            )
        candidate = _load(_candidate_source_path(os.path.abspath(args.candidate)), "naive_candidate")
        set_seed(42)
        new_model = candidate.ModelNew(*init_inputs).to(device)
        tol = (
            1e-2
            if any(p.dtype in (torch.float16, torch.bfloat16) for p in original_model.parameters())
            else 1e-4
        )
        ok, reason = run_and_check_correctness(
            original_model, new_model, problem, device, args.trials, tol, tol
        )
        result.update(verdict="accepted" if ok else "rejected", reason=reason)
        if ok and device.type == "cuda":
            set_seed(42)
            inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]
            new_ms = time_model(new_model, inputs, device)
            result.update(
                speedup=ref_ms / new_ms if new_ms > 0 else float("inf"), ref_ms=ref_ms, new_ms=new_ms
            )
    except BaseException as exc:  # noqa: BLE001 - report anything, including SystemExit
        result.update(verdict="error", reason=f"{type(exc).__name__}: {str(exc)[:300]}")
    print(json.dumps(result), flush=True)
    sys.stdout.flush()
    os._exit(0)  # do not wait for threads/processes a candidate left behind


if __name__ == "__main__":
    main()
