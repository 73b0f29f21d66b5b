#!/usr/bin/env python3
"""False positives on honest code nobody on the team wrote (issue 32, item 10; docs/benchmarks.md).

Two sets of honest candidates:
- teacher: the Inductor teacher's standalone Triton candidates for KernelBench problems, rewritten from
  captures made on a GPU (CAPTURES/level<N>/<problem>.capture.json; no GPU needed for the rewrite);
- tritonbench: the TritonBench-G gold files whose names start with a-k, each judged as its own answer
  (items l-z are held out and never run here).

    scripts/false-positive-check.py [--device cpu|cuda:0] [--sets teacher,tritonbench] [--out DIR]

On a GPU everything runs at full size: the teacher's candidates as one batch (`kforge eval --kernelbench
--samples`, -j 4, no timing, no generalisation trial: Inductor's code is specialised to the captured
sizes by construction, as `kforge data sft` verifies it), the TritonBench items in parallel groups of
`kforge eval --tritonbench` (no timing). On the CPU the teacher's candidates run at reduced sizes (every
module-level int >= 8 divided by 32): extract, static and compile (parameter perturbation) are judged,
and their first forward is expected to stop at the rewrite's size check; a problem whose reference
refuses the reduced sizes is judged through the static stage only. TritonBench's test blocks allocate
on `cuda`, so on the CPU each gold file gets the static stage only (entry = the first function of the
file that its test block calls).

Every result is classified: accepted; specialised (the rewrite's size check, expected at reduced sizes);
rejected by an honesty check (static, compile's parameter-perturbation, runtime, performance: each one
a false positive to explain); rejected for being wrong (correctness: the teacher's or the gold's own
error); no verdict (an error, with its message). The table and a JSON summary go to --out.
Standard library only; uses KFORGE_BIN (default build/release/kforge) and KFORGE_PYTHON for the rewrite.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
KFORGE = os.environ.get("KFORGE_BIN", str(REPO / "build" / "release" / "kforge"))
PYTHON = os.environ.get("KFORGE_PYTHON") or (
    str(REPO / ".venv" / "bin" / "python") if (REPO / ".venv" / "bin" / "python").exists() else "python3"
)
HONESTY_STAGES = {"static", "runtime", "performance"}
SPECIALISED_MARKERS = ("the compiled kernels expect", "expect size")


def kforge(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([KFORGE, *args], capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess([KFORGE, *args], 124, "", f"timed out after {timeout:.0f} s")


def reject_checks(verdict: dict[str, Any]) -> list[str]:
    return [
        finding.get("rule", "?")
        for stage in verdict.get("stages", [])
        for finding in stage.get("findings", [])
        if finding.get("severity") == "reject"
    ]


def classify(verdict: dict[str, Any], reduced: bool = False) -> dict[str, Any]:
    outcome = verdict.get("outcome", "error")
    stage = verdict.get("failed_stage")
    checks = reject_checks(verdict)
    error = verdict.get("error") or {}
    summary = str(verdict.get("summary") or error.get("message", ""))[:400]
    if outcome == "accepted":
        kind = "accepted"
    elif outcome == "error":
        kind = "no verdict"
    elif reduced and stage == "correctness" and any(marker in summary for marker in SPECIALISED_MARKERS):
        kind = "specialised"
    elif reduced and stage == "correctness" and "timeout" in checks:
        kind = "specialised"  # the rewrite's loops keep the captured sizes: the interpreter runs them all
    elif stage in HONESTY_STAGES or "parameter-perturbation" in checks:
        kind = "honesty check"
    else:
        kind = "wrong"
    return {"kind": kind, "outcome": outcome, "stage": stage, "checks": checks, "summary": summary}


# --- the inductor teacher --------------------------------------------------------------------------


def rewrite_captures(captures: Path, kernelbench: Path, out: Path) -> list[dict[str, Any]]:
    """Each capture with a KernelBench problem, rewritten into a candidate file (or why it could not be)."""
    jobs = []
    for capture in sorted(captures.glob("level*/*.capture.json")):
        level = capture.parent.name
        name = capture.name.removesuffix(".capture.json")
        problem = kernelbench / "KernelBench" / level / f"{name}.py"
        if problem.exists():
            jobs.append((level, name, problem, capture))
    folder = out / "teacher"
    folder.mkdir(parents=True, exist_ok=True)

    def rewrite(job: tuple[str, str, Path, Path]) -> dict[str, Any]:
        level, name, problem, capture = job
        result = folder / f"{level}-{name}.result.json"
        environment = {**os.environ, "PYTHONPATH": str(REPO / "python")}
        command = [PYTHON, "-m", "kforge.worker.inductor_teacher", "--problem", str(problem)]
        command += ["--capture-in", str(capture), "--out", str(result)]
        if not result.exists():  # a rerun keeps the rewrites it finds (delete the folder to rewrite)
            subprocess.run(command, capture_output=True, text=True, env=environment, timeout=600, check=False)
        entry: dict[str, Any] = {"level": level, "name": name, "problem": str(problem)}
        try:
            answer = json.loads(result.read_text())
        except (OSError, json.JSONDecodeError) as failure:
            return {**entry, "rewrite": f"no result: {failure}"}
        if "candidate" not in answer:
            return {**entry, "rewrite": f"{answer.get('stage')}: {str(answer.get('error'))[:200]}"}
        candidate = folder / level / f"{name}.py"
        candidate.parent.mkdir(exist_ok=True)
        candidate.write_text(answer["candidate"])
        return {**entry, "rewrite": "ok", "candidate": str(candidate)}

    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(rewrite, jobs))


def reduced_sizes(problem: Path) -> list[str]:
    """--size NAME=VALUE for every module-level int constant >= 8 of the problem, divided by 32."""
    sizes = []
    for node in ast.parse(problem.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Constant) and type(value.value) is int and value.value >= 8:
                sizes += ["--size", f"{node.targets[0].id}={max(8, value.value // 32)}"]
    return sizes


def teacher_cpu(entries: list[dict[str, Any]], jobs: int) -> None:
    def judge(entry: dict[str, Any]) -> None:
        common = ["eval", "-p", entry["problem"], "-c", entry["candidate"], "--device", "cpu", "--json"]
        common += ["--no-store", "--trials", "1", "--timeout", "120", "--no-generalisation"]
        done = kforge([*common, *reduced_sizes(Path(entry["problem"]))], timeout=900)
        verdict = parse(done)
        entry["mode"] = "cpu, reduced sizes"
        if verdict.get("outcome") == "error":  # the reference refuses the reduced sizes: static only
            done = kforge([*common, "--size", "KFORGE_STATIC_ONLY=1"], timeout=300)
            verdict = parse(done)
            entry["mode"] = "cpu, static stage only"
            static = next((s for s in verdict.get("stages", []) if s.get("name") == "static"), {})
            if static.get("status") == "passed":
                entry.update(
                    kind="static passed", outcome="-", stage=None, checks=[], summary=static["summary"]
                )
                return
        entry.update(classify(verdict, reduced=True))

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(judge, [entry for entry in entries if entry.get("candidate")]))


def teacher_gpu(entries: list[dict[str, Any]], kernelbench: Path, out: Path, device: str, jobs: int) -> None:
    by_level: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        if entry.get("candidate"):
            by_level.setdefault(entry["level"], []).append(entry)
    for level, members in by_level.items():
        samples = out / f"teacher-{level}.samples.jsonl"
        results = out / f"teacher-{level}.results.jsonl"
        lines = [
            json.dumps({"problem": m["problem"], "candidate": m["candidate"], "sample_id": m["name"]})
            for m in members
        ]
        samples.write_text("\n".join(lines) + "\n")
        args = ["eval", "--kernelbench", str(kernelbench), "--level", level.removeprefix("level")]
        args += ["--samples", str(samples), "--results", str(results), "--device", device, "-j", str(jobs)]
        args += ["--no-perf", "--no-generalisation", "--no-store", "--timeout", "120"]
        kforge(args, timeout=float(os.environ.get("TEACHER_TIMEOUT", "420")))
        found = {}
        if results.exists():
            for line in results.read_text().splitlines():
                result = json.loads(line)
                found[result.get("sample_id")] = result.get("verdict", {})
        for member in members:
            member["mode"] = f"{device}, full size"
            verdict = found.get(member["name"])
            member.update(classify(verdict) if verdict else {"kind": "not run", "summary": "no result line"})


# --- TritonBench-G gold files, a-k -----------------------------------------------------------------


def tritonbench_items(checkout: Path) -> list[Path]:
    folder = checkout / "data" / "TritonBench_G_v1"
    return sorted(p for p in folder.glob("*.py") if "a" <= p.name[0].lower() <= "k")


def first_called_function(gold: Path) -> str | None:
    """The first function of the code part that the test block calls (the wrapper, usually)."""
    text = gold.read_text()
    lines = text.splitlines()
    separator = next(
        (
            i
            for i, line in enumerate(lines)
            if line.strip() and set(line.strip()) == {"#"} and len(line.strip()) >= 10
        ),
        None,
    )
    if separator is None:
        return None
    code, test = "\n".join(lines[:separator]), "\n".join(lines[separator + 1 :])
    try:
        defined = {n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)}
        for node in ast.walk(ast.parse(test)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in defined:
                return node.func.id
    except SyntaxError:
        return None
    return None


def tritonbench_cpu(checkout: Path, out: Path, jobs: int) -> list[dict[str, Any]]:
    spec = out / "no-inputs.json"
    spec.write_text('{"inputs": []}\n')

    def judge(gold: Path) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": gold.stem, "mode": "cpu, static stage only"}
        function = first_called_function(gold)
        if function is None:
            return {**entry, "kind": "no verdict", "summary": "no test block call of a function of the file"}
        done = kforge(
            [
                "eval",
                "--kernel",
                str(gold),
                "--entry",
                function,
                "--inputs",
                str(spec),
                "--device",
                "cpu",
                "--json",
                "--no-store",
                "--timeout",
                "60",
            ],
            timeout=300,
        )
        verdict = parse(done)
        static = next((s for s in verdict.get("stages", []) if s.get("name") == "static"), {})
        entry["entry"] = function
        if static.get("status") == "passed":
            return {**entry, "kind": "static passed", "checks": [], "summary": static.get("summary", "")}
        if static.get("status") == "failed":
            return {**entry, **classify(verdict)}
        return {**entry, "kind": "no verdict", "summary": str(verdict.get("error", done.stderr[-300:]))[:300]}

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(judge, tritonbench_items(checkout)))


def tritonbench_gpu(checkout: Path, out: Path, device: str, groups: int) -> list[dict[str, Any]]:
    names = [gold.stem for gold in tritonbench_items(checkout)]
    chunks = [names[i::groups] for i in range(groups)]

    def run(index: int) -> list[dict[str, Any]]:
        report = out / f"tritonbench-{index}.json"
        args = ["eval", "--tritonbench", str(checkout), "--channel", "G", "--items", ",".join(chunks[index])]
        args += ["--device", device, "--no-perf", "--no-store", "--timeout", "120", "-o", str(report)]
        kforge(args, timeout=float(os.environ.get("TRITONBENCH_TIMEOUT", "420")))
        rows = []
        document = json.loads(report.read_text()) if report.exists() else {"items": []}
        seen = set()
        for item in document.get("items", []):
            seen.add(item["name"])
            verdict = item.get("verdict") or {}
            row = {
                "name": item["name"],
                "mode": f"{device}, test-block sizes",
                "call": item.get("call"),
                "exec": item.get("exec"),
            }
            if verdict:
                row.update(classify(verdict))
            else:
                row.update(
                    kind="no verdict", summary=str(item.get("verdict_error") or item.get("call_error"))[:300]
                )
            rows.append(row)
        rows += [
            {"name": name, "kind": "not run", "summary": "no report line"}
            for name in chunks[index]
            if name not in seen
        ]
        return rows

    with ThreadPoolExecutor(max_workers=groups) as pool:
        return [row for rows in pool.map(run, range(groups)) for row in rows]


# --- report ------------------------------------------------------------------------------------------


def parse(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    try:
        verdict: dict[str, Any] = json.loads(done.stdout)
        return verdict
    except json.JSONDecodeError:
        return {"outcome": "error", "error": {"message": (done.stderr or done.stdout)[-400:]}}


def render(title: str, rows: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.get("kind", "?")] = counts.get(row.get("kind", "?"), 0) + 1
    lines = [f"## {title}: {len(rows)} ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))})"]
    for row in sorted(rows, key=lambda r: (r.get("kind", ""), r.get("name", ""))):
        checks = ",".join(row.get("checks", []) or [])
        lines.append(
            f"  {row.get('kind', '?'):<14} {row.get('name', '?'):<58} {row.get('stage') or '-':<11} "
            f"{checks:<28} {row.get('summary', row.get('rewrite', ''))[:160]}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--sets", default="teacher,tritonbench")
    parser.add_argument("--captures", default="/work/captures/cap")
    parser.add_argument("--kernelbench", default="/work/ext/ScalingIntelligence+KernelBench")
    parser.add_argument("--tritonbench", default="/work/ext/thunlp+TritonBench")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default=os.environ.get("OUT", "out") + "/false-positives")
    arguments = parser.parse_args()
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    on_gpu = arguments.device != "cpu"
    report: dict[str, Any] = {"device": arguments.device, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ")}
    texts: list[str] = []

    def teacher() -> None:
        start = time.monotonic()
        entries = rewrite_captures(Path(arguments.captures), Path(arguments.kernelbench), out)
        if on_gpu:
            teacher_gpu(entries, Path(arguments.kernelbench), out, arguments.device, max(4, arguments.jobs))
        else:
            teacher_cpu(entries, arguments.jobs)
        for entry in entries:
            entry.setdefault("kind", "no candidate" if entry.get("rewrite") != "ok" else "not run")
        report["teacher"] = entries
        report["teacher_seconds"] = round(time.monotonic() - start, 1)
        texts.append(render("inductor teacher (KernelBench)", entries))

    def tritonbench() -> None:
        start = time.monotonic()
        checkout = Path(arguments.tritonbench)
        if on_gpu:
            rows = tritonbench_gpu(checkout, out, arguments.device, 8)
        else:
            rows = tritonbench_cpu(checkout, out, arguments.jobs)
        report["tritonbench"] = rows
        report["tritonbench_seconds"] = round(time.monotonic() - start, 1)
        texts.append(render("TritonBench-G gold a-k, each its own answer", rows))

    wanted = [
        part for name, part in (("teacher", teacher), ("tritonbench", tritonbench)) if name in arguments.sets
    ]
    # On a GPU both sets run side by side (the device is mostly idle between launches); on the CPU in turn.
    with ThreadPoolExecutor(max_workers=len(wanted) if on_gpu else 1) as pool:
        for future in [pool.submit(part) for part in wanted]:
            future.result()
    (out / "false-positives.json").write_text(json.dumps(report, indent=1) + "\n")
    text = "\n\n".join(texts)
    (out / "false-positives.txt").write_text(text + "\n")
    print(text)
    shutil.rmtree(out / "teacher" / "tmp", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
