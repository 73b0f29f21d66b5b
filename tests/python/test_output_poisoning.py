"""A candidate's finished outputs are poisoned once the judge has them (kforge.worker.candidate): memory
the allocator recycles must not hand the next call, such as the ghost replay's, the previous answer, even
through allocators that bypass torch's fill of fresh memory (Inductor's _empty_strided_cpu/_cuda)."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from kforge.worker.timed_outputs import poison_outputs


def test_outputs_are_poisoned_and_a_returned_input_is_left_alone() -> None:
    x = torch.randn(64)
    computed = x * 2.0
    counts = torch.arange(8)
    poison_outputs((x, (computed, counts), 3, None), [x])
    assert torch.isnan(computed).all() and bool((counts == -1).all())
    assert torch.isfinite(x).all(), "the input the wrapper returned is not touched"


def test_an_allocator_that_skips_torchs_fill_would_recycle_a_correct_answer() -> None:
    from torch._C._dynamo.guards import _empty_strided_cpu

    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True  # type: ignore[attr-defined]
    try:
        assert torch.isnan(torch.empty(4)).all()  # torch's own allocators are filled...
        fresh = _empty_strided_cpu((1 << 16,), (1,), torch.float32)
        assert not torch.isnan(fresh).all()  # ...this one is not: poisoning at release is what covers it
    finally:
        torch.use_deterministic_algorithms(False)
        torch.utils.deterministic.fill_uninitialized_memory = False  # type: ignore[attr-defined]
