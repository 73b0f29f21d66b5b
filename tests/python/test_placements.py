"""The placements a timed call rotates through (kforge/worker/placements.py, issue 31)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from kforge.worker.placements import (
    MAX_PLACEMENTS,
    PLACEMENT_BYTES,
    KeptOutputs,
    RotatingInputs,
    placement_count,
)
from kforge.worker.reference_timing import ShadowedReference
from kforge.worker.timed_outputs import tensor_bytes


def test_small_inputs_get_every_placement_and_large_ones_fewer() -> None:
    assert placement_count(4096) == MAX_PLACEMENTS
    assert placement_count(PLACEMENT_BYTES // 2) == 3  # two extra copies fit the budget
    assert placement_count(PLACEMENT_BYTES) == 2
    assert placement_count(4 * PLACEMENT_BYTES) == 1, "a call this large spans too many pages to matter"


def test_tensor_bytes_counts_the_tensors_of_nested_values() -> None:
    """The one byte count the judge, the capture and the placements share (top-level tensors only, in two
    of them before, undercounted a wrapper's list or dict arguments)."""
    four_floats = torch.zeros(4, dtype=torch.float32)
    six_halves = torch.zeros(2, 3, dtype=torch.float16)
    assert tensor_bytes([four_floats, [six_halves, {"again": four_floats}], 7, "text"]) == 16 + 12 + 16
    assert tensor_bytes(six_halves) == 12
    assert tensor_bytes([1, 2.0, None]) == 0


def test_the_variable_sets_the_count_and_a_bad_value_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KFORGE_TIMING_PLACEMENTS", "1")
    assert placement_count(4096) == 1
    monkeypatch.setenv("KFORGE_TIMING_PLACEMENTS", "99")
    assert placement_count(4096) == MAX_PLACEMENTS
    monkeypatch.setenv("KFORGE_TIMING_PLACEMENTS", "many")
    with pytest.raises(ValueError, match="KFORGE_TIMING_PLACEMENTS must be a whole number"):
        placement_count(4096)


def test_on_the_cpu_timing_keeps_one_placement(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KFORGE_TIMING_PLACEMENTS", raising=False)
    inputs = [torch.randn(8), 3]
    placements = RotatingInputs.of(inputs, torch.device("cpu"))
    assert placements.copies == [inputs]
    assert placements.advance() is inputs


def test_copies_are_separate_buffers_with_the_same_values_used_in_turn() -> None:
    x, y = torch.randn(16), torch.randn(4, 4)
    placements = RotatingInputs.of([x, y, 0.5], torch.device("cuda"))  # CPU tensors: copies on the CPU
    assert len(placements.copies) == MAX_PLACEMENTS
    pointers = {copy[0].data_ptr() for copy in placements.copies}
    assert len(pointers) == MAX_PLACEMENTS, "every placement is its own allocation"
    for copy in placements.copies:
        assert torch.equal(copy[0], x) and torch.equal(copy[1], y) and copy[2] == 0.5
    seen = [placements.advance()[0].data_ptr() for _ in range(2 * MAX_PLACEMENTS)]
    assert seen[:MAX_PLACEMENTS] == seen[MAX_PLACEMENTS:] and len(set(seen)) == MAX_PLACEMENTS
    # An output that is an input of any placement names that input's argument index.
    every = placements.every_value()
    position = next(i for i, value in enumerate(every) if value is placements.copies[5][1])
    assert placements.aliased_argument(position) == 1


def test_kept_outputs_are_bounded_by_count_and_budget() -> None:
    kept = KeptOutputs()
    outputs = [torch.zeros(4) for _ in range(3 * MAX_PLACEMENTS)]
    for output in outputs:
        kept.keep(output)
    assert list(kept.kept) == outputs[-(MAX_PLACEMENTS - 1) :]
    large = KeptOutputs(budget=1000)
    for _ in range(4):
        large.keep((torch.zeros(100), torch.zeros(100)))  # 800 bytes a call: one fits
    assert len(large.kept) == 1
    none_fit = KeptOutputs(budget=10)
    none_fit.keep(torch.zeros(100))
    assert len(none_fit.kept) == 0


def test_the_references_samples_rotate_placements_with_each_samples_values() -> None:
    sets = [[torch.full((4,), float(i)), torch.full((4,), 10.0 * i)] for i in range(3)]
    seen: list[tuple[int, float, float]] = []

    class Recorder(torch.nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            seen.append((a.data_ptr(), float(a[0]), float(b[0])))
            return a + b

    shadow = ShadowedReference.of(sets[0], sets, [], torch.device("cuda"))
    order = [2, 0, 1, 1, 2]
    hooks = shadow.hooks(Recorder(), order)
    outputs: list[Any] = []
    for j in range(len(order)):
        hooks.before_sample(j)
        outputs.append(hooks.call())
        hooks.after_sample(j)
    assert [(a, b) for _, a, b in seen] == [(float(i), 10.0 * i) for i in order], "each sample's own values"
    assert len({pointer for pointer, _, _ in seen}) == len(order), "a new placement for every sample"
    assert all(torch.isnan(output).all() for output in outputs[:-1]), "earlier outputs are poisoned"
    assert len(shadow.kept_outputs.kept) == len(order) - 1, "and kept, so the next lands elsewhere"
