"""Newline-delimited JSON over two inherited pipes, fd 3 (requests in) and fd 4 (responses out).

Stdout and stderr stay free for the code under test: the supervisor captures them as a log.
"""

from __future__ import annotations

import json
import math
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, BinaryIO

REQUEST_FD = 3
RESPONSE_FD = 4
MAX_REQUEST_BYTES = 64 * 1024 * 1024

Handler = Callable[[dict[str, Any]], dict[str, Any]]


class WorkerError(Exception):
    """An expected failure that becomes a structured error response, not a crash."""

    def __init__(self, kind: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details or {}


class Channel:
    """The worker's end of the supervisor's pipes."""

    def __init__(self, request_fd: int = REQUEST_FD, response_fd: int = RESPONSE_FD) -> None:
        self._requests: BinaryIO = os.fdopen(request_fd, "rb", buffering=0)
        self._responses: BinaryIO = os.fdopen(response_fd, "wb", buffering=0)
        self._pending = b""

    def read_request(self) -> dict[str, Any] | None:
        """Return the next request, or None when the supervisor closed the pipe."""
        while b"\n" not in self._pending:
            chunk = self._requests.read(1 << 16)
            if not chunk:
                return None
            self._pending += chunk
            if len(self._pending) > MAX_REQUEST_BYTES:
                raise WorkerError("protocol", "request larger than 64 MiB")
        line, self._pending = self._pending.split(b"\n", 1)
        request = json.loads(line)
        if not isinstance(request, dict) or not isinstance(request.get("op"), str):
            raise WorkerError("protocol", "a request must be a JSON object with a string 'op'")
        return request

    def send(self, response: dict[str, Any]) -> None:
        try:
            text = json.dumps(response, allow_nan=False, separators=(",", ":"))
        except ValueError:  # a NaN or infinity somewhere: send it as null rather than die mid-protocol
            text = json.dumps(_without_nonfinite(response), allow_nan=False, separators=(",", ":"))
        data = text.encode() + b"\n"
        view = memoryview(data)
        while view:
            written = self._responses.write(view)
            view = view[written or 0 :]


def _without_nonfinite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _without_nonfinite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_without_nonfinite(item) for item in value]
    return value


def error_response(kind: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"ok": False, "error": {**(details or {}), "kind": kind, "message": message}}


def serve(handlers: dict[str, Handler], on_exception: Callable[[BaseException], dict[str, Any]]) -> None:
    """Answer requests until 'shutdown' or end of input; every request gets exactly one response."""
    channel = Channel()
    while True:
        try:
            request = channel.read_request()
        except (WorkerError, json.JSONDecodeError) as exc:
            channel.send(error_response("protocol", str(exc)))
            continue
        if request is None:
            return
        op = request["op"]
        if op == "shutdown":
            channel.send({"ok": True})
            return
        handler = handlers.get(op)
        if handler is None:
            channel.send(error_response("protocol", f"unknown op {op!r}; expected one of {sorted(handlers)}"))
            continue
        try:
            response = {"ok": True, **handler(request)}
        except WorkerError as exc:
            response = error_response(exc.kind, exc.message, exc.details)
        except BaseException as exc:  # noqa: BLE001 - the code under test may raise anything, SystemExit too
            response = on_exception(exc)
        channel.send(response)


def internal_error(exc: BaseException) -> dict[str, Any]:
    """Failure of kforge's own worker code: keep the whole traceback for a bug report."""
    text = "".join(traceback.format_exception(exc))
    print(text, file=sys.stderr)
    return error_response("internal", f"{type(exc).__name__}: {exc}", {"traceback": text})
