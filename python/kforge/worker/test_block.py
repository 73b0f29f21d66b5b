"""The test block of a TritonBench-style kernel file: everything from a line of at least MIN_SEPARATOR
'#' characters (and nothing else) on. kforge's C++ side splits the same way (problem::split_test_block)."""

from __future__ import annotations

MIN_SEPARATOR = 20


def split_test_block(source: str) -> tuple[str, str, int]:
    """The code, the test block and the test block's first line number (0 when there is none)."""
    lines = source.splitlines(keepends=True)
    for number, line in enumerate(lines):
        stripped = line.rstrip()
        if len(stripped) >= MIN_SEPARATOR and set(stripped) == {"#"}:
            return "".join(lines[:number]), "".join(lines[number:]), number + 1
    return source, "", 0
