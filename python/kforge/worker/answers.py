"""How a program worker (run once, its result in a file) answers: the result, or the failure that stopped
it, with a stage (the worker's own StagedError) or "internal" and a trace. Every failure is an answer."""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any


class StagedError(Exception):
    """A failure the worker explains itself: `stage` says where (usage, import, test-block, ...)."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage


def write_answer(out: str | Path, produce: Callable[[], dict[str, Any]], **on_failure: Any) -> int:
    """Writes produce()'s result as JSON to `out`, or the failure with `on_failure`'s fields; returns 0."""
    try:
        result = produce()
    except StagedError as failure:
        result = {**on_failure, "error": str(failure), "stage": failure.stage}
    except Exception as failure:  # noqa: BLE001 - every failure becomes an answer, with its trace
        result = {
            **on_failure,
            "error": f"{type(failure).__name__}: {failure}",
            "stage": "internal",
            "traceback": traceback.format_exc()[-4000:],
        }
    Path(out).write_text(json.dumps(result) + "\n")
    return 0
