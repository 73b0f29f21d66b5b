"""The parts of the training recipes that run without TRL: the GRPO recipe's reward timing and
component log, and the tiny model's tokenizer corpus. The recipes themselves run end to end on the
GPU machine (scripts/train-e2e-check.sh; docs/benchmarks.md), where TRL is installed."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from conftest import REPO

sys.path.insert(0, str(REPO / "python"))
from kforge.train.grpo_recipe import TimedReward, arguments
from kforge.train.tiny_model import texts_of


class FakeKforgeReward:
    __name__ = "kforge"

    def __init__(self) -> None:
        self.last_components: list[dict[str, Any]] = []

    def __call__(self, prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
        time.sleep(0.01)
        assert kwargs["problem_id"] == ["p"] * len(completions), "dataset columns pass through"
        self.last_components = [{"format": 1.0, "correct": 1.0, "cheat": False}, {"format": 0.0}, {}]
        return [1.5, 0.0, None]


def test_the_grpo_reward_is_timed_and_its_components_averaged_per_batch() -> None:
    reward = TimedReward(FakeKforgeReward())
    assert reward.__name__ == "kforge", "TRL logs under the wrapped function's name"
    assert reward(prompts=["a"] * 3, completions=["x", "y", "z"], problem_id=["p"] * 3) == [1.5, 0.0, None]
    reward(prompts=["a"] * 3, completions=["x", "y", "z"], problem_id=["p"] * 3)
    assert reward.completions == 6 and reward.seconds >= 0.02
    [first, _] = reward.batches
    assert first["mean_reward"] == 0.75 and first["errors"] == 1
    assert first["components"] == {"format": 0.5, "correct": 1.0}, "booleans are not averaged"


def test_the_grpo_options_name_what_a_run_varies() -> None:
    parsed = arguments(
        ["--model", "m", "--prompts", "p.jsonl", "--reward", "tritonrl", "--group", "16", "--kl", "0"]
    )
    assert (parsed.reward, parsed.group, parsed.kl, parsed.max_completion) == ("tritonrl", 16, 0.0, 4096)


def test_the_tokenizer_corpus_is_every_string_of_the_rows(tmp_path: Path) -> None:
    rows = tmp_path / "sft.jsonl"
    row = {"prompt": [{"role": "user", "content": "make it fast"}], "completion": "```python\nx\n```", "n": 3}
    rows.write_text(json.dumps(row) + "\n\n")
    assert sorted(texts_of([rows])) == ["```python\nx\n```", "make it fast", "user"]
