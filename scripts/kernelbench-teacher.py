#!/usr/bin/env python3
"""KernelBench levels with the Inductor teacher's candidates, judged and timed on a GPU, next to an
independent do_bench timing of the same pairs (issue 35 item 6; docs/benchmarks.md).

    scripts/kernelbench-teacher.py --captures CAPTURES --kernelbench ROOT --levels 1,2 --device cuda:0 \
        [--jobs 4] [--time-budget 2] [--deadline 480] [--out DIR] [--work DIR] [--previous DIR]

CAPTURES holds level<N>/<problem>.capture.json (and .result.json) written on a GPU by
`python -m kforge.worker.inductor_teacher --problem P --capture-out F --out R`; ROOT holds
KernelBench/level<N>/<problem>.py (the public checkout, or a view of it). Per level:
0. with --steps capture: the teacher compiles each problem without a result in CAPTURES yet
   (--capture-jobs at once, --capture-timeout each, none started after --capture-deadline; a compile
   stopped by the timeout is recorded as such and compiled again only under a longer one);
1. every capture is rewritten into a candidate file (no GPU needed; as scripts/false-positive-check.py);
2. `kforge eval --kernelbench ROOT --level N --samples ... --results ...` judges and times them all
   (no generalisation trial: Inductor's code is specialised to the captured sizes by construction);
3. bench/kernelbench_teacher/do_bench_pairs.py times each accepted pair alone with do_bench;
4. a table: problems, captures, candidates, accepted, why the rest were not, kforge's speedup over
   eager beside do_bench's, and their ratio.
Output: DIR/teacher.json and DIR/teacher.md. A level too long for one run goes on in the next with
--previous (the earlier --out): its results and do_bench rows are kept and those samples not run again
(its errors, out of GPU memory or a lost judge, are judged again).
Standard library only; KFORGE_BIN and KFORGE_PYTHON as in
scripts/false-positive-check.py.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def false_positive_check() -> Any:
    """The rewrite and the verdict classes are shared with the false-positive measurement."""
    spec = importlib.util.spec_from_file_location(
        "false_positive_check", REPO / "scripts" / "false-positive-check.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FPC = false_positive_check()


def settled(result: Path, capture_timeout: float, capture_jobs: int) -> bool:
    """Whether the teacher's answer for a problem stands: not one the machine caused (no GPU, out of
    memory beside other compiles), nor a compile stopped sooner, or beside more compiles, than this run
    would stop or crowd it, which a later run tries again (on an H100's 16 cores, ten compiles at once
    ran every level-3 problem, 1_MLP included, past 240 s)."""
    try:
        answer = json.loads(result.read_text())
    except (OSError, json.JSONDecodeError):
        return False
    if answer.get("stage") == "timeout":
        crowded = int(answer.get("capture_jobs", capture_jobs)) > capture_jobs
        return float(answer.get("timeout_s", 0)) >= capture_timeout and not crowded
    return (
        answer.get("stage") != "environment" and "out of memory" not in str(answer.get("error", "")).lower()
    )


def capture_level(level: str, arguments: argparse.Namespace, captures: Path, root: Path) -> None:
    """The teacher compiles every problem of the level that has no result yet (a GPU step): a capture
    and its candidate, or why there is none, in CAPTURES/<level>/. Problems with multi-GiB tensors need
    the GPU to themselves or two at a time (--capture-jobs)."""
    folder = captures / level
    folder.mkdir(parents=True, exist_ok=True)
    # The shortest files first: in level 3 they are the MLPs, recurrent cells and attention blocks, which
    # compile in seconds, and the long ones the networks that take minutes (a call's time then answers
    # the most problems); --order name keeps KernelBench's numbering order.
    order = (lambda path: (path.stat().st_size, path.name)) if arguments.order == "size" else None
    problems = [
        problem
        for problem in sorted((root / "KernelBench" / level).glob("*.py"), key=order)
        if not settled(
            folder / f"{problem.stem}.result.json", arguments.capture_timeout, arguments.capture_jobs
        )
        and (not arguments.only or problem.stem in arguments.only)
    ]
    environment = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    stop_at = time.monotonic() + arguments.capture_deadline

    def compile_one(problem: Path) -> None:
        if time.monotonic() > stop_at:  # left without a result: a later run (--captures) compiles it
            return
        command = [FPC.PYTHON, "-m", "kforge.worker.inductor_teacher", "--problem", str(problem)]
        command += ["--out", str(folder / f"{problem.stem}.result.json"), "--device", arguments.device]
        command += ["--capture-out", str(folder / f"{problem.stem}.capture.json")]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, env=environment, timeout=arguments.capture_timeout
            )
            (folder / f"{problem.stem}.log").write_text(done.stdout[-20000:] + done.stderr[-20000:])
        except subprocess.TimeoutExpired:  # an answer, so later runs with the same limit skip it
            why = f"the compile took over {arguments.capture_timeout:.0f} s"
            (folder / f"{problem.stem}.log").write_text(why)
            timeout = {
                "error": why,
                "stage": "timeout",
                "timeout_s": arguments.capture_timeout,
                "capture_jobs": arguments.capture_jobs,
            }
            (folder / f"{problem.stem}.result.json").write_text(json.dumps(timeout) + "\n")

    with ThreadPoolExecutor(max_workers=arguments.capture_jobs) as pool:
        list(pool.map(compile_one, problems))


def capture_refusals(captures: Path, level: str) -> dict[str, str]:
    """problem name -> why the teacher made no capture or no candidate (from its result files)."""
    refused = {}
    for result in sorted((captures / level).glob("*.result.json")):
        name = result.name.removesuffix(".result.json")
        try:
            answer = json.loads(result.read_text())
        except (OSError, json.JSONDecodeError) as failure:
            refused[name] = f"unreadable result: {failure}"
            continue
        if "candidate" not in answer:
            refused[name] = f"{answer.get('stage')}: {str(answer.get('error')).splitlines()[0][:160]}"
    return refused


def previous_rows(arguments: argparse.Namespace, name: str, key: str) -> dict[str, dict[str, Any]]:
    """Rows of an earlier run's file (--previous), by sample: a level too long for one GPU call goes on."""
    if not arguments.previous:
        return {}
    path = Path(arguments.previous) / name
    if not path.exists():
        return {}
    return {row[key]: row for row in map(json.loads, path.read_text().splitlines()) if row.get(key)}


def merged(path: Path, earlier: dict[str, dict[str, Any]]) -> None:
    """The earlier run's rows first, then this run's, in one file."""
    fresh = path.read_text() if path.exists() else ""
    path.write_text("".join(json.dumps(row) + "\n" for row in earlier.values()) + fresh)


def judge(level: str, entries: list[dict[str, Any]], arguments: argparse.Namespace, out: Path) -> None:
    samples, results = out / f"{level}.samples.jsonl", out / f"{level}.results.jsonl"
    earlier = previous_rows(arguments, results.name, "sample_id")
    # An earlier error (out of GPU memory, a lost judge) is the machine's or kforge's: judged again.
    earlier = {key: row for key, row in earlier.items() if row.get("outcome") != "error"}
    members = [entry for entry in entries if entry.get("candidate") and entry["name"] not in earlier]
    samples.write_text(
        "".join(
            json.dumps({"problem": m["problem"], "candidate": m["candidate"], "sample_id": m["name"]}) + "\n"
            for m in members
        )
    )
    args = ["eval", "--kernelbench", arguments.kernelbench, "--level", level.removeprefix("level")]
    args += ["--samples", str(samples), "--results", str(results), "--device", arguments.device]
    args += ["-j", str(arguments.jobs), "--no-generalisation", "--no-store", "--timeout", "120"]
    args += ["--time-budget", str(arguments.time_budget)]
    if members:
        done = FPC.kforge(args, timeout=arguments.deadline)
        (out / f"{level}.kforge.log").write_text(done.stderr[-20000:])
    merged(results, earlier)
    found = {}
    if results.exists():
        for line in results.read_text().splitlines():
            row = json.loads(line)
            found[row.get("sample_id")] = row
    for member in [entry for entry in entries if entry.get("candidate")]:
        row = found.get(member["name"])
        if row is None:
            member.update(kind="not run", summary="no result line before the deadline")
            continue
        verdict = row.get("verdict") or {}
        member.update(FPC.classify(verdict))
        member["speedup"] = row.get("speedup")


def do_bench(level: str, entries: list[dict[str, Any]], arguments: argparse.Namespace, out: Path) -> None:
    accepted = [entry for entry in entries if entry.get("kind") == "accepted"]
    pairs, times = out / f"{level}.pairs.jsonl", out / f"{level}.do_bench.jsonl"
    earlier = previous_rows(arguments, times.name, "name")
    wanted = [entry for entry in accepted if entry["name"] not in earlier]
    pairs.write_text(
        "".join(json.dumps({"name": e["name"], "candidate": e["candidate"]}) + "\n" for e in wanted)
    )
    command = [FPC.PYTHON, str(REPO / "bench" / "kernelbench_teacher" / "do_bench_pairs.py")]
    command += ["--pairs", str(pairs), "--out", str(times), "--device", arguments.device]
    if wanted:
        with contextlib.suppress(subprocess.TimeoutExpired):  # the lines written so far still count
            subprocess.run(
                command, capture_output=True, text=True, timeout=arguments.bench_deadline, check=False
            )
    merged(times, earlier)
    rows = {}
    if times.exists():
        rows = {row["name"]: row for row in map(json.loads, times.read_text().splitlines())}
    for entry in accepted:
        row = rows.get(entry["name"], {"error": "not timed before the deadline"})
        entry["do_bench"] = row
        if "speedup" in row and entry.get("speedup"):
            entry["kforge_over_do_bench"] = entry["speedup"] / row["speedup"]


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def summary(
    level: str, problems: int, entries: list[dict[str, Any]], refused: dict[str, str]
) -> dict[str, Any]:
    kinds: dict[str, int] = {}
    for entry in entries:
        kinds[entry.get("kind", "?")] = kinds.get(entry.get("kind", "?"), 0) + 1
    # The teacher's refusals (compiles over the limit, programs not all Triton; the caller leaves out the
    # problems among `entries`) count as well: every problem of the level is in one kind.
    if refused:
        kinds["no candidate"] = kinds.get("no candidate", 0) + len(refused)
    accepted = [e for e in entries if e.get("kind") == "accepted"]
    ratios = [e["kforge_over_do_bench"] for e in accepted if "kforge_over_do_bench" in e]
    return {
        "level": level,
        "problems": problems,
        "captured": len(entries),
        "candidates": sum(1 for e in entries if e.get("candidate")),
        "no_candidate": refused,
        "kinds": kinds,
        "accepted": len(accepted),
        "kforge_speedup_geomean": geomean([e.get("speedup") or 0 for e in accepted]),
        "do_bench_speedup_geomean": geomean([e.get("do_bench", {}).get("speedup", 0) for e in accepted]),
        "ratio_geomean": geomean(ratios),
        "ratios_within_5pct": sum(1 for r in ratios if abs(r - 1) <= 0.05),
        "ratios": len(ratios),
    }


def render(level_summary: dict[str, Any], entries: list[dict[str, Any]]) -> str:
    s = level_summary

    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    lines = [
        f"### {s['level']}: {s['problems']} problems, {s['candidates']} with a candidate, "
        f"{s['accepted']} accepted",
        "",
        f"kinds: {s['kinds']}; speedup over eager, geomean of the accepted: "
        f"kforge {fmt(s['kforge_speedup_geomean'])}, "
        f"do_bench {fmt(s['do_bench_speedup_geomean'])}; kforge/do_bench geomean {fmt(s['ratio_geomean'])}, "
        f"{s['ratios_within_5pct']} of {s['ratios']} within 5%",
        "",
        "| problem | result | stage / checks | kforge speedup | do_bench speedup | kforge/do_bench | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in sorted(entries, key=lambda e: (e.get("kind", ""), e["name"])):
        bench = entry.get("do_bench", {})
        checks = ",".join(entry.get("checks") or [])
        note = bench.get("error") or (
            "" if entry.get("kind") == "accepted" else entry.get("summary", entry.get("rewrite", ""))
        )
        lines.append(
            f"| {entry['name']} | {entry.get('kind', '?')} | {entry.get('stage') or '-'} {checks} | "
            f"{fmt(entry.get('speedup'))} | {fmt(bench.get('speedup'))} | "
            f"{fmt(entry.get('kforge_over_do_bench'))} | "
            f"{str(note)[:140].replace('|', '/')} |"
        )
    for name, why in sorted(s["no_candidate"].items()):
        lines.append(f"| {name} | no candidate | teacher | - | - | - | {why.replace('|', '/')} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--captures", required=True)
    parser.add_argument("--kernelbench", required=True)
    parser.add_argument("--levels", default="1,2,3")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--time-budget", type=float, default=2.0)
    parser.add_argument("--deadline", type=float, default=480.0, help="seconds for each level's kforge run")
    parser.add_argument(
        "--bench-deadline", type=float, default=120.0, help="seconds for each level's do_bench"
    )
    parser.add_argument("--steps", default="eval,do_bench", help="capture,eval,do_bench; rewrite always runs")
    parser.add_argument("--capture-jobs", type=int, default=2, help="problems compiled at once")
    parser.add_argument("--capture-timeout", type=float, default=300.0, help="seconds for one compile")
    parser.add_argument(
        "--order", choices=("size", "name"), default="size", help="compile order: smallest file first"
    )
    parser.add_argument(
        "--only",
        type=lambda text: set(filter(None, text.split(","))),
        default=set(),
        help="the capture step compiles only these problems (file names without .py, comma-separated)",
    )
    parser.add_argument(
        "--capture-deadline",
        type=float,
        default=math.inf,
        help="seconds after which a level's capture step starts no more compiles (the rest: a later run)",
    )
    parser.add_argument("--out", default=os.environ.get("OUT", "out") + "/kernelbench-teacher")
    parser.add_argument("--work", help="where the rewritten candidates go (default: OUT/work)")
    parser.add_argument("--previous", help="an earlier run's --out: its results are kept, not run again")
    arguments = parser.parse_args()
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    captures, root = Path(arguments.captures), Path(arguments.kernelbench)
    report: dict[str, Any] = {"device": arguments.device, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ")}
    texts = []
    # Absolute: the samples file names the candidates, and kforge reads it relative to its own folder.
    work = (Path(arguments.work) if arguments.work else out / "work").resolve()
    levels = [f"level{n}" for n in arguments.levels.split(",")]
    if "capture" in arguments.steps:
        for level in levels:
            capture_level(level, arguments, captures, root)
    rewritten = FPC.rewrite_captures(captures, root, work)
    for level in levels:
        start = time.monotonic()
        entries = [entry for entry in rewritten if entry["level"] == level]
        for entry in entries:
            if entry.get("rewrite") != "ok":
                entry.update(kind="no candidate", summary=entry.get("rewrite", ""))
        if "eval" in arguments.steps:
            judge(level, entries, arguments, out)
        if "do_bench" in arguments.steps:
            do_bench(level, entries, arguments, out)
        captured = {e["name"] for e in entries}
        refused = {k: v for k, v in capture_refusals(captures, level).items() if k not in captured}
        problems = len(list((root / "KernelBench" / level).glob("*.py")))
        level_summary = summary(level, problems, entries, refused)
        level_summary["seconds"] = round(time.monotonic() - start, 1)
        report[level] = {"summary": level_summary, "entries": entries}
        texts.append(render(level_summary, entries))
        (out / "teacher.json").write_text(json.dumps(report, indent=1) + "\n")
    text = "\n\n".join(texts)
    (out / "teacher.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
