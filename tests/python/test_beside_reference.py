"""The reference timed beside the candidate in the candidate worker's process (issue 31): built from the
problem as the judge builds it, timed between the candidate's batches with the judge's switches, and
refused (never the candidate's failure) when the candidate reaches for it. On the CPU, with the host clock
in place of CUDA events, as tests/python/test_timing.py does."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from kforge.worker.beside_reference import MODULE_NAME
from kforge.worker.candidate import CandidateWorker
from kforge.worker.judge import Judge
from kforge.worker.timing import HostClock, SampleTimer

PROBLEM = """
import torch
import torch.nn as nn

N = 64
SEEN_DETERMINISTIC = []


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(N))

    def forward(self, x):
        SEEN_DETERMINISTIC.append(torch.are_deterministic_algorithms_enabled())
        return x * self.weight


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
"""

HONEST = """
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(64))

    def forward(self, x):
        return x * self.weight
"""

SWITCHES_FLIPPED = HONEST.replace(
    "import torch.nn as nn", "import torch.nn as nn\n\ntorch.use_deterministic_algorithms(True)"
)

# Slows every torch.mul in its process: the reference's too.
REPLACES_MUL = HONEST.replace(
    "import torch.nn as nn",
    "import torch.nn as nn\n\n_mul = torch.mul\ntorch.mul = lambda *a, **k: _mul(*a, **k)",
)


@pytest.fixture(autouse=True)
def _restore_torch() -> Any:
    mul, deterministic = torch.mul, torch.are_deterministic_algorithms_enabled()
    yield
    torch.mul = mul
    torch.use_deterministic_algorithms(deterministic)
    sys.modules.pop(MODULE_NAME, None)


def _loaded(
    tmp_path: Path, candidate_code: str, problem_code: str = PROBLEM
) -> tuple[Judge, CandidateWorker, dict]:
    problem, candidate = tmp_path / "problem.py", tmp_path / "candidate.py"
    problem.write_text(textwrap.dedent(problem_code))
    candidate.write_text(textwrap.dedent(candidate_code))
    transfer = tmp_path / "transfer"
    transfer.mkdir()
    base = {"transfer_dir": str(transfer)}
    judge, worker = Judge(), CandidateWorker()
    judge.load({"device": "cpu", "problem_path": str(problem), "seed": 42, "perturbation_seed": 9})
    init = judge.export_init({**base, "evaluation": "e"})
    started = judge.start_trial({**base, "trial": "e:t", "seed": 100})
    extra = judge.add_value_sets({**base, "trial": "e:t", "seeds": [101, 102], "max_bytes": 1 << 30})
    worker.state.prepared = True  # no launch recorder in the test process
    copy = tmp_path / "reference_copy.py"
    copy.write_text(problem.read_text())
    loaded = worker.load(
        {
            **base,
            "device": "cpu",
            "candidate_path": str(candidate),
            "seed": 42,
            **init,
            "reference": {"path": str(copy), "sizes": {}, "seed": 42},
        }
    )
    worker.state.timer = SampleTimer(HostClock())
    first = {
        "op": "time",
        "count": 4,
        "value_order": [0, 1, 2, 0],
        "wall_calls": 1,
        "beside": True,
        "inputs": started["inputs"],
        "value_sets": extra["value_sets"],
        "warmup": {"min_calls": 2},
    }
    return judge, worker, {"load": loaded, "first": first}


def test_the_reference_is_built_here_with_the_judges_perturbed_parameters(tmp_path: Path) -> None:
    judge, worker, setup = _loaded(tmp_path, HONEST)
    assert setup["load"]["beside_reference"] == {"built": True, "why": None}
    beside = worker.state.beside
    assert beside is not None
    assert torch.equal(beside.model.weight, judge.state.model.weight)  # type: ignore[union-attr]
    assert not bool((beside.model.weight == 1).all()), "perturbed, not the constructor's ones"


@pytest.mark.parametrize("reference_first", [False, True])
def test_both_sides_are_timed_in_one_request(tmp_path: Path, reference_first: bool) -> None:
    _, worker, setup = _loaded(tmp_path, HONEST)
    reply = worker.time({**setup["first"], "reference_first": reference_first})
    assert len(reply["reference_samples_ms"]) == 4 and len(reply["samples_ms"]) == 4
    assert "beside_refused" not in reply and reply["reference_warmup"]["calls"] >= 2
    beside = worker.state.beside
    assert beside is not None and beside.shadow is not None
    expected = worker.state.value_sets[0][0] * beside.model.weight
    assert torch.equal(beside.shadow.output, expected), "the reference's last sample ran on value set 0"
    again = worker.time({"op": "time", "count": 3, "value_order": [1, 1, 2], "beside": True})
    assert len(again["reference_samples_ms"]) == 3
    plain = worker.time({"op": "time", "count": 2, "value_order": [0, 1]})
    assert "reference_samples_ms" not in plain and "beside_refused" not in plain


def test_the_reference_runs_with_the_switches_the_process_had_before_the_candidate(tmp_path: Path) -> None:
    _, worker, setup = _loaded(tmp_path, SWITCHES_FLIPPED)
    seen = sys.modules[MODULE_NAME].SEEN_DETERMINISTIC
    seen.clear()
    reply = worker.time(setup["first"])
    assert len(reply["reference_samples_ms"]) == 4
    assert seen and not any(seen), "the reference ran with the judge's settings"
    assert torch.are_deterministic_algorithms_enabled(), "the candidate's own setting is back afterwards"


def test_a_candidate_that_replaces_a_torch_function_gets_no_timing_beside_it(tmp_path: Path) -> None:
    _, worker, setup = _loaded(tmp_path, REPLACES_MUL)
    reply = worker.time(setup["first"])
    assert "reference_samples_ms" not in reply
    assert "torch.mul" in reply["beside_refused"]
    assert len(reply["samples_ms"]) == 4, "the candidate is still timed: the judge's reference is the basis"


def test_a_problem_that_cannot_be_built_here_is_reported_not_held_against_it(
    tmp_path: Path,
) -> None:
    broken = PROBLEM.replace("import torch.nn as nn", "import torch.nn as nn\nimport kforge_no_such_module")
    problem = tmp_path / "problem.py"
    problem.write_text(textwrap.dedent(PROBLEM))
    judge, worker, setup = _loaded(tmp_path, HONEST, PROBLEM)
    (tmp_path / "reference_copy.py").write_text(textwrap.dedent(broken))
    worker.state.beside = None
    rebuilt = worker._build_beside(
        {"reference": {"path": str(tmp_path / "reference_copy.py"), "seed": 42}, "parameters": {}},
        [],
    )
    assert rebuilt["built"] is False and "kforge_no_such_module" in rebuilt["why"]
    reply = worker.time(setup["first"])
    assert "kforge_no_such_module" in reply["beside_refused"] and len(reply["samples_ms"]) == 4
    del judge


def test_a_reference_that_fails_here_ends_only_the_timing_beside_the_candidate(tmp_path: Path) -> None:
    _, worker, setup = _loaded(tmp_path, HONEST)
    beside = worker.state.beside
    assert beside is not None

    def broken(*args: Any) -> Any:
        raise RuntimeError("reference broke")

    beside.model.forward = broken  # type: ignore[method-assign]
    reply = worker.time(setup["first"])
    assert "reference broke" in reply["beside_refused"] and len(reply["samples_ms"]) == 4
    later = worker.time({"op": "time", "count": 2, "value_order": [0, 1], "beside": True})
    assert "reference broke" in later["beside_refused"]
