"""How far a reference's answer moves when its own Triton autotuner picks another of its configs, so that
an honest candidate is not held to the one config the judge's process happened to choose (docs/verdict.md,
"The reference's own rounding").

An autotuner picks the fastest config in each process by timing, and configs can add in different orders:
a split-K matmul with atomic adds (SPLIT_K 1 or 4), a reduction over blocks of 16 or 1024. TritonBench's
int4_matmul against itself differed in 883 of 131,072 float16 elements by up to 2 (H200): the judge's
process and the candidate's had chosen different configs. When an output fails its comparison, the judge
runs the reference again on the same inputs with each of its tuned autotuners forced to other configs
it ran without failing while tuning (MAX_CONFIGS, spread over the list) and takes the largest distance
from its cached answer as room, as rounding_slack does for float64. The configs are the reference's
own: a candidate cannot add any.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kforge.worker.rounding_slack import RoundingSlack, distance, widest

MAX_CONFIGS = 6  # forced runs at most: each config may compile once on a GPU


def tuned_autotuners() -> list[Any]:
    """The Triton autotuners in this process that chose a config among several."""
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:  # pragma: no cover - Triton is always there in a worker
        return []
    return [
        found
        for found in gc.get_objects()
        if issubclass(type(found), Autotuner) and found.cache and len(found.configs) > 1
    ]


def tried_configs(tuner: Any) -> list[Any]:
    """The configs the autotuner ran on these shapes without failing (its last benchmark's finite
    timings); all its configs where it kept no timings. Only these are forced: a config it pruned or that
    failed to compile might fault on the device."""
    timings = getattr(tuner, "configs_timings", None)
    if not timings:
        return list(tuner.configs)
    return [config for config, times in timings.items() if math.isfinite(_first(times))]


def _first(times: Any) -> float:
    return float(times[0] if isinstance(times, list | tuple) else times)


def spread_picks(count: int, limit: int = MAX_CONFIGS) -> list[int]:
    """Up to `limit` config indices spread over `count` configs, first and last included."""
    if count <= limit:
        return list(range(count))
    return sorted({round(step * (count - 1) / (limit - 1)) for step in range(limit)})


def measured(reference: list[Any], run: Callable[[], list[Any]]) -> list[RoundingSlack | None] | None:
    """Per output, the reference's largest distance from its runs under other configs of its autotuners;
    None when no autotuner in the process chose among configs. `run` calls the reference on the inputs
    `reference` came from. Configs the shapes do not allow (a failed run) are skipped; every autotuner's
    choices are put back."""
    tuners = [(tuner, tried_configs(tuner)) for tuner in tuned_autotuners()]
    tuners = [(tuner, options) for tuner, options in tuners if len(options) > 1]
    if not tuners:
        return None
    chosen = [dict(tuner.cache) for tuner, _ in tuners]
    picks = [[options[index] for index in spread_picks(len(options))] for _, options in tuners]
    room: list[RoundingSlack | None] = [None] * len(reference)
    try:
        for step in range(max(len(configs) for configs in picks)):
            for (tuner, _), cache, configs in zip(tuners, chosen, picks, strict=True):
                tuner.cache.update(dict.fromkeys(cache, configs[step % len(configs)]))
            try:
                other = run()
            except Exception:  # noqa: BLE001 - a config these shapes do not allow: the others still count
                continue
            room = widest(
                room, [distance(ref, other[i] if i < len(other) else None) for i, ref in enumerate(reference)]
            )
    finally:
        for (tuner, _), cache in zip(tuners, chosen, strict=True):
            tuner.cache.clear()
            tuner.cache.update(cache)
    return [replace(slack, measured_against="autotune configs") if slack else None for slack in room]
