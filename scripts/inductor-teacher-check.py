#!/usr/bin/env python3
"""The inductor teacher over whole suites on a GPU: capture, rewrite, verify, summarize.

For every problem of each suite it runs `python -m kforge.worker.inductor_teacher` (several at once),
keeps the capture and the standalone candidate, then verifies all candidates of a suite in one
`kforge eval` batch (strict profile, GPU timing) and prints per problem the verdict and speedup.
`--small-fixtures NAME,...` also captures those problems at their KFORGE_SMALL sizes (the captures
the CPU tests rewrite). Everything goes under --out.

  python3 scripts/inductor-teacher-check.py --kforge build/device/kforge --out $OUT/inductor \\
      --suite problems/starter --suite problems/baseline
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_teacher(problem: Path, out: Path, small: bool, timeout_s: float) -> dict:
    suffix = ".small" if small else ""
    result_path = out / f"{problem.name}{suffix}.result.json"
    command = [
        sys.executable,
        "-m",
        "kforge.worker.inductor_teacher",
        "--problem",
        str(problem / "problem.py"),
        "--out",
        str(result_path),
        "--capture-out",
        str(out / f"{problem.name}{suffix}.capture.json"),
    ]
    if small:
        command.append("--small")
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    started = time.monotonic()
    try:
        completed = subprocess.run(
            command, env=environment, capture_output=True, text=True, timeout=timeout_s
        )
        log = completed.stdout + completed.stderr
    except subprocess.TimeoutExpired:
        return {"problem": problem.name, "error": f"timed out after {timeout_s} s", "stage": "timeout"}
    (out / f"{problem.name}{suffix}.log").write_text(log)
    try:
        result = json.loads(result_path.read_text())
    except (OSError, ValueError):
        result = {"error": f"no result; log tail: {log[-600:]}", "stage": "crash"}
    result["problem"] = problem.name
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--suite", action="append", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--parallel", type=int, default=6)
    parser.add_argument("--timeout", type=float, default=400)
    parser.add_argument("--small-fixtures", default="")
    parser.add_argument("--baseline", default="eager")
    parser.add_argument("--archive", help="also pack everything under --out into this .tar.gz")
    arguments = parser.parse_args()
    out_root = Path(arguments.out)
    fixtures = {name for name in arguments.small_fixtures.split(",") if name}
    summary = {}
    for suite_text in arguments.suite:
        suite = Path(suite_text)
        out = out_root / suite.name
        out.mkdir(parents=True, exist_ok=True)
        problems = sorted(path for path in suite.iterdir() if (path / "problem.py").is_file())
        jobs = [(problem, False) for problem in problems] + [
            (p, True) for p in problems if p.name in fixtures
        ]
        started = time.monotonic()
        with ThreadPoolExecutor(arguments.parallel) as pool:
            futures = [
                pool.submit(run_teacher, problem, out, small, arguments.timeout) for problem, small in jobs
            ]
            results = [future.result() for future in futures]
        capture_s = time.monotonic() - started
        full = [result for result, job in zip(results, jobs, strict=True) if not job[1]]
        samples = out / "samples.jsonl"
        with samples.open("w") as handle:
            for result in full:
                if "candidate" in result:
                    handle.write(
                        json.dumps({"problem": result["problem"], "code": result["candidate"]}) + "\n"
                    )
        verdicts = out / "results.jsonl"
        command = [
            arguments.kforge,
            "eval",
            "--problems",
            str(suite),
            "--samples",
            str(samples),
            "--results",
            str(verdicts),
            "--no-store",
            "--baseline",
            arguments.baseline,
        ]
        started = time.monotonic()
        completed = subprocess.run(command, capture_output=True, text=True)
        eval_s = time.monotonic() - started
        (out / "eval.log").write_text(completed.stdout + completed.stderr)
        by_problem = {}
        if verdicts.exists():
            for line in verdicts.read_text().splitlines():
                row = json.loads(line)
                by_problem[row.get("problem")] = row
        speedups = []
        print(
            f"== {suite} (capture {capture_s:.0f} s, eval {eval_s:.0f} s, eval exit {completed.returncode})"
        )
        for result in full:
            name = result["problem"]
            if "candidate" not in result:
                print(f"  {name:32s} teacher {result.get('stage')}: {result.get('error', '')[:300]}")
                continue
            row = by_problem.get(name, {})
            speedup = row.get("speedup")
            if row.get("outcome") == "accepted" and speedup:
                speedups.append(float(speedup))
            reason = row.get("summary") or ""
            print(
                f"  {name:32s} {row.get('outcome', '?'):9s} speedup {speedup} "
                f"kernels {result.get('kernels')} "
                f"{str(reason)[:240]}"
            )
        geomean = math.exp(sum(math.log(s) for s in speedups) / len(speedups)) if speedups else None
        summary[suite.name] = {
            "problems": len(full),
            "accepted": len(speedups),
            "geomean_speedup": geomean,
            "capture_s": round(capture_s),
            "eval_s": round(eval_s),
        }
        print(f"  accepted {len(speedups)}/{len(full)}, geomean speedup {geomean}")
    (out_root / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    if arguments.archive:
        subprocess.run(["tar", "czf", arguments.archive, "-C", str(out_root), "."], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
