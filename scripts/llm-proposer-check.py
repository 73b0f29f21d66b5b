#!/usr/bin/env python3
"""`kforge optimize --proposers llm` on a real GPU against a scripted endpoint on loopback.

The device has no model to ask, so a scripted "LLM" stands in: each reply takes the current best kernel
out of the prompt and changes its warps (twice or half the launch's `num_warps`), and one reply in
each round is hostile (PyTorch does the work). Every reply goes through the verdict pipeline with GPU
timing, exactly as a real model's would. Prints the optimize output and the report's attempts.

  python3 scripts/llm-proposer-check.py --kforge build/release/kforge \\
      --problem problems/baseline/05_layernorm --out $OUT/llm-check
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))
from scripted_chat_endpoint import scripted_endpoint

BEST = re.compile(r"## The current best Triton implementation[^\n]*\n```python\n(.*?)```", re.S)


def scripted_reply(index: int, body: dict[str, Any]) -> str:
    prompt = str(body["messages"][-1]["content"])
    match = BEST.search(prompt)
    if match is None:
        return "I cannot find the kernel."
    best = match.group(1)
    if index % 3 == 2:
        hostile = best.split("class ModelNew")[0] + (
            "class ModelNew(torch.nn.Module):\n    def forward(self, *args):\n        return args[0] * 1\n"
        )
        return f"Let PyTorch do it.\n```python\n{hostile}```\n"
    factor = 2.0 if index % 3 == 0 else 0.5

    def change(found: re.Match[str]) -> str:
        return f"num_warps={max(1, min(32, int(int(found.group(1)) * factor)))}"

    changed = re.sub(r"num_warps=(\d+)", change, best)
    return f"Use {'more' if factor > 1 else 'fewer'} warps per program.\n```python\n{changed}```\n"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kforge", default="build/release/kforge")
    parser.add_argument("--problem", type=Path, default=Path("problems/baseline/05_layernorm"))
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with scripted_endpoint(scripted_reply) as endpoint:
        command = [
            args.kforge, "optimize", "-p", str(args.problem / "problem.py"),
            "--from", str(args.problem / "solution.py"), "--device", args.device,
            "--proposers", "llm", "--llm-url", endpoint.url, "--model", "scripted",
            "--samples-per-round", "3", "--budget", "10", "--final-time", "1", "--out-dir", str(args.out),
            "--no-store",
        ]  # fmt: skip
        run = subprocess.run(command, capture_output=True, text=True, check=False)
    print(run.stdout + run.stderr[-3000:])
    print(f"exit {run.returncode}; {len(endpoint.requests)} requests to the scripted endpoint")
    report_file = args.out / "report.json"
    if report_file.exists():
        for attempt in json.loads(report_file.read_text())["attempts"]:
            timing = f"{attempt['ms']:.4f} ms" if attempt["ms"] else "no time"
            summary = attempt["summary"][:90]
            print(f"round {attempt['round']}: {attempt['idea'][:40]!r} -> {summary} ({timing})")
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
