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
import re
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))
from scripted_chat_endpoint import scripted_endpoint

NAME = re.compile(r"reference implementation, `([^`]+)`")


class SuiteTeacher:
    def __init__(self, suite: Path) -> None:
        self.suite = suite
        self.lock = threading.Lock()
        self.turns: Counter[str] = Counter()

    def __call__(self, index: int, body: dict[str, Any]) -> str:
        found = NAME.search(str(body["messages"][-1]["content"]))
        if found is None or not (self.suite / found.group(1) / "solution.py").is_file():
            return "I do not know this problem."
        name = found.group(1)
        with self.lock:
            turn = self.turns[name]
            self.turns[name] += 1
        solution = (self.suite / name / "solution.py").read_text()
        risky = "import subprocess\n" + solution.replace(
            "class ModelNew", "_probe = subprocess.run\n\n\nclass ModelNew", 1
        )
        replies = [
            f"One program per tile; the math in fp32.\n\n```python\n{solution}```\n",
            f"The same kernel again.\n\n```python\n{solution}```\n",
            f"Check the device first.\n\n```python\n{risky}```\n",
            "I cannot write this kernel.",
        ]
        return replies[turn % len(replies)]


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
            "--samples", str(args.samples), "--llm-url", endpoint.url, "--model", "scripted-suite",
            "--device", args.device, "--time-budget", args.time_budget,
            "--store", str(args.out / "store.sqlite"), "--out", str(args.out / "sft.jsonl"),
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
