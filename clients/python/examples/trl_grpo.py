"""GRPO with TRL on one node, rewarded by a running `kforge serve` (docs/training.md).

    kforge data prompts --suite problems/starter --out prompts.jsonl
    KFORGE_URL=http://127.0.0.1:8000 KFORGE_TOKEN_FILE=token \
        accelerate launch --num_processes 7 clients/python/examples/trl_grpo.py \
        --model Qwen/Qwen2.5-Coder-7B-Instruct --prompts prompts.jsonl --out runs/grpo

Needs `pip install trl datasets accelerate ./clients/python` in the trainer's environment (not in
kforge's). Every option of the run is a flag below; TRL's other GRPOConfig fields keep their defaults.
"""

from __future__ import annotations

import argparse

from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer

from kforge_client.trl import make_reward_function


def arguments() -> argparse.Namespace:
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
    return parser.parse_args()


def main() -> None:
    args = arguments()
    kind = "parquet" if args.prompts.endswith(".parquet") else "json"
    prompts = load_dataset(kind, data_files=args.prompts, split="train")
    # The reward function reads each sample's problem_id (and reference_source) column.
    reward = make_reward_function(reward=args.reward)
    config = GRPOConfig(
        output_dir=args.out,
        learning_rate=args.lr,
        beta=args.kl,
        num_generations=args.group,
        per_device_train_batch_size=args.batch,
        max_completion_length=args.max_completion,
        max_steps=args.steps,
        logging_steps=1,
        save_steps=50,
        bf16=True,
        log_completions=True,
    )
    trainer = GRPOTrainer(model=args.model, reward_funcs=[reward], args=config, train_dataset=prompts)
    trainer.train()
    trainer.save_model(args.out)


if __name__ == "__main__":
    main()
