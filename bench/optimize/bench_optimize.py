"""bench/optimize: `kforge optimize --proposers tune` over a suite of untuned kernels, on a GPU.

For each <name>/problem.py + solution.py of the suite it runs `kforge optimize` from the solution (the
baseline kernel), then times every best kernel in one `kforge bench` batch against eager PyTorch and in
another against torch.compile, and writes results.json: per kernel the speedup over its baseline
kernel, over eager and over torch.compile, the roofline position before and after (kforge profile,
ncu) and the DRAM fraction of the main kernel. A kernel-mode suite (problems/kernels: NAME.py files,
each its own reference, with NAME.inputs.json; docs/kernel-mode.md) is optimized from each file; its
speedup is over the original kernel (there is no PyTorch reference to time). `table` merges the
results of several runs (the device allows 10 minutes per call) into the markdown table of
docs/benchmarks.md with the issue's targets.

  python3 bench/optimize/bench_optimize.py run --kforge build/device/kforge --suite problems/baseline \\
      --only 01_gelu_erf,04_softmax --budget 24 --out $OUT/optimize
  python3 bench/optimize/bench_optimize.py run --kforge build/device/kforge --suite problems/kernels \\
      --budget 16 --out $OUT/kernels
  python3 bench/optimize/bench_optimize.py table RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

MEMORY_BOUND_DRAM_TARGET = 0.80
GEOMEAN_TARGET = 1.76


def log(message: str) -> None:
    print(message, flush=True)


def kernel_mode_arguments(kernel: Path) -> list[str]:
    """`kforge optimize` arguments for a kernel-mode file (docs/kernel-mode.md): the entry is the file's
    stem unless a `# kforge-entry: NAME` line says otherwise; `# kforge-writes: I,J` names in-place
    outputs; NAME.inputs.json next to the file is its inputs spec."""
    text = kernel.read_text()
    entry = re.search(r"^# kforge-entry: (\w+)", text, re.MULTILINE)
    writes = re.search(r"^# kforge-writes: ([0-9,]+)", text, re.MULTILINE)
    arguments = ["--kernel", str(kernel), "--entry", entry.group(1) if entry else kernel.stem]
    spec = kernel.with_suffix(".inputs.json")
    if spec.exists():
        arguments += ["--inputs", str(spec)]
    if writes:
        arguments += ["--writes", writes.group(1)]
    return arguments


def suite_items(suite: Path) -> dict[str, list[str]]:
    """Each item's name and what `kforge optimize` is given for it: <name>/problem.py + solution.py
    (start from the solution), or a kernel-mode file <name>.py (start from the file itself)."""
    items = {
        path.name: ["-p", str(path / "problem.py"), "--from", str(path / "solution.py")]
        for path in suite.iterdir()
        if (path / "solution.py").exists()
    }
    for kernel in suite.glob("*.py"):
        items[kernel.stem] = kernel_mode_arguments(kernel)
    return dict(sorted(items.items()))


def optimize(args: argparse.Namespace, name: str, start: list[str], out: Path) -> dict[str, Any]:
    command = [
        args.kforge, "optimize", *start,
        "--proposers", "tune", "--budget", str(args.budget), "--device", args.device,
        "--screen-time", str(args.screen_time), "--final-time", str(args.final_time),
        "--store", str(args.out / "store.sqlite"), "--out-dir", str(out),
    ]  # fmt: skip
    started = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    (out.parent / f"{out.name}.log").write_text(run.stdout + run.stderr)
    log(f"optimize {name}: exit {run.returncode} in {seconds:.0f} s")
    log(run.stdout + run.stderr[-2000:])
    report_file = out / "report.json"
    report: dict[str, Any] = json.loads(report_file.read_text()) if report_file.exists() else {}
    return {"exit": run.returncode, "seconds": round(seconds, 1), "report": report}


def bench_speedups(args: argparse.Namespace, suite: Path, baseline: str) -> dict[str, float | None]:
    """Each problem's speedup in one `kforge bench` batch of the suite's solutions."""
    results = args.out / f"bench-{suite.name}-{baseline}.jsonl"
    command = [
        args.kforge, "bench", str(suite), "--device", args.device, "--full-size", "--no-store",
        "--baseline", baseline, "--time-budget", str(args.bench_time), "--results", str(results),
    ]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    log(f"bench {suite.name} against {baseline}: exit {run.returncode}")
    log(run.stdout[-3000:] + run.stderr[-1500:])
    speedups: dict[str, float | None] = {}
    if results.exists():
        for line in results.read_text().splitlines():
            entry = json.loads(line)
            speedups[entry["problem"]] = entry.get("speedup")
    return speedups


def main_kernel(profile: Any) -> dict[str, Any]:
    """The kernel that takes most of the profiled time (the one the roofline fraction is mostly about)."""
    kernels = profile.get("kernels", []) if isinstance(profile, dict) else []
    return max(kernels, key=lambda kernel: kernel.get("total_seconds") or 0.0, default={})


def speedup_over_baseline(report: dict[str, Any]) -> float | None:
    """The report's speedup; 1.0 for a kernel not tuned because it already runs at its roofline (the
    best is the baseline itself), so the geometric mean counts it as what it is."""
    if report.get("speedup_over_start") is not None:
        return float(report["speedup_over_start"])
    return 1.0 if "of the roofline (tuning stops" in str(report.get("stop_reason", "")) else None


def row_of(
    name: str, optimized: dict[str, Any], eager: float | None, compiled: float | None
) -> dict[str, Any]:
    report = optimized["report"]
    before = main_kernel(report.get("profile_before"))
    after = main_kernel(report.get("profile_after"))
    roofline_after = after.get("roofline") or {}
    return {
        "problem": name,
        "bound": (before.get("roofline") or {}).get("bound"),
        "start_ms": report.get("start_ms"),
        "best_ms": report.get("best_ms"),
        "speedup_over_baseline": speedup_over_baseline(report),
        "speedup_over_eager": eager,
        "speedup_over_compile": compiled,
        "roofline_before": report.get("roofline_before"),
        "roofline_after": report.get("roofline_after"),
        "dram_fraction_after": roofline_after.get("dram_fraction"),
        "evaluations": report.get("evaluations"),
        "stop_reason": report.get("stop_reason"),
        "exit": optimized["exit"],
        "seconds": optimized["seconds"],
    }


def run(args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    items = suite_items(args.suite)
    if args.only:
        wanted = set(args.only.split(","))
        items = {name: start for name, start in items.items() if name in wanted}
    best_suite = args.out / "best-suite"
    optimized: dict[str, dict[str, Any]] = {}
    for name, start in items.items():
        if time.monotonic() - started > args.stop_after:
            log(f"skipped {name}: past --stop-after {args.stop_after} s")
            continue
        optimized[name] = optimize(args, name, start, args.out / name)
        write_results(args, optimized, {}, {})  # what is done survives a cut-off call
        best = args.out / name / "best.py"
        if best.exists() and start[0] == "-p":
            (best_suite / name).mkdir(parents=True, exist_ok=True)
            shutil.copy(args.suite / name / "problem.py", best_suite / name / "problem.py")
            shutil.copy(best, best_suite / name / "solution.py")
    # Kernel-mode items have no PyTorch reference: their speedup is over the original kernel only.
    timed = best_suite.exists() and any(best_suite.iterdir())
    eager = bench_speedups(args, best_suite, "eager") if timed else {}
    compiled = bench_speedups(args, best_suite, "compile") if timed else {}
    log(table([write_results(args, optimized, eager, compiled)]))
    return 0


def write_results(
    args: argparse.Namespace,
    optimized: dict[str, dict[str, Any]],
    eager: dict[str, float | None],
    compiled: dict[str, float | None],
) -> dict[str, Any]:
    rows = [row_of(name, result, eager.get(name), compiled.get(name)) for name, result in optimized.items()]
    document = {"suite": str(args.suite), "budget": args.budget, "device": args.device, "rows": rows}
    (args.out / "results.json").write_text(json.dumps(document, indent=2))
    return document


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def cell(value: Any, form: str) -> str:
    return form.format(value) if isinstance(value, (int, float)) else "-"


def table(documents: list[dict[str, Any]]) -> str:
    rows = [row for document in documents for row in document["rows"]]
    for row in rows:  # results written before a kernel at its roofline counted as 1.0
        row["speedup_over_baseline"] = speedup_over_baseline(
            {"speedup_over_start": row["speedup_over_baseline"], "stop_reason": row["stop_reason"]}
        )
    lines = [
        "| kernel | bound | baseline ms | best ms | x baseline | x eager | x torch.compile "
        "| roofline before → after | DRAM after | verdicts |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in sorted(rows, key=lambda row: row["problem"]):
        lines.append(
            f"| {row['problem']} | {row['bound'] or '-'} | {cell(row['start_ms'], '{:.4f}')} "
            f"| {cell(row['best_ms'], '{:.4f}')} | {cell(row['speedup_over_baseline'], '{:.2f}')} "
            f"| {cell(row['speedup_over_eager'], '{:.2f}')} | {cell(row['speedup_over_compile'], '{:.2f}')} "
            f"| {cell(row['roofline_before'], '{:.0%}')} → {cell(row['roofline_after'], '{:.0%}')} "
            f"| {cell(row['dram_fraction_after'], '{:.0%}')} | {row['evaluations']} |"
        )
    over_baseline = [row["speedup_over_baseline"] for row in rows if row["speedup_over_baseline"]]
    compiled = [row["speedup_over_compile"] for row in rows if row["speedup_over_compile"] is not None]
    memory_bound = [row for row in rows if row["bound"] == "memory-bound"]
    at_target = [row for row in memory_bound if (row["dram_fraction_after"] or 0) >= MEMORY_BOUND_DRAM_TARGET]
    mean = geomean(over_baseline)
    lines += [
        "",
        f"- geometric mean over the baseline kernels: {cell(mean, '{:.2f}')}x "
        f"(target {GEOMEAN_TARGET}x: {'met' if mean and mean >= GEOMEAN_TARGET else 'not met'}) over "
        f"{len(over_baseline)} kernels",
        f"- faster than torch.compile: {sum(1 for value in compiled if value > 1)} of {len(compiled)} "
        f"(target: at least half)",
        f"- memory-bound kernels at ≥ {MEMORY_BOUND_DRAM_TARGET:.0%} of DRAM bandwidth after tuning: "
        f"{len(at_target)} of {len(memory_bound)}",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    runner = commands.add_parser("run", help="optimize a suite's kernels and time the results")
    runner.add_argument("--kforge", default="build/release/kforge")
    runner.add_argument("--suite", type=Path, default=Path("problems/baseline"))
    runner.add_argument("--only", default="", help="comma-separated problem names")
    runner.add_argument("--budget", type=int, default=24, help="verdicts per kernel")
    runner.add_argument("--device", default="cuda:0")
    runner.add_argument("--screen-time", type=float, default=0.3)
    runner.add_argument("--final-time", type=float, default=1.0)
    runner.add_argument(
        "--bench-time", type=float, default=2.0, help="seconds of timing per kernel in the batches"
    )
    runner.add_argument(
        "--stop-after", type=float, default=1e9, help="start no new kernel after this many seconds"
    )
    runner.add_argument("--out", type=Path, required=True)
    merger = commands.add_parser("table", help="merge results.json files into one markdown table")
    merger.add_argument("runs", type=Path, nargs="+", help="run folders (or results.json files)")
    args = parser.parse_args()
    if args.command == "run":
        return run(args)
    documents = [
        json.loads((path / "results.json" if path.is_dir() else path).read_text()) for path in args.runs
    ]
    print(table(documents))
    return 0


if __name__ == "__main__":
    sys.exit(main())
