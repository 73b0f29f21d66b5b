"""Markdown table of a gpu-check run: verdict and speedup per starter problem, run 1 against run 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def load(out: Path, run: int, name: str) -> dict | None:
    path = out / f"suite-{run}-{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def perf(verdict: dict | None) -> dict:
    if verdict is None:
        return {}
    return next(s for s in verdict["stages"] if s["name"] == "performance")["details"]


def main() -> int:
    out = Path(sys.argv[1])
    names = sorted({p.name.split("-", 2)[2].removesuffix(".json") for p in out.glob("suite-1-*.json")})
    header = "| problem | verdict | reference ms | candidate ms | speedup run 1 (95% CI) | run 2 | diff |"
    print(header)
    print("|---|---|---|---|---|---|---|")
    for name in names:
        first, second = load(out, 1, name), load(out, 2, name)
        p1, p2 = perf(first), perf(second)
        verdict = first["outcome"] if first else "missing"
        if "speedup" in p1 and "speedup" in p2:
            low, high = p1["speedup_ci95"]
            diff = abs(p1["speedup"] - p2["speedup"]) / p1["speedup"] * 100
            ref_ms, cand_ms = p1["reference"]["median_ms"], p1["candidate"]["median_ms"]
            print(
                f"| {name} | {verdict} | {ref_ms:.4f} | {cand_ms:.4f} "
                f"| {p1['speedup']:.3f} ({low:.3f}-{high:.3f}) | {p2['speedup']:.3f} | {diff:.1f}% |"
            )
        else:
            summary = first["summary"] if first else ""
            print(f"| {name} | {verdict} | | | | | {summary[:80]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
