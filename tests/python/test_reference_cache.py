"""The judge's reference cache (kforge.worker.reference_cache) and its `trim` op: a judge keeps at most its
share of the machine's memory in cached references, and an idle judge gives back all but a small share,
without touching what its open trials hold."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from kforge.worker.judge import Judge
from kforge.worker.reference_cache import ReferenceCache, reference_bytes


@dataclass
class Entry:
    inputs: list[Any]
    outputs: list[Any]
    undefined: list[torch.Tensor | None] = field(default_factory=list)


def entry(elements: int) -> Entry:
    """inputs and outputs of 4 * elements bytes each (float32)."""
    return Entry([torch.zeros(elements), 3], [torch.zeros(elements)])


def test_an_entry_counts_its_tensors_once_with_views_of_the_same_storage() -> None:
    base = torch.zeros(100)
    assert reference_bytes(Entry([base, base[:10], "x"], [base.view(10, 10)], [None])) == 400
    mask = torch.zeros(50, dtype=torch.bool)
    assert reference_bytes(Entry([base], [torch.zeros(25)], [mask])) == 400 + 100 + 50


def test_the_least_recently_used_entries_go_first_when_the_bytes_run_over() -> None:
    cache = ReferenceCache(max_entries=12, max_bytes=2000)
    for seed in range(3):
        cache.put(seed, entry(100))  # 800 bytes each
    assert len(cache) == 2 and cache.get(0) is None  # 2400 > 2000: seed 0 went
    assert cache.get(1) is not None  # now seed 2 is the least recently used
    cache.put(3, entry(100))
    assert cache.get(2) is None and cache.get(1) is not None and cache.get(3) is not None
    assert cache.total_bytes == 1600


def test_an_entry_larger_than_the_whole_budget_is_still_kept_alone() -> None:
    cache = ReferenceCache(max_entries=12, max_bytes=100)
    cache.put(0, entry(10))
    cache.put(1, entry(1000))
    assert len(cache) == 1 and cache.get(1) is not None and cache.total_bytes == 8000


def test_the_entry_count_still_bounds_a_cache_of_small_entries() -> None:
    cache = ReferenceCache(max_entries=2)
    for seed in range(5):
        cache.put(seed, entry(1))
    assert len(cache) == 2 and cache.get(3) is not None and cache.get(4) is not None


def test_shrinking_drops_oldest_first_and_reports_the_bytes() -> None:
    cache = ReferenceCache(max_entries=12)
    for seed in range(4):
        cache.put(seed, entry(100))
    assert cache.shrink_to(1600) == 1600
    assert [seed for seed in range(4) if cache.get(seed) is not None] == [2, 3]
    assert cache.shrink_to(0) == 1600 and len(cache) == 0 and cache.total_bytes == 0


PROBLEM = """
import torch

class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2.0

def get_inputs():
    return [torch.randn(1024)]

def get_init_inputs():
    return []
"""


def loaded_judge(tmp_path: Path, cache_bytes: int) -> Judge:
    problem = tmp_path / "problem.py"
    problem.write_text(PROBLEM)
    judge = Judge()
    judge.load(
        {"device": "cpu", "problem_path": str(problem), "seed": 1, "reference_cache_bytes": cache_bytes}
    )
    return judge


def start(judge: Judge, tmp_path: Path, trial: str, seed: int) -> None:
    judge.start_trial({"trial": trial, "seed": seed, "transfer_dir": str(tmp_path)})


def test_the_judge_keeps_its_cache_within_the_bytes_it_was_given(tmp_path: Path) -> None:
    judge = loaded_judge(tmp_path, cache_bytes=3 * 8192)  # one reference: 4 KiB in, 4 KiB out
    for seed in range(6):
        start(judge, tmp_path, f"e1:{seed}", 100 + seed)
    cache = judge.state.references
    assert len(cache) == 3 and cache.total_bytes == 3 * 8192


def test_trim_empties_the_cache_but_open_trials_keep_their_references(tmp_path: Path) -> None:
    judge = loaded_judge(tmp_path, cache_bytes=1 << 30)
    start(judge, tmp_path, "e1:0", 7)
    start(judge, tmp_path, "e1:1", 8)
    trial = judge.state.trials["e1:0"]
    expected = trial.reference[0].clone()
    reply = judge.trim({"keep_bytes": 0})
    assert reply["freed_bytes"] == 2 * 8192 and reply["cached_bytes"] == 0
    assert len(judge.state.references) == 0
    assert torch.equal(judge.state.trials["e1:0"].reference[0], expected)  # still held, still right
    start(judge, tmp_path, "e1:2", 7)  # computed again from the seed: the same answer
    assert torch.equal(judge.state.trials["e1:2"].reference[0], expected)


def test_trim_by_default_keeps_an_idle_share_of_the_machine(tmp_path: Path) -> None:
    judge = loaded_judge(tmp_path, cache_bytes=1 << 30)
    start(judge, tmp_path, "e1:0", 7)
    reply = judge.trim({})
    assert (
        reply["freed_bytes"] == 0 and reply["cached_bytes"] == 8192
    )  # 8 KiB is far below an idle share of RAM
