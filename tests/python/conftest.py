"""Shared helpers: run the real kforge binary on the CPU interpreter and read its JSON verdict."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

REPO = Path(__file__).resolve().parents[2]
STARTER = REPO / "problems" / "starter"
CANDIDATES = REPO / "tests" / "candidates"
if str(REPO / "python") not in sys.path:  # the workers' own modules, for the tests that import them
    sys.path.insert(0, str(REPO / "python"))


@dataclass
class EvalRun:
    exit_code: int
    verdict: dict[str, Any]
    stdout: str
    stderr: str

    def stage(self, name: str) -> dict[str, Any]:
        return next(stage for stage in self.verdict["stages"] if stage["name"] == name)


@pytest.fixture(autouse=True, scope="session")
def private_default_store(tmp_path_factory: pytest.TempPathFactory) -> None:
    """kforge's default result store is the user's (~/.cache/kforge): the tests get one of their own,
    so a verdict stored by an earlier run is never served where a test needs an evaluation."""
    os.environ["KFORGE_STORE"] = str(tmp_path_factory.mktemp("default-store") / "results.sqlite")


@pytest.fixture(autouse=True, scope="session")
def warm_judges(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Judges come from a warm fork server (KFORGE_FORK_SERVER, docs/batch.md): about 2 s of CPU saved per
    evaluation, which is what keeps the test command within its time. Each pytest-xdist worker has its
    own servers, stopped at the end. KFORGE_TEST_FRESH_WORKERS=1 starts every judge fresh instead."""
    if os.environ.get("KFORGE_TEST_FRESH_WORKERS") == "1":
        yield
        return
    folder = tmp_path_factory.mktemp("fork-servers")
    os.environ["KFORGE_FORK_SERVER"] = str(folder)
    yield
    for lock in folder.glob("*.lock"):
        with contextlib.suppress(ValueError, OSError):
            os.kill(int(lock.read_text().split()[0]), signal.SIGTERM)


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


def run_on_the_interpreter(code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh Python with TRITON_INTERPRET=1 and kforge's workers importable, as a CPU
    candidate runs; a check that passes prints "ok"."""
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO / "python")}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def starter_problems() -> list[Path]:
    return sorted(path for path in STARTER.iterdir() if (path / "problem.py").exists())


def computed_once(
    factory: pytest.TempPathFactory, name: str, compute: Callable[[Path], dict[str, Any]]
) -> dict[str, Any]:
    """`compute(folder)` once per test run however many pytest-xdist workers ask for it: the first
    computes under a lock and leaves the JSON, the others wait for it and read it (a module fixture
    would run once per worker that gets one of the module's tests)."""
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # this run's, not older runs'
    target = shared / f"{name}.json"
    with FileLock(f"{target}.lock"):
        if target.exists():
            cached: dict[str, Any] = json.loads(target.read_text())
            return cached
        folder = shared / name
        folder.mkdir(exist_ok=True)
        result = compute(folder)
        target.write_text(json.dumps(result))
        return result
