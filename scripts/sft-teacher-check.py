#!/usr/bin/env python3
"""`kforge data sft --teacher llm` on a real GPU against a scripted teacher on loopback.

The device has no model to ask, so a scripted "LLM" stands in: for each problem it answers with the
suite's own solution (with a line of reasoning), the same code again (a duplicate), the solution with
a `subprocess` call (rejected by the static rules) and prose without code. Every reply goes through
the verdict pipeline with GPU timing, exactly as a real model's would, so the run shows the
acceptance bookkeeping and the speedups of the kept samples. Prints the command's output and the
summary; the dataset, the rejection log and the summary are written under --out.

  python3 scripts/sft-teacher-check.py --kforge build/release/kforge --suite problems/starter \\
      --out $OUT/sft-check
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))
from scripted_chat_endpoint import scripted_endpoint
from scripted_suite_teacher import SuiteTeacher


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kforge", default="build/release/kforge")
    parser.add_argument("--suite", type=Path, default=Path("problems/starter"))
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--time-budget", default="1")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with scripted_endpoint(SuiteTeacher(args.suite)) as endpoint:
        command = [
            args.kforge, "data", "sft", "--suite", str(args.suite), "--teacher", "llm",
            "--samples-per-problem", str(args.samples), "--llm-url", endpoint.url,
            "--model", "scripted-suite",
            "--device", args.device, "--time-budget", args.time_budget,
            "--store", str(args.out / "store.sqlite"), "--output", str(args.out / "sft.jsonl"),
        ]  # fmt: skip
        print("$", " ".join(command), flush=True)
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    print(result.stdout + result.stderr)
    summary_path = args.out / "sft.summary.json"
    if summary_path.is_file():
        summary = json.loads(summary_path.read_text())
        brief = {key: value for key, value in summary.items() if key != "per_problem"}
        print(json.dumps(brief, indent=1))
        for entry in summary["per_problem"]:
            print(f"  {entry['problem']:32s} kept {entry['accepted']}  best speedup {entry['best_speedup']}")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
