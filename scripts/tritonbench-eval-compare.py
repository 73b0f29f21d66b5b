#!/usr/bin/env python3
"""TritonBench's own EVAL scripts and kforge on the same model answers, side by side (issue 35 item 5;
docs/tritonbench.md, docs/benchmarks.md).

    scripts/tritonbench-eval-compare.py --checkout TRITONBENCH --view VIEW --channel G \\
        --answers A.jsonl [B.jsonl ...] [--device cuda:0] [--workers 4] [--time-budget 1] [--out DIR]

TRITONBENCH is the public thunlp/TritonBench checkout (its EVAL/eval_G and eval_T scripts and data/);
VIEW is what kforge judges: the checkout, or a view of it that holds only the items to report (for
channel G the items a-k; the others are held out). For each answers file (TritonBench's LLM-output
JSONL, as under LLM_generated/):
1. TritonBench's scripts as they are, on a copy outside both repositories, run from the checkout: their
   interpreter path set to this Python, eval_T's test folder set to data/TritonBench_T_v1 (the script
   points at channel G's, where no T test exists), `--GPUs` one digit per worker (the scripts index the
   argument's characters). 0_call_acc.py keeps each answer that runs with the item's test block and
   exits 0; 1_exe_acc.py then keeps those whose output equals the gold file's. The files left after
   each step are TritonBench's per-item call and execution results.
2. `kforge eval --tritonbench VIEW --channel C --samples ANSWERS --results ...` on the same answers.
   Both run at once: the table is about accuracy and acceptance, not speed.
3. Per model: TritonBench's call and execution accuracy as its scripts compute them (over all the
   channel's items) and over the view's items, kforge's call and execution accuracy and accepted rate
   over the view's items, and why each answer TritonBench counts as execution-accurate was not accepted.
Output: DIR/compare.json and DIR/compare.md. Standard library only; KFORGE_BIN as in
scripts/false-positive-check.py.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
KFORGE = os.environ.get("KFORGE_BIN", str(REPO / "build" / "release" / "kforge"))


def patched_eval(checkout: Path, channel: str, into: Path) -> Path:
    """A copy of EVAL/eval_<channel> whose scripts run with this Python and find their tests."""
    folder = into / f"eval_{channel}"
    shutil.copytree(checkout / "EVAL" / f"eval_{channel}", folder)
    for script in folder.glob("*.py"):
        text = re.sub(
            r'(?m)^py_interpreter = ".*"$', f"py_interpreter = {sys.executable!r}", script.read_text()
        )
        if channel == "T":
            # eval_T points at channel G's test folder and at a metadata file the checkout names .jsonl
            # (it holds one JSON array, which the script's json.loads reads as it is).
            text = text.replace(
                'py_folder = "data/TritonBench_G_v1/"', 'py_folder = "data/TritonBench_T_v1/"'
            ).replace(
                'statis_path = "data/TritonBench_T_v1.json"', 'statis_path = "data/TritonBench_T_v1.jsonl"'
            )
        script.write_text(text)
    return folder


def run_eval(script: Path, args: list[str], checkout: Path, timeout: float, log: Path) -> None:
    """One of TritonBench's scripts, from the checkout (its data paths are relative to it)."""
    try:
        done = subprocess.run(
            [sys.executable, str(script), *args],
            cwd=checkout,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        log.write_text(done.stdout[-200000:] + "\n--- stderr ---\n" + done.stderr[-50000:])
    except subprocess.TimeoutExpired as expired:
        log.write_text(f"timed out after {timeout:.0f} s\n{expired.stdout or ''}")


def tritonbench_results(
    eval_folder: Path,
    checkout: Path,
    answers: Path,
    work: Path,
    workers: int,
    timeout: float,
    earlier: Path | None = None,
) -> dict[str, dict[str, bool]]:
    """Item name -> {"call", "exec"} as TritonBench's scripts decide them (absent: neither). With
    `earlier` (--reuse-tritonbench) holding the scripts' folders for these answers, those are read."""
    gpus = "0" * workers
    called, executed = work / "call", work / "exec"
    if earlier is not None and (earlier / "call").exists():
        for folder in ("call", "exec"):
            if (earlier / folder).exists():
                shutil.copytree(earlier / folder, work / folder, dirs_exist_ok=True)
        return tritonbench_folders(called, executed)
    run_eval(
        eval_folder / "0_call_acc.py",
        ["--source", str(answers), "--target", str(called), "--GPUs", gpus],
        checkout,
        timeout,
        work / "call.log",
    )
    survivors = sorted(path.name for path in called.glob("*.py")) if called.exists() else []
    executed.mkdir(parents=True, exist_ok=True)
    for name in survivors:
        shutil.copy(called / name, executed / name)
    if survivors:
        run_eval(
            eval_folder / "1_exe_acc.py",
            ["--folder", str(executed), "--GPUs", gpus],
            checkout,
            timeout,
            work / "exec.log",
        )
    return tritonbench_folders(called, executed)


def tritonbench_folders(called: Path, executed: Path) -> dict[str, dict[str, bool]]:
    """The files TritonBench's scripts left: those that ran (call) and those whose output matched (exec)."""
    survivors = sorted(path.name for path in called.glob("*.py"))
    exact = {path.name for path in executed.glob("*.py")} if executed.exists() else set()
    return {Path(name).stem: {"call": True, "exec": name in exact} for name in survivors}


def kforge_results(arguments: argparse.Namespace, answers: Path, work: Path) -> dict[str, dict[str, Any]]:
    results, report = work / "kforge.results.jsonl", work / "kforge.json"
    earlier = Path(arguments.reuse) / answers.stem / "kforge.results.jsonl" if arguments.reuse else None
    if earlier and earlier.exists():
        shutil.copy(earlier, results)
        return read_rows(results)
    command = [KFORGE, "eval", "--tritonbench", arguments.view, "--channel", arguments.channel]
    command += ["--samples", str(answers), "--device", arguments.device, "-j", str(arguments.jobs)]
    command += ["--no-store", "--results", str(results), "--output", str(report)]
    command += ["--time-budget", str(arguments.time_budget)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=arguments.timeout, check=False)
        (work / "kforge.log").write_text(done.stderr[-100000:])
    except subprocess.TimeoutExpired:
        (work / "kforge.log").write_text(f"timed out after {arguments.timeout:.0f} s")
    return read_rows(results)


def read_rows(results: Path) -> dict[str, dict[str, Any]]:
    """kforge's per-answer rows by item name (none when the run left no file)."""
    rows = {}
    if results.exists():
        for line in results.read_text().splitlines():
            row = json.loads(line)
            rows[row["name"]] = row
    return rows


def why_not_accepted(row: dict[str, Any] | None) -> str:
    """The class of reason an answer was not accepted, from kforge's verdict."""
    if row is None:
        return "not judged by kforge (no result)"
    verdict = row.get("verdict") or {}
    if row.get("verdict_error"):
        return f"no verdict: {row['verdict_error'][:120]}"
    if verdict.get("outcome") == "error":
        return f"no verdict: error ({(verdict.get('error') or {}).get('kind', '?')})"
    stage = verdict.get("failed_stage") or "?"
    rules = [
        finding.get("rule", "?")
        for item in verdict.get("stages", [])
        for finding in item.get("findings", [])
        if finding.get("severity") == "reject"
    ]
    if "torch-compute-in-forward" in rules:
        return "PyTorch computes part of the result"
    if "triton-kernel-launched" in rules or "no-kernel-launched" in rules:
        return "no Triton kernel launched"
    if stage == "correctness":
        return "correctness: wrong or outside the tolerance"
    return f"honesty check at {stage}: {', '.join(rules) or verdict.get('summary', '')[:80]}"


def compare(
    name: str, view: set[str], tritonbench: dict[str, dict[str, bool]], kforge: dict[str, Any]
) -> dict[str, Any]:
    def rate(count: int, total: int) -> float | None:
        return round(count / total, 4) if total else None

    in_view = {item: result for item, result in tritonbench.items() if item in view}
    reasons: dict[str, list[str]] = {}
    for item, result in sorted(in_view.items()):
        row = kforge.get(item)
        accepted = bool(row and (row.get("verdict") or {}).get("outcome") == "accepted")
        if result["exec"] and not accepted:
            reasons.setdefault(why_not_accepted(row), []).append(item)
    judged = list(kforge.values())
    return {
        "model": name,
        "view_items": len(view),
        "tritonbench_all": {
            "call": sum(r["call"] for r in tritonbench.values()),
            "exec": sum(r["exec"] for r in tritonbench.values()),
        },
        "tritonbench_view": {
            "call_accuracy": rate(sum(r["call"] for r in in_view.values()), len(view)),
            "execution_accuracy": rate(sum(r["exec"] for r in in_view.values()), len(view)),
        },
        "kforge_view": {
            "answers": len(judged),
            "call_accuracy": rate(sum(bool(r.get("call")) for r in judged), len(view)),
            "execution_accuracy": rate(sum(bool(r.get("exec")) for r in judged), len(view)),
            "accepted_rate": rate(
                sum((r.get("verdict") or {}).get("outcome") == "accepted" for r in judged), len(view)
            ),
        },
        "exec_accurate_not_accepted": reasons,
    }


def render(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| model | TB call (view) | TB exec (view) | kforge call | kforge exec | kforge accepted "
        "| TB exec-accurate, not accepted |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        tb, kf = row["tritonbench_view"], row["kforge_view"]
        why = "; ".join(
            f"{reason}: {len(items)}" for reason, items in row["exec_accurate_not_accepted"].items()
        )
        lines.append(
            f"| {row['model']} | {tb['call_accuracy']} | {tb['execution_accuracy']} | "
            f"{kf['call_accuracy']} | {kf['execution_accuracy']} | {kf['accepted_rate']} | {why or '-'} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--checkout", required=True)
    parser.add_argument("--view", required=True)
    parser.add_argument("--channel", choices=["G", "T"], required=True)
    parser.add_argument("--answers", nargs="+", required=True)
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--workers", type=int, default=4, help="TritonBench's scripts: answers run at once")
    parser.add_argument("--jobs", type=int, default=16, help="kforge's -j")
    parser.add_argument("--time-budget", type=float, default=1.0)
    parser.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds for each script and kforge run"
    )
    parser.add_argument(
        "--reuse",
        help="an earlier --out: kforge's results for an answers file found there are read, not made again",
    )
    parser.add_argument(
        "--reuse-tritonbench",
        help="an earlier --out: TritonBench's call and exec folders for an answers file found there are "
        "read, not made again",
    )
    parser.add_argument("--out", default=os.environ.get("OUT", "out") + "/tritonbench-compare")
    arguments = parser.parse_args()
    checkout, out = Path(arguments.checkout).resolve(), Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    folder = "TritonBench_G_v1" if arguments.channel == "G" else "TritonBench_T_v1"
    view = {path.stem for path in (Path(arguments.view) / "data" / folder).glob("*.py")}
    rows = []
    with tempfile.TemporaryDirectory(prefix="tb-eval-") as scratch:
        eval_folder = patched_eval(checkout, arguments.channel, Path(scratch))
        for answers in map(Path, arguments.answers):
            work = out / answers.stem
            work.mkdir(parents=True, exist_ok=True)
            # Side by side: the table compares accuracy and acceptance, which do not depend on the GPU
            # being free; kforge's speedups from such a run are not reported.
            with ThreadPoolExecutor(max_workers=2) as pool:
                theirs = pool.submit(
                    tritonbench_results,
                    eval_folder,
                    checkout,
                    answers.resolve(),
                    work,
                    arguments.workers,
                    arguments.timeout,
                    Path(arguments.reuse_tritonbench) / answers.stem if arguments.reuse_tritonbench else None,
                )
                ours = pool.submit(kforge_results, arguments, answers, work)
                rows.append(compare(answers.stem, view, theirs.result(), ours.result()))
            (out / "compare.json").write_text(json.dumps(rows, indent=1) + "\n")
    text = render(rows)
    (out / "compare.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
