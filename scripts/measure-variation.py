#!/usr/bin/env python3
"""The relative-variation criterion's distribution on honest code (docs/verdict.md, "Variation").

Runs the prebuilt kforge over the honest corpus entries, the starter and baseline suites' reference
solutions and the kernel-mode suite, collects every compared output's ||out - ref|| / ||ref - mean(ref)||
(`rel_variation_error`) with its dtype, and prints per dtype: how many outputs were checked, the largest
ratios (with the candidate), percentiles, and how many were skipped and why.

    scripts/measure-variation.py [--device cpu|cuda:0] [--full-size] [--jobs N] [--out DIR]

Uses only the standard library and the kforge binary (KFORGE_BIN, default build/release/kforge).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
KFORGE = os.environ.get("KFORGE_BIN", str(REPO / "build" / "release" / "kforge"))


def run(args: list[str], timeout: float = 3600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KFORGE, *args], capture_output=True, text=True, timeout=timeout, check=False)


def verdicts_of_results(path: Path) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for line in path.read_text().splitlines():
        if line.strip():
            result = json.loads(line)
            name = f"{result.get('problem', '?')}/{Path(str(result.get('candidate', 'solution.py'))).name}"
            found.append((str(name), result.get("verdict", {})))
    return found


def batch(kind: list[str], out: Path, name: str, common: list[str]) -> list[tuple[str, dict[str, Any]]]:
    results = out / f"{name}.jsonl"
    done = run(["bench", *kind, *common, "--results", str(results), "--no-store", "--json"])
    if not results.exists():
        print(
            f"{name}: kforge bench wrote no results ({done.returncode}): {done.stderr[-2000:]}",
            file=sys.stderr,
        )
        return []
    return verdicts_of_results(results)


def kernel_verdict(kernel: Path, common: list[str]) -> tuple[str, dict[str, Any]]:
    done = run(
        [
            *("eval", "--kernel", str(kernel), "--entry", kernel.stem),
            *("--inputs", str(kernel.with_suffix(".inputs.json")), "--no-store", "--json"),
            *common,
        ]
    )
    try:
        return kernel.stem, json.loads(done.stdout)
    except json.JSONDecodeError:
        return kernel.stem, {"summary": done.stderr[-500:]}


def corpus_verdict(entry: dict[str, Any], common: list[str]) -> tuple[str, dict[str, Any]]:
    problem = REPO / "problems" / entry["problem"] / "problem.py"
    candidate = REPO / "tests" / "corpus" / entry["candidate"]
    done = run(
        ["eval", "--problem", str(problem), "--candidate", str(candidate), "--no-store", "--json", *common]
    )
    try:
        return entry["candidate"], json.loads(done.stdout)
    except json.JSONDecodeError:
        return entry["candidate"], {"summary": done.stderr[-500:]}


def outputs_of(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    outputs = []
    for stage in verdict.get("stages", []):
        if stage.get("name") == "correctness":
            for trial in stage.get("details", {}).get("trials", []):
                outputs.extend(trial.get("outputs", []))
    return outputs


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--full-size", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default=os.environ.get("OUT", "out/measure-variation"))
    arguments = parser.parse_args()
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    sizes = ["--full-size"] if arguments.full_size else []
    common = ["--device", arguments.device, "-j", str(arguments.jobs), *sizes]
    verdicts: list[tuple[str, dict[str, Any]]] = []
    for suite in ("starter", "baseline"):
        verdicts += batch([str(REPO / "problems" / suite)], out, suite, common)
    one = ["--device", arguments.device, *([] if arguments.full_size else ["--small"])]
    manifest = json.loads((REPO / "tests" / "corpus" / "manifest.json").read_text())
    honest = [entry for entry in manifest if entry["class"] == "honest" and not entry.get("gpu_only")]
    kernels = sorted((REPO / "problems" / "kernels").glob("*.py"))
    with ThreadPoolExecutor(max_workers=arguments.jobs) as pool:
        verdicts += list(pool.map(lambda entry: corpus_verdict(entry, one), honest))
        verdicts += list(pool.map(lambda kernel: kernel_verdict(kernel, one), kernels))

    ratios: dict[str, list[tuple[float, str]]] = defaultdict(list)
    skipped: dict[str, int] = defaultdict(int)
    not_accepted = []
    for name, verdict in verdicts:
        if verdict.get("outcome") != "accepted":
            not_accepted.append((name, verdict.get("outcome"), verdict.get("summary", "")[:160]))
        for output in outputs_of(verdict):
            if output.get("rel_variation_error") is None:
                skipped[f"{output.get('dtype')}: {output.get('variation', 'no field')}"] += 1
            else:
                ratios[str(output["dtype"])].append((float(output["rel_variation_error"]), name))
    report: dict[str, Any] = {"device": arguments.device, "full_size": arguments.full_size, "dtypes": {}}
    print(
        f"{len(verdicts)} evaluations on {arguments.device}{' at full size' if arguments.full_size else ''}"
    )
    for dtype, values in sorted(ratios.items()):
        values.sort(reverse=True)
        ordered = sorted(value for value, _ in values)

        def percentile(q: float, ordered: list[float] = ordered) -> float:
            return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

        entry = {
            "outputs": len(values),
            "max": values[0][0],
            "p99": percentile(0.99),
            "p50": percentile(0.5),
            "largest": [{"ratio": value, "candidate": name} for value, name in values[:5]],
        }
        report["dtypes"][dtype] = entry
        print(
            f"{dtype:>10}: {len(values)} outputs, max {values[0][0]:.3g} ({values[0][1]}), "
            f"p99 {entry['p99']:.3g}, median {entry['p50']:.3g}"
        )
    report["skipped"] = dict(skipped)
    report["not_accepted"] = not_accepted
    for reason, count in sorted(skipped.items()):
        print(f"  skipped {count}: {reason}")
    for name, outcome, summary in not_accepted:
        print(f"  NOT ACCEPTED {name}: {outcome}: {summary}")
    (out / "variation-report.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0 if not not_accepted else 1


if __name__ == "__main__":
    sys.exit(main())
