"""The baseline: a plain one-subprocess-per-candidate harness, written the KernelBench way.

For each sample, in order, one fresh `subprocess.run([python, naive_eval_one.py, ...], timeout=...)`:
the child pays for its own interpreter start, torch import, CUDA context, Triton compilation (a fresh
Triton cache per child, as kforge gives each evaluation a private one) and input generation, and
prints one JSON line. The parent collects the lines, counts compiled/correct, and records the wall
time. Samples run one after another on one device; nothing is reused between candidates.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CHILD = HERE / "naive_eval_one.py"
MARKER = "NAIVE_RESULT "


def child_environment(device: str, triton_cache: str) -> dict[str, str]:
    env = dict(os.environ)
    env["TRITON_CACHE_DIR"] = triton_cache
    env["PYTHONUNBUFFERED"] = "1"
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"  # Triton's interpreter, as kforge runs candidates on the CPU
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def parse_child(stdout: str) -> dict[str, Any] | None:
    """The last marker line; a candidate may print anything before it."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                parsed = json.loads(line[len(MARKER) :])
            except json.JSONDecodeError:
                return None
            return parsed if isinstance(parsed, dict) else None
    return None


def evaluate_one(
    python: str,
    problem_path: Path,
    candidate_path: Path,
    device: str,
    timeout_s: float,
    small: bool,
    timing: tuple[int, int],
    trials: int,
    tolerance: tuple[float, float],
) -> dict[str, Any]:
    warmup, runs = timing
    command = [
        python,
        str(CHILD),
        "--problem",
        str(problem_path),
        "--candidate",
        str(candidate_path),
        "--device",
        device,
        "--trials",
        str(trials),
        "--warmup",
        str(warmup),
        "--runs",
        str(runs),
        "--atol",
        str(tolerance[0]),
        "--rtol",
        str(tolerance[1]),
    ]
    if small:
        command.append("--small")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="naive-triton-cache-") as cache:
        try:
            completed = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                env=child_environment(device, cache),
                check=False,
            )
        except subprocess.TimeoutExpired:
            return {
                "compiled": False,
                "correct": False,
                "stage": "timeout",
                "error": f"no result within {timeout_s:g} s",
                "seconds": time.perf_counter() - started,
            }
    result = parse_child(completed.stdout)
    if result is None:
        tail = (completed.stderr or completed.stdout)[-400:]
        result = {
            "compiled": False,
            "correct": False,
            "stage": "died",
            "error": f"exit status {completed.returncode}, no result line: {tail}",
        }
    result["returncode"] = completed.returncode
    result["seconds"] = time.perf_counter() - started
    return result


def run_naive(
    samples: list[dict[str, Any]],
    problems_dir: Path,
    work_dir: Path,
    python: str,
    device: str,
    *,
    timeout_s: float = 60.0,
    small: bool = False,
    timing: tuple[int, int] = (3, 100),
    trials: int = 5,
    tolerance: tuple[float, float] = (1e-2, 1e-2),
    budget_s: float = 0.0,
    log: Any = None,
) -> dict[str, Any]:
    """Evaluate samples in order; with budget_s > 0, start no new one once that much wall time passed.

    Returns the summary and writes work_dir/naive_results.jsonl (one line per evaluated sample).
    """
    candidates = work_dir / "naive_candidates"
    candidates.mkdir(parents=True, exist_ok=True)
    results_path = work_dir / "naive_results.jsonl"
    results: list[dict[str, Any]] = []
    started = time.perf_counter()
    with results_path.open("w") as stream:
        for index, sample in enumerate(samples):
            if budget_s > 0 and time.perf_counter() - started >= budget_s:
                break
            # KernelBench writes each generation to a file and imports it from there.
            candidate_path = candidates / f"{index:04d}.py"
            candidate_path.write_text(sample["code"])
            result = evaluate_one(
                python,
                problems_dir / sample["problem"] / "problem.py",
                candidate_path,
                device,
                timeout_s,
                small,
                timing,
                trials,
                tolerance,
            )
            line = {k: v for k, v in sample.items() if k != "code"} | {"index": index} | result
            stream.write(json.dumps(line) + "\n")
            stream.flush()
            results.append(line)
            if log is not None:
                verdict = "correct" if result.get("correct") else result.get("stage") or "incorrect"
                print(
                    f"naive {index + 1}/{len(samples)} {sample.get('id', sample['problem'])}: {verdict} "
                    f"({result['seconds']:.1f} s)",
                    file=log,
                    flush=True,
                )
    wall_s = time.perf_counter() - started
    evaluated = len(results)
    return {
        "harness": "naive",
        "device": device,
        "samples": len(samples),
        "evaluated": evaluated,
        "complete": evaluated == len(samples),
        "wall_s": wall_s,
        "candidates_per_min": 60.0 * evaluated / wall_s if wall_s > 0 else None,
        "compiled": sum(1 for r in results if r.get("compiled")),
        "correct": sum(1 for r in results if r.get("correct")),
        "timeouts": sum(1 for r in results if r.get("stage") == "timeout"),
        "results_file": str(results_path),
        "results": results,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, required=True, help="samples.jsonl from make_candidates.py")
    parser.add_argument("--problems", type=Path, default=Path("problems/starter"))
    parser.add_argument("--out", type=Path, required=True, help="folder for candidates and results")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--device", default="cuda:0", help="cuda:N or cpu")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per candidate")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--budget-s", type=float, default=0.0, help="stop starting candidates after this")
    args = parser.parse_args()
    samples = [json.loads(line) for line in args.samples.read_text().splitlines() if line.strip()]
    timing = (3, 100) if args.device.startswith("cuda") else (1, 3)
    summary = run_naive(
        samples,
        args.problems,
        args.out,
        args.python,
        args.device,
        timeout_s=args.timeout,
        small=args.small,
        timing=timing,
        budget_s=args.budget_s,
        log=sys.stderr,
    )
    summary.pop("results")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
