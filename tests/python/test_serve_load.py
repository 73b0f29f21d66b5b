"""The load and fault benchmark (bench/serve_load) in reduced form against a live `kforge serve` on the CPU:
600 requests at 200/s, a third of them malformed or hostile, plus candidates that reach the engine and
hang (2), crash (2) or fork (1). Asserts behaviour, never timings: every request answered with a status
and JSON, no failures, no lost job, the service healthy until SIGTERM and exiting 0, its memory bounded,
and a restart on the same store answering from the store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, kforge_binary

# A load test: runs alone (200 requests/s, a connection flood, machine-wide process checks), by
# scripts/test-load, which CI runs after scripts/test.
pytestmark = [pytest.mark.serial, pytest.mark.load]

BENCH = REPO / "bench" / "serve_load" / "serve_load.py"
PROBLEM = (REPO / "problems" / "starter" / "01_scaled_add" / "problem.py").read_text()


def run_bench(folder: Path, *load_args: str, timeout: float) -> dict[str, Any]:
    """Runs `serve_load.py load` against a fresh CPU service; its JSON report, with its output."""
    out = folder / "report.json"
    command = [
        sys.executable, str(BENCH), "load", "--kforge", str(kforge_binary()),
        "--python", str(REPO / ".venv" / "bin" / "python"), "--device", "cpu", "--timeout", "5",
        *load_args, "--workdir", str(folder / "work"), "--json-out", str(out),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if not out.exists():
        pytest.fail(
            f"the benchmark wrote no report (exit {result.returncode}):\n{result.stdout}\n{result.stderr}"
        )
    document: dict[str, Any] = json.loads(out.read_text())
    document["_output"] = result.stdout + result.stderr
    return document


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_bench(
        tmp_path_factory.mktemp("serve-load"),
        "--requests", "600", "--rate", "200", "--real", "1", "--hangs", "2", "--crashes", "2", "--forks", "1",
        "--fork-processes", "16", "--flood", "520", "--jobs-deadline", "90",
        timeout=240,
    )  # fmt: skip


def test_every_request_is_answered_with_a_status_and_json(report: dict[str, Any]) -> None:
    everything = report["requests"]["all"]
    assert everything["sent"] == 600 and everything["answered"] == 600, report["_output"]
    assert everything["failed"] == 0 and everything["unexpected"] == 0, report["not_ok"]
    assert report["requests"]["follow_up_polls"]["failed"] == 0, report["not_ok"]
    hostile = report["requests"]["hostile"]["sent"]
    assert 0.25 * 600 < hostile < 0.45 * 600, "about a third of the mix is malformed or hostile"
    for case in ("static-reject", "bad-json", "truncated-body", "oversize-body", "slow-loris", "no-token"):
        assert report["categories"][case]["sent"] > 0, f"the mix has no {case} request"
    assert report["static_rejections"]["requests"] > 0


def test_no_job_is_lost_and_hostile_candidates_end(report: dict[str, Any]) -> None:
    jobs = report["jobs"]
    assert jobs["submitted"] == 6 and jobs["lost"] == 0, jobs["lost_details"]
    kinds = {row["kind"]: row for row in jobs["candidates"]}
    assert kinds["real-solution"]["outcome"] == "accepted"
    for kind in ("hang-kernel", "hang-helper", "crash-abort", "crash-os-exit"):
        assert kinds[kind]["outcome"] == "rejected", kinds[kind]
        assert kinds[kind]["failed_stage"] == "correctness", kinds[kind]
    assert "fork-leave" in kinds
    assert jobs["fork_processes_left"] == 0, "the processes a candidate started outlived its evaluation"


def test_the_service_stays_up_within_memory_and_stops_cleanly(report: dict[str, Any]) -> None:
    service = report["service"]
    assert service["stayed_up"] and service["health_at_end"] == 200, service
    assert service["sigterm_exit"] == 0, (service, service.get("log_tail"))  # the tail names a fault
    assert report["memory"]["samples"] > 0
    assert report["memory"]["service_mib"]["peak"] < 1024, report["memory"]
    flood = report["flood"]
    assert flood["ok"], flood


def test_a_restart_on_the_same_store_answers_from_it(report: dict[str, Any]) -> None:
    restart = report["restart"]
    assert restart["ok"], restart
    first = restart["checked"][0]
    assert first["kind"] == "real-solution" and first["from_store"] is True, restart
    assert restart["sigterm_exit"] == 0


def test_handler_threads_do_not_each_keep_freed_memory(tmp_path: Path) -> None:
    """1,000 static rejections on the service's handler pool (bounded, most recently idle thread first):
    the allocator's per-thread caches are released when a thread idles, so the service stays near its
    working set instead of growing with every thread that served a request (200 MiB and more with
    jemalloc's caches kept), and after the load its idle handler threads end."""
    report = run_bench(
        tmp_path,
        "--requests", "1000", "--rate", "200", "--only", "static-reject", "--real", "0", "--hangs", "0",
        "--crashes", "0", "--forks", "0", "--flood", "0", "--rss-limit-mib", "4096", "--idle-s", "12",
        timeout=150,
    )  # fmt: skip
    assert report["requests"]["all"]["answered"] == 1000, report["_output"]
    assert report["categories"]["static-reject"]["sent"] == 1000
    assert report["memory"]["service_mib"]["peak"] < 140, report["memory"]
    threads, idle = report["memory"]["service_threads"], report["memory_after_idle"]
    assert threads["peak"] <= threads["start"] + 64, "at most 64 handler threads"
    assert idle["service_threads_after_idle"] <= threads["start"], "idle handler threads end"
