"""Adjustments that let real-world Triton code run under TRITON_INTERPRET=1 on a machine with no GPU."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any

EQUAL_TIMES = [1.0, 1.0, 1.0]


def _no_timing(kernel_call: Callable[[], Any], quantiles: Any = None, **_: Any) -> list[float]:
    """The interpreter's timings mean nothing: report every config as equal, so the first one wins."""
    return EQUAL_TIMES


def prepare_triton_interpreter() -> None:
    """@triton.autotune asks the active GPU driver for a benchmarker, and there is none on the CPU:
    give autotuners without their own do_bench a constant one, so they pick their first config."""
    from triton.runtime.autotuner import Autotuner

    def do_bench(self: Autotuner) -> Callable[..., list[float]]:
        return self._do_bench if self._do_bench is not None else _no_timing

    patched = cached_property(do_bench)
    patched.__set_name__(Autotuner, "do_bench")
    Autotuner.do_bench = patched  # type: ignore[method-assign,assignment]
