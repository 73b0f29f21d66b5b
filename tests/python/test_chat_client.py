"""The chat client the LLM proposer uses (python -m kforge.worker.chat_client), against a scripted
OpenAI-compatible endpoint on loopback: parallel samples, the key from the environment, retries, and a
clear error per sample for everything that can go wrong."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from scripted_chat_endpoint import scripted_endpoint

CLIENT = [sys.executable, "-m", "kforge.worker.chat_client"]
WORKER_ENV = {**os.environ, "PYTHONPATH": str(REPO / "python")}


def chat_client() -> Any:
    """The module itself, for its pure functions (it imports only the standard library)."""
    if str(REPO / "python") not in sys.path:
        sys.path.insert(0, str(REPO / "python"))
    return importlib.import_module("kforge.worker.chat_client")


def run_client(
    tmp_path: Path, request: dict[str, Any], env: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    request_file, out = tmp_path / "request.json", tmp_path / "replies.json"
    request_file.write_text(json.dumps(request))
    environment = {**os.environ, "PYTHONPATH": str(REPO / "python"), **(env or {})}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "kforge.worker.chat_client",
            "--request",
            str(request_file),
            "--out",
            str(out),
        ],
        check=True,
        timeout=60,
        env=environment,
    )
    replies: list[dict[str, Any]] = json.loads(out.read_text())["replies"]
    return replies


def request_for(url: str, n: int = 1) -> dict[str, Any]:
    return {
        "url": url,
        "model": "scripted-model",
        "messages": [{"role": "user", "content": "make it faster"}],
        "n": n,
        "temperature": 0.5,
        "max_tokens": 256,
        "timeout_s": 10,
        "api_key_env": "KFORGE_TEST_LLM_KEY",
        "retry_backoff_s": [0.05, 0.05],
    }


def test_n_samples_are_n_requests_with_the_key_from_the_environment(tmp_path: Path) -> None:
    with scripted_endpoint(lambda index, body: f"reply {index}") as endpoint:
        replies = run_client(tmp_path, request_for(endpoint.url, n=4), {"KFORGE_TEST_LLM_KEY": "sekret"})
    assert sorted(reply["text"] for reply in replies) == ["reply 0", "reply 1", "reply 2", "reply 3"]
    assert len(endpoint.requests) == 4
    assert all(headers["authorization"] == "Bearer sekret" for headers in endpoint.headers)
    body = endpoint.requests[0]
    assert (body["model"], body["temperature"], body["max_tokens"], body["n"]) == (
        "scripted-model",
        0.5,
        256,
        1,
    )
    assert "sekret" not in (tmp_path / "request.json").read_text(), "the key is never written down"


def test_no_key_in_the_environment_sends_no_authorization(tmp_path: Path) -> None:
    with scripted_endpoint(lambda index, body: "ok") as endpoint:
        replies = run_client(tmp_path, request_for(endpoint.url), {"KFORGE_TEST_LLM_KEY": ""})
    assert replies == [{"text": "ok", "seconds": replies[0]["seconds"], "sample": 0}]
    assert "authorization" not in endpoint.headers[0]


def test_a_server_error_is_retried_and_a_client_error_is_not(tmp_path: Path) -> None:
    with scripted_endpoint(lambda index, body: 503 if index == 0 else "after a retry") as endpoint:
        assert run_client(tmp_path, request_for(endpoint.url))[0]["text"] == "after a retry"
    with scripted_endpoint(lambda index, body: 400) as endpoint:
        reply = run_client(tmp_path, request_for(endpoint.url))[0]
    assert reply["error"].startswith("HTTP 400")
    assert len(endpoint.requests) == 1


def test_every_failure_is_an_error_reply(tmp_path: Path) -> None:
    # Nothing listens on port 9 of loopback: the connection is refused (twice retried).
    refused = run_client(tmp_path, {**request_for("http://127.0.0.1:9/v1", n=2), "timeout_s": 2})
    assert len(refused) == 2 and all("cannot reach the endpoint" in reply["error"] for reply in refused)
    assert "http:// or https://" in run_client(tmp_path, request_for("ftp://example/v1"))[0]["error"]
    (tmp_path / "bad.json").write_text("{not json")
    out = tmp_path / "out.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "kforge.worker.chat_client",
            "--request",
            str(tmp_path / "bad.json"),
            "--out",
            str(out),
        ],
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "python")},
    )
    assert "Expecting property name" in json.loads(out.read_text())["replies"][0]["error"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"<html>", "not JSON"),
        (b"[]", "expected a JSON object"),
        (b'{"error": {"message": "model not found"}}', "model not found"),
        (b'{"choices": []}', "non-empty 'choices'"),
        (b'{"choices": [{"message": {"content": null}}]}', "no text content"),
    ],
)
def test_malformed_replies_say_what_they_held(body: bytes, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        chat_client().reply_text(body)


def test_the_address_may_be_the_base_or_the_full_path() -> None:
    assert chat_client().completions_url("http://h:8000/v1") == "http://h:8000/v1/chat/completions"
    assert chat_client().completions_url("http://h:8000/v1/") == "http://h:8000/v1/chat/completions"
    assert (
        chat_client().completions_url("https://api.x/v1/chat/completions")
        == "https://api.x/v1/chat/completions"
    )
