#!/usr/bin/env python3
"""The real TritonBench checkout, judged by kforge and by TritonBench's own EVAL scripts (issue 35).

Standard library only; nothing of the checkout is copied into the repository: every folder made here is
outside it (give --out under $OUT or /tmp).

  view      a restricted view of a checkout: the items of one channel whose file names start with the
            given letters (channel G: a-k, the rest is held out), as symlinks, with the metadata JSON cut
            to those items; optionally a model's answers JSONL cut to the same items (TritonBench's
            label rule for G, its description rule for T).
  official  TritonBench's EVAL/eval_{G,T}/0_call_acc.py and 1_exe_acc.py on a view and an answers file,
            from a patched copy (the interpreter is this Python; eval_T reads its tests from the T
            folder, which its published copy gets wrong; a Python-3.12-only f-string rewritten), N
            answers at once on one GPU; writes which files passed the call and the execution check.
  gold      the gold self-judging table (item, verdict, reason, self-speedup) of a kforge report, as
            Markdown, with the counts the issue asks for.
  compare   per model, TritonBench's call/exec accuracy beside kforge's call/exec accuracy and accepted
            rate, and why kforge did not accept the execution-accurate answers (reason classes, with
            examples), as Markdown and JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

SEPARATOR = "#" * 146
FOLDERS = {"G": "TritonBench_G_v1", "T": "TritonBench_T_v1"}


def in_letters(name: str, letters: str) -> bool:
    """`a-k` style ranges, or `all`."""
    if letters == "all":
        return True
    low, _, high = letters.partition("-")
    return low <= name[:1].lower() <= (high or low)


def strip_chat_tokens(text: str) -> str:
    return text.replace("<|im_end|>", "").replace("<|EOT|>", "")


def answer_file_g(line: dict[str, Any], metadata: list[dict[str, Any]], used: set[str]) -> str | None:
    """TritonBench-G's rule: the answer's label is inside exactly the item's "output"."""
    label = strip_chat_tokens(str(line.get("label", "")))
    for item in metadata:
        if item["file"] not in used and label and label in item.get("output", ""):
            used.add(item["file"])
            return str(item["file"])
    return None


def answer_file_by_instruction(
    line: dict[str, Any], metadata: list[dict[str, Any]], used: set[str]
) -> str | None:
    """The one label no gold matches (context_attn_nopad: an older gold; TritonBench matches it by hand): the
    answer's instruction holds exactly one item's instruction (kforge's loader does the same)."""
    instruction = str(line.get("instruction", ""))
    found = [
        item["file"]
        for item in metadata
        if item["file"] not in used
        and any(item.get(key) and item[key] in instruction for key in ("comp_instru", "simp_instru"))
    ]
    if len(found) != 1:
        return None
    used.add(found[0])
    return str(found[0])


def answer_file_t(line: dict[str, Any], metadata: list[dict[str, Any]]) -> str | None:
    """TritonBench-T's rule: the instruction's functional description is inside one item's description."""
    instruction = str(line.get("instruction") or next(iter(line.values()), ""))
    if "Functional Description: " not in instruction or "Wrapper Entry Information:" not in instruction:
        return None
    description = instruction.split("Functional Description: ")[-1].split("Wrapper Entry Information:")[0]
    description = description.replace("\n", "")
    found = [
        item["file"] for item in metadata if description in item.get("description", "").replace("\n", "")
    ]
    return str(found[0]) if len(found) == 1 else None


def make_view(arguments: argparse.Namespace) -> None:
    checkout, out = Path(arguments.checkout), Path(arguments.out)
    folder = FOLDERS[arguments.channel]
    # The published checkout ships T's metadata as .jsonl (a JSON array all the same); its scripts read .json.
    source = checkout / "data" / f"{folder}.json"
    metadata = json.loads((source if source.exists() else source.with_suffix(".jsonl")).read_text())
    kept = [item for item in metadata if in_letters(item["file"], arguments.letters)]
    (out / "data" / folder).mkdir(parents=True, exist_ok=True)
    for item in kept:
        link = out / "data" / folder / item["file"]
        if not link.exists():
            link.symlink_to((checkout / "data" / folder / item["file"]).resolve())
    (out / "data" / f"{folder}.json").write_text(json.dumps(kept, ensure_ascii=False))
    print(
        f"view {out}: {len(kept)} of {len(metadata)} channel-{arguments.channel} items ({arguments.letters})"
    )
    if arguments.answers:
        used: set[str] = set()
        lines, files = [], []
        for raw in Path(arguments.answers).read_text().splitlines():
            if not raw.strip():
                continue
            line = json.loads(raw)
            name = (
                answer_file_g(line, metadata, used)
                if arguments.channel == "G"
                else answer_file_t(line, metadata)
            )
            if name is None and arguments.channel == "G":
                name = answer_file_by_instruction(line, metadata, used)
            if name is not None and in_letters(name, arguments.letters):
                lines.append(raw)
                files.append(name)
        Path(arguments.answers_out).write_text("".join(line + "\n" for line in lines))
        print(f"answers {arguments.answers_out}: {len(lines)} of the items in the view")


def patched_eval(eval_folder: Path, channel: str, work: Path) -> Path:
    """A copy of TritonBench's EVAL/eval_<channel> scripts that runs here (paths patched, nothing else)."""
    target = work / f"eval_{channel}"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("0_call_acc.py", "1_exe_acc.py"):
        text = (eval_folder / name).read_text()
        text = re.sub(r'py_interpreter = ".*"', f"py_interpreter = {sys.executable!r}", text)
        if channel == "T":
            text = text.replace(
                'py_folder = "data/TritonBench_G_v1/"', 'py_folder = "data/TritonBench_T_v1/"'
            )
        text = text.replace(
            'print(f"Above is call test for {path.split("/")[-1].replace(".jsonl", "")}")',
            "print('Above is call test for ' + path.split('/')[-1].replace('.jsonl', ''))",
        )
        (target / name).write_text(text)
    return target


def run_official(arguments: argparse.Namespace) -> None:
    view, work = Path(arguments.view).resolve(), Path(arguments.work).resolve()
    scripts = patched_eval(Path(arguments.eval), arguments.channel, work)
    call_dir, exec_dir = work / "call", work / "exec"
    for folder in (call_dir, exec_dir):
        shutil.rmtree(folder, ignore_errors=True)
    gpus = "0" * arguments.parallel  # the scripts give each character of --GPUs a worker: all on GPU 0
    start = time.monotonic()
    with open(work / "call.log", "w") as log:
        source = str(Path(arguments.answers).resolve())
        subprocess.run(
            [sys.executable, str(scripts / "0_call_acc.py"), "--source", source, "--target", str(call_dir),
             "--GPUs", gpus],
            cwd=view, stdout=log, stderr=subprocess.STDOUT, check=False, timeout=arguments.timeout,
        )  # fmt: skip
    called = sorted(p.name for p in call_dir.glob("*.py")) if call_dir.is_dir() else []
    call_seconds = time.monotonic() - start
    shutil.copytree(call_dir, exec_dir) if call_dir.is_dir() else exec_dir.mkdir(parents=True)
    with open(work / "exec.log", "w") as log:
        subprocess.run(
            [sys.executable, str(scripts / "1_exe_acc.py"), "--folder", str(exec_dir), "--GPUs", gpus],
            cwd=view, stdout=log, stderr=subprocess.STDOUT, check=False, timeout=arguments.timeout,
        )  # fmt: skip
    executed = sorted(p.name for p in exec_dir.glob("*.py"))
    answers = sum(1 for line in Path(arguments.answers).read_text().splitlines() if line.strip())
    result = {
        "channel": arguments.channel,
        "answers": answers,
        "call": called,
        "exec": executed,
        "call_accuracy": len(called) / answers if answers else None,
        "execution_accuracy": len(executed) / answers if answers else None,
        "seconds": {"call": call_seconds, "total": time.monotonic() - start},
    }
    Path(arguments.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"TritonBench's scripts: call {len(called)}/{answers}, exec {len(executed)}/{answers}")


def verdict_reason(item: dict[str, Any]) -> tuple[str, str]:
    """The class of why kforge gave no acceptance, and the one-line reason."""
    verdict = item.get("verdict")
    if not isinstance(verdict, dict):
        return "no verdict (gold or capture)", str(item.get("verdict_error", ""))
    summary = str(verdict.get("summary", ""))
    if verdict.get("outcome") == "accepted":
        return "accepted", summary
    if verdict.get("outcome") == "error":
        return f"error ({(verdict.get('error') or {}).get('kind', '?')})", summary
    stage = verdict.get("failed_stage") or "?"
    findings = [
        finding.get("id", "")
        for found in verdict.get("stages", [])
        if found.get("name") == stage
        for finding in found.get("findings", [])
        if finding.get("severity") == "reject"
    ]
    ids = sorted(set(findings))
    if stage == "static" and "torch-compute-in-forward" in ids:
        return "PyTorch compute", summary
    if stage == "static" and "triton-kernel-launched" in ids:
        return "no kernel launched", summary
    if stage == "correctness":
        kind = "NaN/Inf" if "NaN/Inf mismatches)" in summary and " 0 NaN/Inf" not in summary else "tolerance"
        return f"correctness: {kind}", summary
    return f"{stage}: {', '.join(ids) or 'other'}", summary


def speedup_of(verdict: Any) -> float | None:
    return verdict.get("speedup") if isinstance(verdict, dict) else None


def gold_table(arguments: argparse.Namespace) -> None:
    report = json.loads(Path(arguments.report).read_text())
    rows = ["| item | verdict | reason | self-speedup |", "|---|---|---|---|"]
    accepted, speedups = 0, []
    for item in sorted(report["items"], key=lambda row: row["name"]):
        kind, summary = verdict_reason(item)
        speedup = speedup_of(item.get("verdict"))
        accepted += kind == "accepted"
        if speedup is not None and kind == "accepted":
            speedups.append(speedup)
        reason = "" if kind == "accepted" else f"{kind}: {summary}"[:160].replace("|", "/")
        if not item["call"]:
            reason = f"its own test fails: {item['call_error']}"[:160].replace("|", "/")
        shown = f"{speedup:.3f}" if speedup is not None else "-"
        rows.append(
            f"| {item['name']} | {kind if kind == 'accepted' else 'not accepted'} | {reason} | {shown} |"
        )
    total = len(report["items"])
    within = sum(1 for value in speedups if abs(value - 1) <= 0.02)
    lines = [
        f"{accepted} of {total} gold files accepted against themselves "
        f"({100 * accepted / max(total, 1):.1f}%); "
        f"{within} of {len(speedups)} timed self-speedups within 1.00 ± 0.02; run: {report.get('run')}",
        "",
        *rows,
    ]
    Path(arguments.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:1]))


def compare_models(arguments: argparse.Namespace) -> None:
    out_rows = [
        "| model | answers | TB call | TB exec | kforge call | kforge exec | kforge accepted |",
        "|---|---|---|---|---|---|---|",
    ]
    reasons: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    summary: list[dict[str, Any]] = []
    for spec in arguments.model:
        name, kforge_path, official_path = spec.split(",")
        report = json.loads(Path(kforge_path).read_text())
        official = json.loads(Path(official_path).read_text()) if os.path.exists(official_path) else {}
        items = report["items"]
        n = len(items)
        call = sum(item["call"] for item in items)
        execs = [item for item in items if item["exec"]]
        accepted = sum(verdict_reason(item)[0] == "accepted" for item in items)
        for item in execs:
            kind, text = verdict_reason(item)
            if kind != "accepted":
                reasons[kind] += 1
                examples.setdefault(kind, []).append(f"{name} {item['name']}: {text}"[:220])

        def share(count: int, total: int) -> str:
            return f"{100 * count / total:.1f}% ({count})" if total else "-"

        tb_answers = official.get("answers", 0)
        out_rows.append(
            f"| {name} | {n} | {share(len(official.get('call', [])), tb_answers)} | "
            f"{share(len(official.get('exec', [])), tb_answers)} | {share(call, n)} | "
            f"{share(len(execs), n)} | {share(accepted, n)} |"
        )
        summary.append({"model": name, "answers": n, "kforge_call": call, "kforge_exec": len(execs),
                        "kforge_accepted": accepted, "tritonbench": official})  # fmt: skip
    reason_rows = [
        "| why an execution-accurate answer was not accepted | answers | example |",
        "|---|---|---|",
    ]
    for kind, count in reasons.most_common():
        reason_rows.append(f"| {kind} | {count} | {examples[kind][0].replace('|', '/')} |")
    text = "\n".join([*out_rows, "", *reason_rows]) + "\n"
    Path(arguments.out).write_text(text)
    Path(arguments.out).with_suffix(".json").write_text(
        json.dumps({"models": summary, "reasons": reasons, "examples": examples}, indent=2) + "\n"
    )
    print(text)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    view = commands.add_parser("view")
    view.add_argument("--checkout", required=True)
    view.add_argument("--channel", choices=["G", "T"], required=True)
    view.add_argument("--letters", default="a-k")
    view.add_argument("--out", required=True)
    view.add_argument("--answers")
    view.add_argument("--answers-out")
    official = commands.add_parser("official")
    official.add_argument("--eval", required=True, help="the checkout's EVAL/eval_G or EVAL/eval_T")
    official.add_argument("--view", required=True)
    official.add_argument("--channel", choices=["G", "T"], required=True)
    official.add_argument("--answers", required=True)
    official.add_argument("--work", required=True)
    official.add_argument("--out", required=True)
    official.add_argument("--parallel", type=int, default=8)
    official.add_argument("--timeout", type=float, default=3000)
    gold = commands.add_parser("gold")
    gold.add_argument("--report", required=True)
    gold.add_argument("--out", required=True)
    compare = commands.add_parser("compare")
    compare.add_argument("--model", action="append", required=True, help="NAME,KFORGE.json,OFFICIAL.json")
    compare.add_argument("--out", required=True)
    arguments = parser.parse_args()
    {"view": make_view, "official": run_official, "gold": gold_table, "compare": compare_models}[
        arguments.command
    ](arguments)
    return 0


if __name__ == "__main__":
    sys.exit(main())
