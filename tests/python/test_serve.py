"""`kforge serve` on the CPU interpreter, started by the test: the /v1 API (docs/api.md), its errors,
the bearer token, rewards on real verdicts, SIGTERM draining and a restart served from the store."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from live_service import Service

STARTER = REPO / "problems" / "starter"
PROBLEM = (STARTER / "01_scaled_add" / "problem.py").read_text()
SOLUTION = (STARTER / "01_scaled_add" / "solution.py").read_text()


@pytest.fixture()
def service(tmp_path: Path) -> Iterator[Service]:
    running = Service(tmp_path)
    yield running
    if running.process.poll() is None:
        running.process.kill()


def test_health_is_open_and_everything_else_needs_the_token(service: Service) -> None:
    status, health = service.call("/v1/health", token=None)
    assert status == 200 and health["status"] == "ok" and health["api"] == "v1"
    status, error = service.call("/v1/problems", {"source": PROBLEM}, token=None)
    assert status == 401 and error["error"]["code"] == "unauthorised"
    status, error = service.call("/v1/problems", {"source": PROBLEM}, token="wrong")
    assert status == 401


def test_register_evaluate_and_rewards(service: Service) -> None:
    status, first = service.call("/v1/problems", {"source": PROBLEM})
    assert status == 200
    status, again = service.call("/v1/problems", {"source": PROBLEM})
    assert again["problem_id"] == first["problem_id"], "registering is idempotent"
    wrong = SOLUTION.replace("alpha * x + y", "alpha * x - y")
    status, job = service.call(
        "/v1/evaluate",
        {
            "problem_id": first["problem_id"],
            "completions": [SOLUTION, "no code here", wrong],
            "reward": "kforge",
        },
    )
    assert status == 200 and job["status"] == "done" and job["done"] == 3
    results = job["results"]
    assert [r["outcome"] for r in results] == ["accepted", "rejected", "rejected"]
    assert [r["reward"]["reward"] for r in results] == pytest.approx([0.5, 0.0, 0.2])
    assert results[2]["failed_stage"] == "correctness"
    status, polled = service.call("/v1/jobs/" + job["job_id"])
    assert status == 200 and polled["results"] == results
    status, queued = service.call(
        "/v1/evaluate",
        {"problem_source": PROBLEM, "completions": [SOLUTION], "reward": "tritonrl", "wait_s": 0},
    )
    assert status == 202 and queued["status"] in ("queued", "running", "done")
    deadline = time.monotonic() + 300
    while service.call("/v1/jobs/" + queued["job_id"])[1]["status"] != "done":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    status, metrics = service.call("/metrics")
    assert status == 200 and 'kforge_evaluations_total{outcome="accepted"' in metrics
    assert "kforge_queue_depth 0" in metrics


@pytest.mark.parametrize(
    ("body", "raw", "status", "code"),
    [
        (None, b"{not json", 400, "bad-json"),
        ({"problem_id": "0123456789abcdef", "completions": ["x"]}, None, 404, "unknown-problem"),
        ({"problem_source": PROBLEM, "completions": []}, None, 400, "bad-request"),
        ({"problem_source": PROBLEM, "completions": [7]}, None, 400, "bad-request"),
        ({"problem_source": PROBLEM, "completions": ["x"], "reward": "best"}, None, 400, "bad-reward"),
        ({"problem_source": PROBLEM, "completions": ["x"], "wait_s": -1}, None, 400, "bad-request"),
        ({"problem_source": PROBLEM, "completions": ["x"], "include_verdict": 1}, None, 400, "bad-request"),
        ({"problem_source": "", "completions": ["x"]}, None, 400, "bad-request"),
    ],
)
def test_bad_requests_get_clear_errors(
    service: Service, body: Any, raw: bytes | None, status: int, code: str
) -> None:
    got, error = service.call("/v1/evaluate", body, raw=raw)
    assert got == status and error["error"]["code"] == code, error
    assert service.call("/v1/health")[0] == 200, "the service is still up"


def test_an_oversized_completion_is_a_rejection_and_the_others_are_judged(service: Service) -> None:
    """A completion over the 1 MiB limit is the policy's fault: rejected at extract, never an error,
    and it does not fail the request for the completions beside it."""
    huge = SOLUTION + "\n#" + "x" * (1 << 20) + "\n"
    status, job = service.call(
        "/v1/evaluate", {"problem_source": PROBLEM, "completions": [huge, "no code here"], "reward": "kforge"}
    )
    assert status == 200 and job["status"] == "done", job
    oversized, no_code = job["results"]
    assert oversized["outcome"] == "rejected" and oversized["failed_stage"] == "extract"
    assert "bytes" in oversized["summary"]
    assert oversized["reward"]["reward"] == pytest.approx(0.0)
    assert no_code["outcome"] == "rejected"


def test_a_body_past_the_limit_is_refused_before_it_is_read(service: Service) -> None:
    with socket.create_connection(("127.0.0.1", service.port), timeout=30) as connection:
        connection.sendall(b"POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n{")
        answer = connection.recv(65536).decode()
    assert answer.startswith("HTTP/1.1 413") and "body-too-large" in answer
    assert service.call("/v1/health")[0] == 200


def test_sigterm_drains_and_a_restart_serves_from_the_store(tmp_path: Path) -> None:
    first = Service(tmp_path)
    _, problem = first.call("/v1/problems", {"source": PROBLEM})
    _, job = first.call("/v1/evaluate", {"problem_id": problem["problem_id"], "completions": [SOLUTION]})
    assert job["results"][0]["outcome"] == "accepted" and not job["results"][0]["from_store"]
    assert first.stop() == 0, first.log_tail()  # once -11 (SIGSEGV) under the full suite's load
    second = Service(tmp_path)
    try:
        status, again = second.call(
            "/v1/evaluate", {"problem_id": problem["problem_id"], "completions": [SOLUTION]}
        )
        assert status == 200, "the registered problem survived the restart"
        assert again["results"][0]["from_store"] is True
    finally:
        assert second.stop() == 0, second.log_tail()


def test_the_openapi_file_describes_every_route() -> None:
    spec = json.loads((REPO / "docs" / "openapi.json").read_text())
    assert spec["openapi"].startswith("3.")
    routes = {"/v1/health", "/v1/problems", "/v1/evaluate", "/v1/jobs/{job_id}", "/metrics"}
    assert set(spec["paths"]) == routes
    formulas = spec["components"]["schemas"]["RewardSpec"]["oneOf"][1]["properties"]["formula"]["enum"]
    assert formulas == ["kforge", "autotriton", "tritonrl", "drkernel", "weighted"]


def metric(text: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    assert match, f"{name} missing from /metrics"
    return float(match.group(1))


def test_judges_stay_warm_across_requests_and_static_rejections_need_none(service: Service) -> None:
    _, problem = service.call("/v1/problems", {"source": PROBLEM})
    for sample in range(2):  # two requests, different completions: the second reuses the first's judge
        _, job = service.call(
            "/v1/evaluate",
            {"problem_id": problem["problem_id"], "completions": [f"{SOLUTION}\n# sample {sample}\n"]},
        )
        assert job["results"][0]["outcome"] == "accepted"
    other = PROBLEM + "\n# another problem, never started\n"
    status, job = service.call(
        "/v1/evaluate",
        {"problem_source": other, "completions": ["no code", "import subprocess\nclass ModelNew: pass\n"]},
    )
    assert status == 200 and [r["failed_stage"] for r in job["results"]] == ["extract", "static"]
    _, metrics = service.call("/metrics")
    assert metric(metrics, "kforge_judge_starts_total") == 1, "one judge served both requests"
    assert metric(metrics, "kforge_judges_alive") == 1, "and is kept warm"
    assert metric(metrics, "kforge_evaluations_screened_total") == 2
    assert metric(metrics, 'kforge_worker_restarts_total{kind="judge"}') == 0
    assert "# TYPE kforge_gpu_lease_busy_seconds_total counter" in metrics
    _, health = service.call("/v1/health")
    assert health["queue_depth"] == 0 and health["evaluations_running"] == 0
