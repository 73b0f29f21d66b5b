"""Rewards on real verdicts (docs/rewards.md): `kforge eval --reward` on the CPU interpreter, one
honest, one wrong, one cheating and one unparsable completion, under every formula."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, run_kforge

STARTER = REPO / "problems" / "starter"
SOLUTION = (STARTER / "01_scaled_add" / "solution.py").read_text()
WRONG = SOLUTION.replace("alpha * x + y", "alpha * x - y")
# The kernel is launched, but the output comes from PyTorch: a fallback the runtime trace catches.
CHEAT = SOLUTION.replace("        return out\n", "        return self.alpha * x + y\n")
PROSE = "I would write a Triton kernel for this, but here is only an explanation."

# formula -> expected reward for (honest, wrong, cheat, prose) on the CPU (no timing)
EXPECTED = {
    "kforge": [0.5, 0.2, -1.0, 0.0],
    "autotriton": [1.0, 0.0, 0.0, 0.0],
    "tritonrl": [1.0, 0.0, 0.0, 0.0],
    "drkernel": [0.5, 0.0, 0.0, 0.0],
}


@pytest.mark.parametrize("formula", sorted(EXPECTED))
def test_batch_results_carry_the_reward_and_its_components(tmp_path: Path, formula: str) -> None:
    samples = tmp_path / "samples.jsonl"
    completions = [SOLUTION, WRONG, CHEAT, PROSE]
    samples.write_text(
        "".join(json.dumps({"problem": "01_scaled_add", "completion": text, "sample_id": i}) + "\n"
                for i, text in enumerate(completions))
    )  # fmt: skip
    results = tmp_path / "results.jsonl"
    run = run_kforge(
        "eval", "--suite", str(STARTER), "--samples", str(samples), "--device", "cpu", "--small",
        "--results", str(results), "--no-store", "-j", "2", "--reward", formula, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = [json.loads(text) for text in results.read_text().splitlines()]
    lines.sort(key=lambda line: line["sample_id"])
    rewards = [line["reward"]["reward"] for line in lines]
    assert rewards == pytest.approx(EXPECTED[formula]), [line["summary"] for line in lines]
    for line in lines:
        assert line["reward"]["formula"] == formula
        assert isinstance(line["reward"]["components"], dict) and line["reward"]["explanation"]
    if formula == "kforge":
        assert "torch-compute-at-runtime" in lines[2]["reward"]["components"]["cheating"]


def test_single_eval_json_has_the_reward_and_a_bad_spec_is_refused(tmp_path: Path) -> None:
    candidate = tmp_path / "c.py"
    candidate.write_text(SOLUTION)
    problem = STARTER / "01_scaled_add" / "problem.py"
    spec = json.dumps({"formula": "weighted", "weights": {"correct": 2, "cheating": -3}})
    run = run_kforge(
        "eval", "-p", str(problem), "-c", str(candidate), "--device", "cpu", "--small", "--no-store",
        "--json", "--reward", spec,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    verdict = json.loads(run.stdout)
    assert verdict["reward"]["reward"] == pytest.approx(2.0)
    assert verdict["reward"]["spec"]["weights"] == {"correct": 2.0, "cheating": -3.0}
    bad = run_kforge("eval", "-p", str(problem), "-c", str(candidate), "--reward", '{"formula": "fastest"}')
    assert bad.returncode == 2 and "unknown reward formula 'fastest'" in bad.stderr
