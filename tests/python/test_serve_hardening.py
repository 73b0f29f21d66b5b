"""`kforge serve` against a hostile client (issue 34, docs/threat-model.md "The reward service"): a
client's problem code runs in the sandbox, browser-style requests are refused, the token file is read
forgivingly, hanging candidates free their evaluation slots after the derived call limit, rejections
before routing are counted, and bad problem sources and reward specs get a 400 naming the field."""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, STARTER, kforge_binary
from live_service import TOKEN, Service

PROBLEM = (STARTER / "01_scaled_add" / "problem.py").read_text()
SOLUTION = (STARTER / "01_scaled_add" / "solution.py").read_text()
HANGS = (REPO / "tests" / "candidates" / "hangs_sleeping.py").read_text()  # a hang that leaves the CPU


def hostile_problem(action: str) -> str:
    """01_scaled_add's problem with `action` run at import: what a client could send as its problem."""
    return f"import os, socket\n{action}\n{PROBLEM}"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    running = Service(tmp_path_factory.mktemp("serve-hardening"), "-j", "2")
    yield running
    if running.process.poll() is None:
        running.stop()


def raw_call(service: Service, path: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(f"http://127.0.0.1:{service.port}{path}", data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def only_result(job: dict[str, Any]) -> dict[str, Any]:
    assert job["status"] == "done", job
    (result,) = job["results"]
    return result


@pytest.mark.parametrize(
    ("name", "action", "evidence"),
    [
        ("write", "open('{outside}', 'w').write(str(os.getuid()))", "PermissionError"),
        ("socket", "socket.create_connection(('127.0.0.1', {port}), timeout=5)", "PermissionError"),
        ("signal", "os.kill(os.getppid(), 9)", "PermissionError"),
    ],
)
def test_a_clients_problem_code_runs_in_the_sandbox(
    service: Service, tmp_path: Path, name: str, action: str, evidence: str
) -> None:
    outside = tmp_path / f"written-by-{name}"
    source = hostile_problem(action.format(outside=outside, port=service.port))
    status, job = service.call("/v1/evaluate", {"problem_source": source, "completions": [SOLUTION]})
    assert status == 200
    result = only_result(job)
    assert result["outcome"] == "error" and result["reward"]["reward"] is None, result
    assert evidence in result["summary"] and "import" in result["summary"], result["summary"]
    assert not outside.exists(), "the problem wrote outside its folder"
    assert service.call("/v1/health")[0] == 200, "the service is still up"


def test_a_clients_problem_is_judged_in_the_sandbox_and_a_trusted_one_is_not(tmp_path: Path) -> None:
    running = Service(tmp_path, "--trusted-problems", str(STARTER))
    try:
        own = PROBLEM + "\n# a client's copy, not the operator's file\n"
        for source, sandboxed in ((own, True), (PROBLEM, False)):
            status, job = running.call(
                "/v1/evaluate", {"problem_source": source, "completions": [SOLUTION], "include_verdict": True}
            )
            assert status == 200
            result = only_result(job)
            assert result["outcome"] == "accepted", result["summary"]
            judge = result["verdict"]["problem"].get("judge_sandbox")
            if sandboxed:
                assert judge["layers"]["landlock"].startswith("on"), judge
                assert judge["layers"]["seccomp"].startswith("on"), judge
            else:
                assert judge is None, "the operator's own problem keeps a trusted judge"
    finally:
        running.stop()


def test_browser_style_requests_are_refused(service: Service) -> None:
    body = json.dumps({"source": PROBLEM}).encode()
    auth = {"Authorization": f"Bearer {TOKEN}"}
    status, error = raw_call(service, "/v1/problems", body, {**auth, "Content-Type": "text/plain"})
    assert status == 415 and error["error"]["code"] == "unsupported-media-type"
    json_type = {**auth, "Content-Type": "application/json"}
    status, error = raw_call(service, "/v1/problems", body, {**json_type, "Origin": "http://evil.example"})
    assert status == 403 and error["error"]["code"] == "cross-origin"
    status, error = raw_call(service, "/v1/problems", body, {**json_type, "Sec-Fetch-Site": "cross-site"})
    assert status == 403 and error["error"]["code"] == "cross-origin"
    own_origin = {**json_type, "Origin": f"http://127.0.0.1:{service.port}"}
    assert raw_call(service, "/v1/problems", body, own_origin)[0] == 200, "the service's own origin is fine"
    lower = {"Content-Type": "application/json; charset=utf-8", "Authorization": f"bearer   {TOKEN}"}
    assert raw_call(service, "/v1/problems", body, lower)[0] == 200, "RFC 7235: the scheme in any case"


@pytest.mark.parametrize(
    ("body", "code", "named"),
    [
        ({"source": "x = 1\n"}, "bad-problem", "'source'"),
        ({"source": "<html>not python</html>"}, "bad-problem", "'source'"),
        ({"source": PROBLEM.replace("class Model(", "class Reference(")}, "bad-problem", "Model"),
    ],
)
def test_bad_problem_sources_are_refused(
    service: Service, body: dict[str, Any], code: str, named: str
) -> None:
    status, error = service.call("/v1/problems", body)
    assert status == 400 and error["error"]["code"] == code and named in error["error"]["message"], error


def test_bad_inline_problem_and_misplaced_penalty_are_refused(service: Service) -> None:
    status, error = service.call("/v1/evaluate", {"problem_source": "def (", "completions": [SOLUTION]})
    assert status == 400 and "'problem_source'" in error["error"]["message"], error
    _, problem = service.call("/v1/problems", {"source": PROBLEM})
    for formula in ("drkernel", "tritonrl", "autotriton"):
        status, error = service.call(
            "/v1/evaluate",
            {
                "problem_id": problem["problem_id"],
                "completions": [SOLUTION],
                "reward": {"formula": formula, "cheating_penalty": -2},
            },
        )
        assert status == 400 and error["error"]["code"] == "bad-reward", error
        assert "cheating_penalty" in error["error"]["message"]


def metric_value(text: str, line_start: str) -> float:
    for line in text.splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_rejections_before_routing_are_counted(service: Service) -> None:
    def exchange(raw: bytes) -> str:
        with socket.create_connection(("127.0.0.1", service.port), timeout=30) as connection:
            connection.sendall(raw)
            return connection.recv(65536).decode(errors="replace")

    _, before = service.call("/metrics")
    assert exchange(b"NOT HTTP AT ALL\r\n\r\n").startswith("HTTP/1.1 400")
    assert exchange(b"POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n{").startswith(
        "HTTP/1.1 413"
    )
    big = b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n"
    assert exchange(big).startswith("HTTP/1.1 431")
    _, after = service.call("/metrics")
    for status, code in (("400", "bad-request"), ("413", "body-too-large"), ("431", "headers-too-large")):
        name = f'kforge_http_rejected_total{{status="{status}",code="{code}"}}'
        assert metric_value(after, name) == metric_value(before, name) + 1, name


def test_hanging_candidates_free_their_slots_after_the_derived_limit(service: Service) -> None:
    """Two slots (-j 2), --timeout 60 (the upper bound): two hanging candidates first in the queue, two
    honest ones behind them. The hangs are stopped after the limit derived from the reference's time (the
    CPU floor, 10 s), not the upper bound, and the honest ones run in the slots they free."""
    hang = HANGS + "\n# made unique\n"
    started = time.monotonic()
    status, job = service.call(
        "/v1/evaluate",
        {
            "problem_source": PROBLEM + "\n# hang test\n",
            "completions": [hang, hang + "#2\n", SOLUTION, SOLUTION + "# 2\n"],
            "include_verdict": True,
        },
    )
    elapsed = time.monotonic() - started
    assert status == 200
    results = job["results"]
    for hung in results[:2]:
        assert hung["outcome"] == "rejected" and hung["failed_stage"] == "correctness", hung["summary"]
        limits = hung["verdict"]["settings"]["call_limits"]
        assert limits["upper_s"] == 60 and limits["candidate_call_s"] == limits["floor_s"], limits
        stages = {stage["name"]: stage for stage in hung["verdict"]["stages"]}
        findings = stages["correctness"]["findings"]
        assert [f["rule"] for f in findings] == ["timeout"], findings
        assert f"within {limits['first_call_s']:.0f} s" in hung["summary"], hung["summary"]  # trial 0
        # Killed at the derived limit, before the upper bound (room for a busy 2-core machine).
        assert hung["seconds"] < limits["upper_s"], hung["seconds"]
    assert [r["outcome"] for r in results[2:]] == ["accepted", "accepted"]
    assert elapsed < 2 * 60, "the honest ones did not wait for an upper-bound timeout per hang"
    _, health = service.call("/v1/health")
    assert health["evaluations_running"] == 0 and health["queue_depth"] == 0


def test_a_token_file_with_crlf_works_and_an_empty_one_is_refused(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_bytes(b"crlf-token-42\r\n")
    process = subprocess.Popen(
        [str(kforge_binary()), "serve", "--port", "0", "--device", "cpu", "--store", str(tmp_path / "s.db"),
         "--token-file", str(token_file), "--python", str(REPO / ".venv" / "bin" / "python")],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        port = wait_for_port(process)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/metrics", headers={"Authorization": "Bearer crlf-token-42"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200
    finally:
        process.terminate()
        process.wait(timeout=60)
    token_file.write_text(" \r\n")
    empty = subprocess.run(
        [str(kforge_binary()), "serve", "--port", "0", "--device", "cpu", "--no-store",
         "--token-file", str(token_file)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert empty.returncode != 0 and "empty" in empty.stderr, empty.stderr


def test_the_quick_start_writes_a_private_token(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [str(kforge_binary()), "serve", "--port", "0", "--device", "cpu", "--store", str(tmp_path / "s.db"),
         "--python", str(REPO / ".venv" / "bin" / "python")],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        port = wait_for_port(process)
        token_file = tmp_path / "serve-token"
        assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
        token = token_file.read_text().strip()
        assert len(token) == 64
        request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 401
        request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200
    finally:
        process.terminate()
        process.wait(timeout=60)


def wait_for_port(process: subprocess.Popen[str]) -> int:
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    seen = ""
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        seen += line
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if match:
            return int(match.group(1))
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"kforge serve did not start:\n{seen}")
