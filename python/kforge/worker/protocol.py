"""Newline-delimited JSON over two inherited pipes, fd 3 (requests in) and fd 4 (responses out).

Stdout and stderr stay free for the code under test: the supervisor captures them as a log.

A worker that runs untrusted code (the candidate) gets a hidden reply channel: the supervisor's first
line on fd 3 is `{"channel": {"reply_fd": N}}`, a descriptor number chosen at run time (fd 4 stays
closed), and every request then carries a fresh random "nonce" that its reply must echo. The nonce is
taken out of the request before the handler (and so candidate code) sees it; a line the candidate
writes into the channel cannot carry it, and the supervisor rejects such a line as forged.
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
        self._response_fd = response_fd
        self._responses: BinaryIO | None = None  # opened on the first reply (or on the channel line)
        self._pending = b""

    def accept_channel(self, request: dict[str, Any]) -> bool:
        """Takes the supervisor's first line when it names a hidden reply channel; False otherwise."""
        channel = request.get("channel")
        if "op" in request or not isinstance(channel, dict) or self._responses is not None:
            return False
        reply_fd = channel.get("reply_fd")
        if not isinstance(reply_fd, int) or reply_fd <= 2:
            raise WorkerError("protocol", f"the channel line names no usable reply descriptor: {reply_fd!r}")
        self._responses = os.fdopen(reply_fd, "wb", buffering=0)
        return True

    def _response_file(self) -> BinaryIO:
        if self._responses is None:
            self._responses = os.fdopen(self._response_fd, "wb", buffering=0)
        return self._responses

    def read_request(self, allow_channel: bool = False) -> dict[str, Any] | None:
        """Return the next request, or None when the supervisor closed the pipe. allow_channel: the
        first line may be the channel line (see accept_channel)."""
        while b"\n" not in self._pending:
            chunk = self._requests.read(1 << 16)
            if not chunk:
                return None
            self._pending += chunk
            if len(self._pending) > MAX_REQUEST_BYTES:
                raise WorkerError("protocol", "request larger than 64 MiB")
        line, self._pending = self._pending.split(b"\n", 1)
        request = json.loads(line)
        if allow_channel and isinstance(request, dict) and "channel" in request and "op" not in request:
            return request
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
        responses = self._response_file()
        while view:
            written = responses.write(view)
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
    first = True
    while True:
        nonce = None
        try:
            request = channel.read_request(allow_channel=first)
            if request is not None and first and channel.accept_channel(request):
                first = False
                continue
            first = False
            if request is not None:
                nonce = request.pop("nonce", None)  # out of the handler's (and candidate code's) sight
        except (WorkerError, json.JSONDecodeError) as exc:
            channel.send(error_response("protocol", str(exc)))
            continue
        if request is None:
            return
        op = request["op"]
        if op == "shutdown":
            channel.send(_sealed({"ok": True}, nonce))
            return
        handler = handlers.get(op)
        if handler is None:
            message = f"unknown op {op!r}; expected one of {sorted(handlers)}"
            channel.send(_sealed(error_response("protocol", message), nonce))
            continue
        try:
            response = {"ok": True, **handler(request)}
        except WorkerError as exc:
            response = error_response(exc.kind, exc.message, exc.details)
        except BaseException as exc:  # noqa: BLE001 - the code under test may raise anything, SystemExit too
            response = on_exception(exc)
        channel.send(_sealed(response, nonce))


def exit_after_serving() -> None:
    """Ends the worker once serve() has returned: its replies are sent and kforge needs nothing more. The
    interpreter's own teardown (half a second with torch loaded, which kforge waits for before it moves
    on, and any exit hook a candidate registered) is skipped."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _sealed(response: dict[str, Any], nonce: Any) -> dict[str, Any]:
    """The reply with its request's nonce (when the supervisor sealed the channel)."""
    return response if nonce is None else {**response, "nonce": nonce}


def internal_error(exc: BaseException) -> dict[str, Any]:
    """Failure of kforge's own worker code: keep the whole traceback for a bug report."""
    text = "".join(traceback.format_exception(exc))
    print(text, file=sys.stderr)
    return error_response("internal", f"{type(exc).__name__}: {exc}", {"traceback": text})
