"""Runs every broken candidate of tests/candidates/manifest.json through kforge and checks its verdict.

Usable on any device: `python3 scripts/check_candidates.py --kforge build/release/kforge --device cuda:0`.
Prints one line per candidate and exits 1 if any verdict differs from the manifest.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def check(kforge: Path, device: str, case: dict, out: Path | None) -> tuple[bool, str]:
    problem = REPO / "problems" / case["problem"] / "problem.py"
    candidate = REPO / "tests" / "candidates" / case["candidate"]
    command = [
        str(kforge),
        "eval",
        "-p",
        str(problem),
        "-c",
        str(candidate),
        "--device",
        device,
        "--json",
        "--trials",
        "2",
        "--timeout",
        "30",
        "--no-perf",
    ]
    if device == "cpu":
        command.append("--small")
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if out is not None:
        (out / f"candidate-{case['candidate']}.json").write_text(result.stdout)
    try:
        verdict = json.loads(result.stdout)
    except json.JSONDecodeError:
        return False, f"no JSON verdict (exit {result.returncode}): {result.stderr[-300:]}"
    stage = next(s for s in verdict["stages"] if s["name"] == case["expect_stage"])
    ok = result.returncode == case["expect_exit"] and stage["status"] == case["expect_status"]
    return ok, f"exit {result.returncode}, {verdict['summary'][:160]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kforge", type=Path, default=REPO / "build" / "release" / "kforge")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", help="comma-separated candidate file names to run (default: all)")
    args = parser.parse_args()
    manifest = json.loads((REPO / "tests" / "candidates" / "manifest.json").read_text())
    if args.only:
        manifest = [case for case in manifest if case["candidate"] in args.only.split(",")]
    failures = 0
    for case in manifest:
        if case.get("gpu_expect") and args.device != "cpu":
            case = {**case, **case["gpu_expect"]}
        ok, detail = check(args.kforge, args.device, case, args.out)
        failures += not ok
        print(f"{'ok  ' if ok else 'MISS'} {case['candidate']:<28} {detail}")
    print(f"{len(manifest) - failures}/{len(manifest)} candidates got their expected verdict")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
