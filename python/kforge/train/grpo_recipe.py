"""GRPO with TRL's GRPOTrainer, rewarded by a running `kforge serve`.

    kforge data prompts --suite problems/starter --out prompts.jsonl
    KFORGE_URL=http://127.0.0.1:8000 KFORGE_TOKEN_FILE=token \\
        python -m kforge.train.grpo_recipe --model runs/sft --prompts prompts.jsonl --out runs/grpo

Any Hugging Face causal LM path or name works as --model (typically the SFT recipe's output). The
reward formula, group size, KL coefficient, learning rate and completion length are options; TRL logs the mean
reward (`reward/kforge/mean`) and, with a TRL that passes `log_metric`, the mean reward components.
At the end `OUT/kforge-grpo-summary.json` holds the rollouts per second, the share of the training
time spent waiting for rewards, and each step's mean reward and components. Needs
`trl datasets ./clients/python` (and `accelerate launch -m kforge.train.grpo_recipe` for several GPUs).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--model", required=True, help="Hugging Face causal LM (name or local path)")
    parser.add_argument("--prompts", required=True, help="kforge data prompts output (.jsonl or .parquet)")
    parser.add_argument("--out", default="runs/grpo", help="checkpoints and logs")
    parser.add_argument("--reward", default="kforge", help="kforge | autotriton | tritonrl | drkernel")
    parser.add_argument("--group", type=int, default=8, help="completions per prompt (GRPO group size)")
    parser.add_argument("--batch", type=int, default=8, help="completions per device per step")
    parser.add_argument("--lr", type=float, default=1e-6, help="learning rate")
    parser.add_argument("--kl", type=float, default=0.04, help="KL coefficient (GRPOConfig.beta)")
    parser.add_argument("--max-completion", type=int, default=4096, help="tokens per completion at most")
    parser.add_argument("--steps", type=int, default=200, help="optimiser steps")
    parser.add_argument("--save-steps", type=int, default=50)
    parser.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=True)
    return parser.parse_args(argv)


class TimedReward:
    """The kforge reward function, timing each call and keeping each batch's mean components."""

    def __init__(self, reward: Any) -> None:
        self.reward = reward
        self.__name__ = reward.__name__
        self.seconds = 0.0
        self.completions = 0
        self.batches: list[dict[str, Any]] = []

    def __call__(
        self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
    ) -> list[float | None]:
        started = time.monotonic()
        rewards = self.reward(prompts=prompts, completions=completions, **kwargs)
        self.seconds += time.monotonic() - started
        self.completions += len(completions)
        scored = [value for value in rewards if value is not None]
        components: dict[str, list[float]] = {}
        for sample in self.reward.last_components:
            for key, value in sample.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    components.setdefault(key, []).append(float(value))
        self.batches.append(
            {
                "completions": len(completions),
                "mean_reward": sum(scored) / len(scored) if scored else None,
                "errors": len(rewards) - len(scored),
                "components": {key: sum(values) / len(values) for key, values in components.items()},
            }
        )
        return rewards


def main(argv: list[str] | None = None) -> None:
    from kforge_client.trl import make_reward_function
    from trl import GRPOConfig, GRPOTrainer

    from kforge.train.dataset_rows import load_rows

    args = arguments(argv)
    prompts = load_rows(args.prompts)
    # The reward function reads each sample's problem_id (and reference_source) column.
    reward = TimedReward(make_reward_function(reward=args.reward))
    config = GRPOConfig(
        output_dir=args.out,
        learning_rate=args.lr,
        beta=args.kl,
        num_generations=args.group,
        per_device_train_batch_size=args.batch,
        max_completion_length=args.max_completion,
        max_steps=args.steps,
        logging_steps=1,
        save_steps=args.save_steps,
        bf16=args.bf16,
        report_to="none",
    )
    trainer = GRPOTrainer(model=args.model, reward_funcs=[reward], args=config, train_dataset=prompts)
    started = time.monotonic()
    trainer.train()
    seconds = time.monotonic() - started
    trainer.save_model(args.out)
    summary = {
        "steps": trainer.state.global_step,
        "seconds": round(seconds, 1),
        "rollouts": reward.completions,
        "rollouts_per_second": round(reward.completions / seconds, 3) if seconds else None,
        "reward_wait_share": round(reward.seconds / seconds, 4) if seconds else None,
        "reward_seconds": round(reward.seconds, 1),
        "batches": reward.batches,
    }
    Path(args.out, "kforge-grpo-summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps({key: value for key, value in summary.items() if key != "batches"}))


if __name__ == "__main__":
    main()
