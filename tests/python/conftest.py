"""Shared helpers: run the real kforge binary on the CPU interpreter and read its JSON verdict."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
STARTER = REPO / "problems" / "starter"
CANDIDATES = REPO / "tests" / "candidates"


@dataclass
class EvalRun:
    exit_code: int
    verdict: dict[str, Any]
    stdout: str
    stderr: str

    def stage(self, name: str) -> dict[str, Any]:
        return next(stage for stage in self.verdict["stages"] if stage["name"] == name)


def kforge_binary() -> Path:
    configured = os.environ.get("KFORGE_BIN")
    binary = Path(configured) if configured else REPO / "build" / "release" / "kforge"
    if not binary.exists():
        pytest.fail(f"kforge binary not found at {binary}: build it with scripts/setup or set KFORGE_BIN")
    return binary


def run_kforge(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(kforge_binary()), *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def run_eval(problem: Path, candidate: Path, *extra: str, device: str = "cpu") -> EvalRun:
    """kforge eval --json on the CPU at the problem's small sizes, with a short per-call timeout."""
    args = ["eval", "--problem", str(problem), "--candidate", str(candidate), "--device", device, "--json"]
    if "--size" not in extra and "--no-small" not in extra:
        args.append("--small")
    if "--timeout" not in extra:
        args += ["--timeout", "20"]
    if "--store" not in extra:
        args.append("--no-store")  # each test evaluates for real; the store has tests of its own
    args += [arg for arg in extra if arg != "--no-small"]
    result = run_kforge(*args)
    try:
        verdict = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"kforge printed no JSON (exit {result.returncode}):\n{result.stdout}\n{result.stderr}")
    return EvalRun(result.returncode, verdict, result.stdout, result.stderr)


def starter_problems() -> list[Path]:
    return sorted(path for path in STARTER.iterdir() if (path / "problem.py").exists())
