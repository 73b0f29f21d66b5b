"""Module-level size constants of a problem file, set before get_inputs/get_init_inputs read them (--size,
--small). The judge, the profiler, kernel capture and the reference built beside the candidate use it."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from kforge.worker.protocol import WorkerError

SMALL_SIZES_NAME = "KFORGE_SMALL"


def apply_size_overrides(problem: ModuleType, small: bool, overrides: dict[str, Any]) -> dict[str, Any]:
    """Set module-level size constants before get_inputs/get_init_inputs read them."""
    applied: dict[str, Any] = {}
    if small:
        table = getattr(problem, SMALL_SIZES_NAME, None)
        if not isinstance(table, dict):
            raise WorkerError(
                "usage",
                f"--small needs a module-level dict {SMALL_SIZES_NAME} in the problem; "
                "give sizes explicitly with --size NAME=VALUE instead",
            )
        applied.update(table)
    applied.update(overrides)
    for name, value in applied.items():
        current = getattr(problem, name, None)
        if not isinstance(current, (int, float)) or isinstance(current, bool):
            raise WorkerError(
                "usage", f"size override {name}: the problem has no module-level int/float constant {name!r}"
            )
        setattr(problem, name, type(current)(value))
    return applied
