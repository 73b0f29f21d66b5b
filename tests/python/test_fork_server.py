"""The warm fork server (KFORGE_FORK_SERVER): judges forked from a process that imported torch once give the
verdicts fresh ones give (kernel mode's wrapper probe too), and the server starts nothing for a sandboxed
peer, another environment, or a module other than the judge and the kernel capture."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, STARTER, kforge_binary

PR_SET_NO_NEW_PRIVS = 38


def wait_for(path: Path, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} did not appear within {seconds:.0f} s"
        time.sleep(0.2)


def stop_servers(folder: Path) -> None:
    for lock in folder.glob("*.lock"):
        with contextlib.suppress(ValueError, OSError):
            os.kill(int(lock.read_text().split()[0]), signal.SIGTERM)


def evaluate(server_folder: Path, *what: str) -> dict[str, Any]:
    """`kforge eval` of `what` (default: the first starter problem's solution), small, on the CPU."""
    problem = STARTER / "01_scaled_add"
    what = what or ("--problem", str(problem / "problem.py"), "--candidate", str(problem / "solution.py"))
    run = subprocess.run(
        [str(kforge_binary()), "eval", *what, "--device", "cpu", "--small", "--no-store", "--json"],
        env={**os.environ, "KFORGE_FORK_SERVER": str(server_folder)}, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    verdict: dict[str, Any] = json.loads(run.stdout)
    return verdict


def test_a_second_evaluation_takes_its_judge_from_the_server_with_the_same_verdict(tmp_path: Path) -> None:
    folder = tmp_path / ("a-name-long-enough-that-the-socket-path-passes-107-bytes-" * 2)  # AF_UNIX bound
    try:
        first = evaluate(folder)  # starts a server for the judge's environment; this judge starts fresh
        sockets = list(folder.glob("judge-*.sock.lock"))
        assert len(sockets) <= 1
        socket_path = folder / next(folder.glob("judge-*.sock.log")).name.removesuffix(".log")
        wait_for(socket_path)
        second = evaluate(folder)
        log = (folder / f"{socket_path.name}.log").read_text()
    finally:
        stop_servers(folder)
    assert first["outcome"] == second["outcome"] == "accepted", (first["summary"], second["summary"])
    assert [stage["status"] for stage in first["stages"]] == [stage["status"] for stage in second["stages"]]
    assert log.count("forked kforge.worker.judge") == 1, log
    assert oct(folder.stat().st_mode & 0o777) == "0o700"


KERNELS = REPO / "problems" / "kernels"
SCALED_ADD_RELU = ("--kernel", str(KERNELS / "scaled_add_relu.py"), "--entry", "scaled_add_relu",
                   "--inputs", str(KERNELS / "scaled_add_relu.inputs.json"))  # fmt: skip


def test_kernel_modes_wrapper_probe_is_forked_too_with_the_same_verdict(tmp_path: Path) -> None:
    folder = tmp_path / "servers"
    try:
        # The first starts a server for the judge's environment and one for the probe's.
        first = evaluate(folder, *SCALED_ADD_RELU)
        for log in folder.glob("judge-*.sock.log"):
            wait_for(folder / log.name.removesuffix(".log"))
        second = evaluate(folder, *SCALED_ADD_RELU)
        logs = "".join(log.read_text() for log in folder.glob("judge-*.sock.log"))
    finally:
        stop_servers(folder)
    assert first["outcome"] == second["outcome"] == "accepted", (first["summary"], second["summary"])
    assert [stage["status"] for stage in first["stages"]] == [stage["status"] for stage in second["stages"]]
    assert logs.count("forked kforge.worker.kernel_capture") == 1, logs
    assert logs.count("forked kforge.worker.judge") == 1, logs


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A fork server started by hand with a judge-like environment, and that environment."""
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO / "python"),
        "PYTHONUNBUFFERED": "1",
        "TRITON_INTERPRET": "1",
        "CUDA_VISIBLE_DEVICES": "",
        "TMPDIR": str(tmp_path),
    }
    socket_path = tmp_path / "s.sock"
    process = subprocess.Popen(
        [sys.executable, "-X", "faulthandler", "-m", "kforge.worker.fork_server",
         "--socket", str(socket_path), "--idle", "120"],
        env=environment, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for(socket_path)
        yield socket_path, environment
    finally:
        process.terminate()
        process.wait(timeout=30)


def ask(socket_path: Path, request: dict[str, Any], fds: list[int]) -> tuple[socket.socket, dict[str, Any]]:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(str(socket_path))
    socket.send_fds(connection, [json.dumps(request).encode() + b"\n"], fds)
    reply = connection.makefile("rb").readline()
    return connection, json.loads(reply)


def judge_request(environment: dict[str, str], folder: Path, module: str = "judge") -> dict[str, Any]:
    return {
        "executable": sys.executable,
        "arguments": ["-X", "faulthandler", "-m", f"kforge.worker.{module}"],
        "environment": [[name, value] for name, value in {**environment, "TMPDIR": str(folder)}.items()],
        "working_directory": str(folder),
    }


def test_a_judge_forked_by_the_server_serves_and_its_exit_status_comes_back(
    server: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    socket_path, environment = server
    log = open(tmp_path / "judge.log", "wb")  # noqa: SIM115 - handed to the server, closed below
    requests_read, requests_write = os.pipe()
    replies_read, replies_write = os.pipe()
    connection, reply = ask(
        socket_path, judge_request(environment, tmp_path), [log.fileno(), requests_read, replies_write]
    )
    for fd in (requests_read, replies_write):
        os.close(fd)
    log.close()
    assert isinstance(reply.get("pid"), int), reply
    os.write(requests_write, b'{"op": "bogus"}\n')
    with os.fdopen(replies_read, "rb") as replies:
        answer = json.loads(replies.readline())
    assert answer["ok"] is False and "bogus" in json.dumps(answer), answer  # a live judge answered
    os.close(requests_write)  # end of input: the judge exits
    status = json.loads(connection.makefile("rb").readline())
    assert os.waitstatus_to_exitcode(status["status"]) == 0, (tmp_path / "judge.log").read_text()


def declined(socket_path: Path, request: dict[str, Any]) -> str:
    fds = [os.open(os.devnull, os.O_RDONLY) for _ in range(3)]
    try:
        connection, reply = ask(socket_path, request, fds)
        connection.close()
    finally:
        for fd in fds:
            os.close(fd)
    assert "pid" not in reply, reply
    return str(reply["declined"])


def test_the_server_declines_another_environment_and_other_modules(
    server: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    socket_path, environment = server
    changed = judge_request({**environment, "PYTHONPATH": str(tmp_path)}, tmp_path)
    assert declined(socket_path, changed) == "another environment"
    assert "is not one of" in declined(socket_path, judge_request(environment, tmp_path, "candidate"))
    other_interpreter = {**judge_request(environment, tmp_path), "executable": "/bin/sh"}
    assert declined(socket_path, other_interpreter) == "another interpreter"
    assert "is not one of" in declined(socket_path, judge_request(environment, tmp_path, "zygote"))
    malformed = {**judge_request(environment, tmp_path), "environment": [["A_NAME_WITHOUT_A_VALUE"]]}
    assert declined(socket_path, malformed).startswith("ValueError")
    assert declined(socket_path, changed) == "another environment", "the server serves on after a bad request"


def test_the_server_declines_a_sandboxed_peer(server: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """A candidate has no_new_privs (and seccomp) on: one that reached the socket starts nothing."""
    socket_path, environment = server
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        code = 1
        try:
            os.close(read_end)
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
            os.write(write_end, declined(socket_path, judge_request(environment, tmp_path)).encode())
            code = 0
        except BaseException as exc:  # noqa: BLE001 - reaches the assertion below through the pipe
            os.write(write_end, repr(exc).encode())
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as answer:
        why = answer.read().decode()
    _, status = os.waitpid(child, 0)
    assert why == "the peer is sandboxed"
    assert os.waitstatus_to_exitcode(status) == 0
