"""Throughput benchmark: candidates per minute for kforge against a naive KernelBench-style harness.

Phases, in order (--phases picks some):
  naive      the naive harness (naive_harness.py) on every sample, one subprocess per candidate, one GPU;
  kforge     `kforge eval --suite ... --samples ... --no-store` on the same samples, one GPU;
  scaling    the same again across every GPU of --gpus (only when it names several);
  stability  the solutions of 3 problems evaluated --repeat times, each time by a fresh kforge process
             with --no-store, so the reference baseline and the candidate are re-measured every time;
             each candidate's speedup spread is (max - min) / median.
Writes OUT/throughput.json and OUT/throughput.md and prints the markdown.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, TextIO

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # run as a script: the sibling modules are imported by name

import make_candidates  # noqa: E402
import naive_harness  # noqa: E402

REPO = HERE.parent.parent
TARGET_RATIO = 5.0  # issue 4: kforge at least 5x the naive harness's candidates per minute
TARGET_SPREAD = 0.01  # issue 4: speedups of repeated evaluations within 1%
ALL_PHASES = ("naive", "kforge", "scaling", "stability")
KINDS = ("correct", "wrong", "crash")


def log(message: str) -> None:
    print(f"[{datetime.datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def default_python() -> str:
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else (shutil.which("python3") or sys.executable)


# ---------------------------------------------------------------------------------------------------
# kforge runs


def kforge_command(args: argparse.Namespace, samples: Path, results: Path, gpus: list[str]) -> list[str]:
    command = [
        str(args.kforge),
        "eval",
        "--suite",
        str(args.problems),
        "--samples",
        str(samples),
        "--results",
        str(results),
        "--no-store",  # neither read nor write the result store: every sample is really evaluated
        "--json",
        "--python",
        args.python,
        "--time-budget",
        str(args.time_budget),
    ]
    command += ["--device", "cpu"] if args.device == "cpu" else ["--gpus", ",".join(gpus)]
    if args.small:
        command.append("--small")
    if args.jobs is not None:
        command += ["-j", str(args.jobs)]
    return command


def run_kforge(args: argparse.Namespace, samples: Path, label: str, gpus: list[str]) -> dict[str, Any]:
    """One kforge batch; wall time from process start to exit (judge and worker start-up included)."""
    results = args.out / f"{label}_results.jsonl"
    log_path = args.out / f"{label}.log"
    command = kforge_command(args, samples, results, gpus)
    log(f"{label}: {' '.join(command)}")
    started = time.perf_counter()
    with log_path.open("w") as stderr:
        completed = subprocess.run(command, stdout=subprocess.PIPE, stderr=stderr, text=True, check=False)
    wall_s = time.perf_counter() - started
    metrics: dict[str, Any] | None
    try:
        metrics = json.loads(completed.stdout)
    except json.JSONDecodeError:
        metrics = None
    lines = (
        [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
        if results.exists()
        else []
    )
    if completed.returncode != 0 or metrics is None:
        tail = log_path.read_text()[-2000:]
        log(f"{label}: kforge exited {completed.returncode}; log tail:\n{tail}")
    log(f"{label}: {len(lines)} results in {wall_s:.1f} s")
    run = {"results": lines}
    return {
        "stage_seconds": where_time_went(run),
        "harness": "kforge",
        "label": label,
        "gpus": "cpu" if args.device == "cpu" else ",".join(gpus),
        "command": command,
        "returncode": completed.returncode,
        "samples": len(lines),
        "evaluated": len(lines),
        "complete": True,
        "wall_s": wall_s,
        "candidates_per_min": 60.0 * len(lines) / wall_s if wall_s > 0 else None,
        "metrics": metrics,
        "results_file": str(results),
        "results": lines,
    }


# ---------------------------------------------------------------------------------------------------
# verdicts against "expected"


def kforge_agrees(expected: str, line: dict[str, Any]) -> bool:
    """Correct must be accepted, wrong and crashing ones rejected; an evaluation error agrees with nothing."""
    outcome = line.get("outcome")
    return outcome == "accepted" if expected == "correct" else outcome == "rejected"


def naive_agrees(expected: str, line: dict[str, Any]) -> bool:
    return bool(line.get("correct")) == (expected == "correct")


def agreement(run: dict[str, Any]) -> dict[str, Any]:
    agrees = kforge_agrees if run["harness"] == "kforge" else naive_agrees
    by_kind: dict[str, list[int]] = {kind: [0, 0] for kind in KINDS}  # [agree, total]
    disagreements: list[dict[str, Any]] = []
    for line in run["results"]:
        expected = line.get("expected", "?")
        ok = agrees(expected, line)
        counts = by_kind.setdefault(expected, [0, 0])
        counts[0] += int(ok)
        counts[1] += 1
        if not ok:
            if run["harness"] == "kforge":
                got = line.get("outcome")
                detail = line.get("summary", "")
            else:
                got = "correct" if line.get("correct") else line.get("stage") or "incorrect"
                worst = line.get("worst") or {}
                detail = line.get("error") or (
                    f"passed torch.allclose; worst abs diff {worst.get('max_abs_diff', float('nan')):.3g}, "
                    f"worst rel diff {worst.get('max_rel_diff', float('nan')):.3g}"
                )
            accepted = got in ("accepted", "correct")
            disagreements.append(
                {
                    "id": line.get("id"),
                    "expected": expected,
                    "got": got,
                    # the dangerous direction: a wrong or crashing candidate accepted
                    "false_accept": accepted and expected != "correct",
                    "detail": str(detail)[:300],
                }
            )
    total = sum(counts[1] for counts in by_kind.values())
    agreed = sum(counts[0] for counts in by_kind.values())
    return {"agree": agreed, "total": total, "by_expected": by_kind, "disagreements": disagreements}


def failed_stages(run: dict[str, Any]) -> dict[str, dict[str, int]]:
    """How kforge rejected each kind of candidate: expected -> failed_stage -> count."""
    table: dict[str, dict[str, int]] = {}
    for line in run["results"]:
        stage = line.get("failed_stage") or line.get("outcome") or "?"
        row = table.setdefault(line.get("expected", "?"), {})
        row[stage] = row.get(stage, 0) + 1
    return table


# ---------------------------------------------------------------------------------------------------
# stability


def run_stability(args: argparse.Namespace, samples: list[dict[str, Any]], gpu: list[str]) -> dict[str, Any]:
    problems = list(dict.fromkeys(sample["problem"] for sample in samples))[: args.stability_candidates]
    chosen = [s for s in samples if s["variant"] == "solution" and s["problem"] in problems]
    path = args.out / "stability_samples.jsonl"
    make_candidates.write_samples(chosen, path)
    speedups: dict[str, list[float | None]] = {sample["id"]: [] for sample in chosen}
    converged: dict[str, list[bool | None]] = {sample["id"]: [] for sample in chosen}
    walls = []
    for repeat in range(args.repeat):
        run = run_kforge(args, path, f"stability_{repeat + 1}", gpu)
        walls.append(run["wall_s"])
        by_id = {line.get("id"): line for line in run["results"]}
        for sample_id in speedups:
            line = by_id.get(sample_id, {})
            speedup = line.get("speedup")
            speedups[sample_id].append(float(speedup) if isinstance(speedup, (int, float)) else None)
            performance = next(
                (s for s in line.get("verdict", {}).get("stages", []) if s.get("name") == "performance"), {}
            )
            converged[sample_id].append(performance.get("details", {}).get("converged"))
    rows = []
    for sample_id, values in speedups.items():
        measured = [v for v in values if v is not None]
        spread = None
        median = None
        if len(measured) == len(values) and len(measured) >= 2:
            median = statistics.median(measured)
            spread = (max(measured) - min(measured)) / median
        rows.append(
            {
                "id": sample_id,
                "speedups": values,
                "converged": converged[sample_id],
                "median": median,
                "spread": spread,
            }
        )
    spreads = [row["spread"] for row in rows if row["spread"] is not None]
    return {
        "repeat": args.repeat,
        "gpus": "cpu" if args.device == "cpu" else ",".join(gpu),
        "candidates": rows,
        "max_spread": max(spreads) if spreads and len(spreads) == len(rows) else None,
        "target": TARGET_SPREAD,
        "meets_target": (max(spreads) <= TARGET_SPREAD) if spreads and len(spreads) == len(rows) else None,
        "wall_s": walls,
    }


# ---------------------------------------------------------------------------------------------------
# report


def fmt(value: float | None, pattern: str = "{:.1f}", missing: str = "n/a") -> str:
    return missing if value is None else pattern.format(value)


def device_name(args: argparse.Namespace, runs: list[dict[str, Any]]) -> str:
    for run in runs:
        if run["harness"] == "kforge":
            for line in run["results"]:
                name = line.get("verdict", {}).get("device", {}).get("name")
                if name:
                    return str(name)
    if args.device == "cpu":
        return "CPU"
    try:  # no kforge run in this invocation (--phases naive): ask the driver
        query = ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", args.gpu_list[0]]
        return subprocess.run(query, capture_output=True, text=True, check=True).stdout.strip() or "GPU"
    except (OSError, subprocess.CalledProcessError):
        return "GPU (unknown)"


def render_markdown(report: dict[str, Any]) -> str:
    settings = report["settings"]
    counts = report["sample_counts"]
    out = ["# kforge throughput benchmark", ""]
    out.append(
        f"{report['date']} · {report['device_name']} · {counts['total']} samples "
        f"({counts['problems']} problems x {counts['per_problem']}: {counts['correct']} correct, "
        f"{counts['wrong']} wrong, {counts['crash']} crash) · "
        f"{'KFORGE_SMALL sizes' if settings['small'] else 'GPU sizes'}"
    )
    out.append("")
    out.append(
        f"kforge: `--no-store --time-budget {settings['time_budget_s']:g}`, noise target 1% (default), "
        f"5 trials (default), -j {settings['jobs'] if settings['jobs'] is not None else 'default'}. "
        f"naive: 5 trials, atol=rtol={settings['naive_tolerance']:g}, warm-up {settings['naive_warmup']}, "
        f"{settings['naive_runs']} timed runs per side, timeout {settings['naive_timeout_s']:g} s each."
    )
    out.append("")
    out.append(
        "| harness | GPUs | samples | wall s | candidates/min | agrees with expected "
        "| correct · wrong · crash | vs naive |"
    )
    out.append("|---|---|---|---|---|---|---|---|")
    naive_rate = report.get("naive_candidates_per_min")
    for run in report["runs"]:
        agree = run["agreement"]
        kinds = " · ".join(
            f"{agree['by_expected'].get(k, [0, 0])[0]}/{agree['by_expected'].get(k, [0, 0])[1]}"
            for k in KINDS
        )
        samples = str(run["evaluated"])
        if not run["complete"]:
            samples = f"{run['evaluated']} of {run['samples']} (budget)"
        ratio = (
            f"{run['candidates_per_min'] / naive_rate:.2f}x"
            if naive_rate and run["candidates_per_min"]
            else "n/a"
        )
        name = "naive (1 subprocess / candidate)" if run["harness"] == "naive" else "kforge eval (batch)"
        out.append(
            f"| {name} | {run['gpus']} | {samples} | {run['wall_s']:.1f} | "
            f"{fmt(run['candidates_per_min'])} | {agree['agree']}/{agree['total']} | {kinds} | {ratio} |"
        )
    ratio = report.get("kforge_over_naive")
    if ratio is not None or report.get("scaling") or report.get("naive_phase_medians"):
        out.append("")
    if ratio is not None:
        verdict = "met" if ratio >= TARGET_RATIO else "NOT met"
        out.append(f"- kforge (one device) / naive: **{ratio:.2f}x** (target ≥ {TARGET_RATIO:g}x: {verdict})")
    scaling = report.get("scaling")
    if scaling is not None:
        out.append(
            f"- scaling {scaling['gpus']} / 1 GPU: **{scaling['ratio']:.2f}x** "
            f"(ideal {scaling['ideal']:g}x, efficiency {100 * scaling['efficiency']:.0f}%)"
        )
    naive_phases = report.get("naive_phase_medians")
    if naive_phases:
        parts = ", ".join(f"{k.removesuffix('_s')} {v:.2f} s" for k, v in naive_phases.items())
        out.append(f"- naive, median per candidate: {parts}")
    stability = report.get("stability")
    if stability is not None:
        out += ["", f"## Repeated evaluations ({stability['repeat']} fresh kforge runs, --no-store)", ""]
        out.append("| candidate | speedups | median | spread (max-min)/median | timing converged |")
        out.append("|---|---|---|---|---|")
        for row in stability["candidates"]:
            values = ", ".join(fmt(v, "{:.3f}") for v in row["speedups"])
            flags = [flag for flag in row["converged"] if flag is not None]
            converged = f"{sum(flags)}/{len(row['converged'])}" if flags else "n/a"
            out.append(
                f"| {row['id']} | {values} | {fmt(row['median'], '{:.3f}')} | "
                f"{fmt(row['spread'], '{:.2%}', 'n/a (no timing on the CPU)')} | "
                f"{converged} |"
            )
        if stability["max_spread"] is not None:
            verdict = "met" if stability["meets_target"] else "NOT met"
            out.append("")
            out.append(f"- largest spread **{stability['max_spread']:.2%}** (target ≤ 1%: {verdict})")
    out += ["", "## Verdicts against `expected`", ""]
    for run in report["runs"]:
        disagreements = run["agreement"]["disagreements"]
        head = f"- {run['harness']} ({run['gpus']}): "
        if not disagreements:
            out.append(head + "every verdict as expected")
            continue
        false_accepts = sum(1 for d in disagreements if d["false_accept"])
        out.append(head + f"{len(disagreements)} disagreement(s), {false_accepts} wrong/crash accepted")
        for item in disagreements[:20]:
            out.append(
                f"  - `{item['id']}` expected {item['expected']}, got {item['got']}: {item['detail'][:160]}"
            )
        if len(disagreements) > 20:
            out.append(f"  - ... {len(disagreements) - 20} more in throughput.json")
    for run in report["runs"]:
        if run.get("stage_seconds"):
            out.append("")
            out.append(
                f"- kforge ({run['gpus']}) seconds summed over samples, per stage "
                "(wall / waiting for the GPU / GPU alone): "
                + "; ".join(
                    f"{name} {row['wall_s']:.0f} / {row['gpu_wait_s']:.0f} / {row['gpu_alone_s']:.0f}"
                    for name, row in run["stage_seconds"].items()
                )
            )
    stages = report.get("kforge_failed_stages")
    if stages:
        out.append("")
        out.append(
            "- kforge outcome by kind (failed stage or outcome): "
            + "; ".join(f"{kind}: {json.dumps(row, sort_keys=True)}" for kind, row in stages.items())
        )
    return "\n".join(out) + "\n"


def compact(run: dict[str, Any]) -> dict[str, Any]:
    """A run without its bulky per-sample lines (those stay in the results files)."""
    return {key: value for key, value in run.items() if key != "results"}


def where_time_went(run: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Seconds summed over a kforge run's samples, per stage: wall time, time its calls waited for the
    GPU gate (other evaluations' timing), and time it held the GPU alone (timing rounds)."""
    totals: dict[str, dict[str, float]] = {}
    for line in run["results"]:
        for stage in line.get("verdict", {}).get("stages", []):
            row = totals.setdefault(
                stage.get("name", "?"), {"wall_s": 0.0, "gpu_wait_s": 0.0, "gpu_alone_s": 0.0}
            )
            details = stage.get("details", {})
            row["wall_s"] += float(stage.get("duration_s") or 0.0)
            row["gpu_wait_s"] += float(details.get("gpu_wait_s") or 0.0)
            row["gpu_alone_s"] += float(details.get("gpu_exclusive_s") or 0.0)
    return {name: row for name, row in totals.items() if row["wall_s"] >= 0.5}


def per_sample_table(samples: list[dict[str, Any]], runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = {s["id"]: {"id": s["id"], "expected": s["expected"]} for s in samples}
    for run in runs:
        key = f"{run['harness']}_{run['gpus']}"
        for line in run["results"]:
            row = rows.get(line.get("id"))
            if row is None:
                continue
            if run["harness"] == "kforge":
                row[key] = {
                    "outcome": line.get("outcome"),
                    "failed_stage": line.get("failed_stage"),
                    "speedup": line.get("speedup"),
                    "seconds": line.get("seconds"),
                }
            else:
                row[key] = {
                    "correct": line.get("correct"),
                    "stage": line.get("stage"),
                    "speedup": line.get("speedup"),
                    "seconds": line.get("seconds"),
                }
    return list(rows.values())


# ---------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kforge", type=Path, default=REPO / "build" / "release" / "kforge")
    parser.add_argument("--python", default=default_python(), help="interpreter for both harnesses")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cuda")
    parser.add_argument("--gpus", default="0", help="GPU indices, e.g. 0 or 0,1 (cuda only)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/kforge-throughput"))
    parser.add_argument("--problems", type=Path, default=REPO / "problems" / "starter")
    parser.add_argument("--problems-subset", type=int, default=len(make_candidates.PROBLEMS))
    parser.add_argument("--candidates-per-problem", type=int, default=len(make_candidates.SLOTS))
    parser.add_argument("--small", action="store_true", help="KFORGE_SMALL sizes in both harnesses")
    parser.add_argument("--repeat", type=int, default=5, help="kforge runs of the stability candidates")
    parser.add_argument("--stability-candidates", type=int, default=3)
    parser.add_argument("--phases", default=",".join(ALL_PHASES), help=f"subset of {','.join(ALL_PHASES)}")
    parser.add_argument("--time-budget", type=float, default=2.0, help="kforge --time-budget (seconds)")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="kforge -j (cpu default: 1)")
    parser.add_argument("--naive-timeout", type=float, default=60.0, help="seconds per naive candidate")
    parser.add_argument("--naive-budget-s", type=float, default=0.0, help="0: evaluate every sample")
    parser.add_argument("--naive-tolerance", type=float, default=1e-2, help="naive atol = rtol")
    args = parser.parse_args(argv)
    args.phases = [phase.strip() for phase in args.phases.split(",") if phase.strip()]
    unknown = set(args.phases) - set(ALL_PHASES)
    if unknown:
        parser.error(f"unknown phase(s) {sorted(unknown)}")
    args.gpu_list = [gpu.strip() for gpu in args.gpus.split(",") if gpu.strip()]
    if args.device == "cpu":
        args.gpu_list = ["cpu"]
        if args.jobs is None:
            args.jobs = 1  # the CPU smoke runs one evaluation at a time
    # KernelBench's timing on the GPU: 3 warm-up calls, 100 timed ones; the interpreter is slow.
    args.naive_warmup, args.naive_runs = (3, 100) if args.device == "cuda" else (1, 3)
    # Absolute, without resolving links (a venv's python is a link): kforge runs workers elsewhere.
    args.python = (
        os.path.abspath(args.python) if os.sep in args.python else shutil.which(args.python) or args.python
    )
    args.kforge = args.kforge.resolve()
    args.problems = args.problems.resolve()
    return args


def main(argv: list[str] | None = None, stdout: TextIO = sys.stdout) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    args.out = args.out.resolve()
    problems = list(make_candidates.PROBLEMS[: args.problems_subset])
    samples = make_candidates.make_samples(args.problems, problems, args.candidates_per_problem)
    samples_path = args.out / "samples.jsonl"
    make_candidates.write_samples(samples, samples_path)
    log(f"{len(samples)} samples over {len(problems)} problems -> {samples_path}")
    first_gpu = args.gpu_list[:1]
    runs: list[dict[str, Any]] = []
    started = time.perf_counter()

    if "naive" in args.phases:
        device = "cpu" if args.device == "cpu" else f"cuda:{first_gpu[0]}"
        log(f"naive harness on {device}")
        with (args.out / "naive.log").open("w") as naive_log:
            naive = naive_harness.run_naive(
                samples,
                args.problems,
                args.out,
                args.python,
                device,
                timeout_s=args.naive_timeout,
                small=args.small,
                timing=(args.naive_warmup, args.naive_runs),
                tolerance=(args.naive_tolerance, args.naive_tolerance),
                budget_s=args.naive_budget_s,
                log=naive_log,
            )
        naive["gpus"] = "cpu" if args.device == "cpu" else first_gpu[0]
        log(f"naive: {naive['evaluated']} of {len(samples)} in {naive['wall_s']:.1f} s")
        runs.append(naive)
    if "kforge" in args.phases:
        runs.append(run_kforge(args, samples_path, "kforge_1gpu", first_gpu))
    if "scaling" in args.phases and args.device == "cuda" and len(args.gpu_list) > 1:
        runs.append(run_kforge(args, samples_path, f"kforge_{len(args.gpu_list)}gpu", args.gpu_list))
    for run in runs:
        run["agreement"] = agreement(run)
    stability = run_stability(args, samples, first_gpu) if "stability" in args.phases else None

    naive_run = next((run for run in runs if run["harness"] == "naive"), None)
    kforge_runs = [run for run in runs if run["harness"] == "kforge"]
    one_gpu = next((run for run in kforge_runs if run["label"] == "kforge_1gpu"), None)
    multi = next((run for run in kforge_runs if run["label"] != "kforge_1gpu"), None)
    naive_rate = naive_run["candidates_per_min"] if naive_run else None
    report: dict[str, Any] = {
        "schema": "kforge.bench.throughput/1",
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": platform.node(),
        "device_name": device_name(args, runs),
        "settings": {
            "device": args.device,
            "gpus": args.gpus if args.device == "cuda" else "cpu",
            "small": args.small,
            "time_budget_s": args.time_budget,
            "jobs": args.jobs,
            "repeat": args.repeat,
            "phases": args.phases,
            "naive_timeout_s": args.naive_timeout,
            "naive_budget_s": args.naive_budget_s,
            "naive_tolerance": args.naive_tolerance,
            "naive_warmup": args.naive_warmup,
            "naive_runs": args.naive_runs,
            "python": args.python,
            "kforge": str(args.kforge),
        },
        "sample_counts": {
            "total": len(samples),
            "problems": len(problems),
            "per_problem": args.candidates_per_problem,
            **{kind: sum(1 for s in samples if s["expected"] == kind) for kind in KINDS},
            "problem_names": problems,
        },
        "naive_candidates_per_min": naive_rate,
        "kforge_over_naive": (
            one_gpu["candidates_per_min"] / naive_rate
            if one_gpu and naive_rate and one_gpu["candidates_per_min"]
            else None
        ),
        "target_ratio": TARGET_RATIO,
        "scaling": (
            {
                "gpus": multi["gpus"],
                "ratio": multi["candidates_per_min"] / one_gpu["candidates_per_min"],
                "ideal": float(len(args.gpu_list)),
                "efficiency": multi["candidates_per_min"]
                / one_gpu["candidates_per_min"]
                / len(args.gpu_list),
            }
            if multi and one_gpu and one_gpu["candidates_per_min"]
            else None
        ),
        "stability": stability,
        "runs": [compact(run) for run in runs],
        "kforge_failed_stages": failed_stages(one_gpu) if one_gpu else None,
        "per_sample": per_sample_table(samples, runs),
        "total_wall_s": time.perf_counter() - started,
    }
    if naive_run and naive_run["results"]:
        phase_names = ("import_s", "load_s", "correctness_s", "timing_s")
        report["naive_phase_medians"] = {
            name: statistics.median(
                r["phases"][name] for r in naive_run["results"] if name in r.get("phases", {})
            )
            for name in phase_names
            if any(name in r.get("phases", {}) for r in naive_run["results"])
        } | {"total_s": statistics.median(r["seconds"] for r in naive_run["results"])}
    markdown = render_markdown(report)
    (args.out / "throughput.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "throughput.md").write_text(markdown)
    stdout.write(markdown)
    log(f"wrote {args.out / 'throughput.json'} and {args.out / 'throughput.md'}")
    false_accepts = [d for run in kforge_runs for d in run["agreement"]["disagreements"] if d["false_accept"]]
    return 1 if false_accepts else 0  # a wrong or crashing candidate accepted by kforge fails the run


if __name__ == "__main__":
    sys.exit(main())
