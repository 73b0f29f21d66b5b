"""Candidate errors reported with the candidate's own frames only: the rest is kforge and library noise."""

from __future__ import annotations

import traceback

MAX_MESSAGE_CHARS = 4000


def exception_summary(exc: BaseException, candidate_path: str) -> dict[str, object]:
    """Exception type and message plus the frames that point into the candidate's source."""
    frames = [
        {"line": frame.lineno, "function": frame.name, "code": (frame.line or "").strip()}
        for frame in traceback.extract_tb(exc.__traceback__)
        if frame.filename == candidate_path
    ]
    message = str(exc)
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[:MAX_MESSAGE_CHARS] + " [...]"
    lines = [f"  line {f['line']}, in {f['function']}: {f['code']}" for f in frames]
    text = "\n".join([*lines, f"{type(exc).__name__}: {message}"])
    return {"exception": type(exc).__name__, "message": message, "frames": frames, "traceback": text}
