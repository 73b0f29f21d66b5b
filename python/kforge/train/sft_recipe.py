"""Supervised fine-tuning on `kforge data sft` output with TRL's SFTTrainer.

    python -m kforge.train.sft_recipe --model /models/base --data sft.jsonl --out runs/sft

Any Hugging Face causal LM path or name works as --model. The dataset's `prompt` and `completion`
columns are TRL's conversational prompt-completion format, so the loss is on the verified answer only.
Needs `trl datasets` (and `accelerate` for several GPUs: `accelerate launch -m kforge.train.sft_recipe`).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--model", required=True, help="Hugging Face causal LM (name or local path)")
    parser.add_argument("--data", required=True, help="kforge data sft output (.jsonl or .parquet)")
    parser.add_argument("--out", default="runs/sft", help="checkpoints and logs")
    parser.add_argument("--lr", type=float, default=1e-5, help="learning rate")
    parser.add_argument("--epochs", type=float, default=2.0, help="passes over the data")
    parser.add_argument("--steps", type=int, default=-1, help="optimiser steps (overrides --epochs when > 0)")
    parser.add_argument("--batch", type=int, default=1, help="samples per device per step")
    parser.add_argument("--accumulation", type=int, default=8, help="gradient accumulation steps")
    parser.add_argument("--max-length", type=int, default=8192, help="tokens per sample (prompt + answer)")
    parser.add_argument("--save-steps", type=int, default=200)
    parser.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=True)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    from trl import SFTConfig, SFTTrainer

    from kforge.train.dataset_rows import load_rows

    args = arguments(argv)
    data = load_rows(args.data).select_columns(["prompt", "completion"])
    config = SFTConfig(
        output_dir=args.out,
        learning_rate=args.lr,
        num_train_epochs=args.epochs,
        max_steps=args.steps,
        per_device_train_batch_size=args.batch,
        gradient_accumulation_steps=args.accumulation,
        max_length=args.max_length,
        logging_steps=1,
        save_steps=args.save_steps,
        bf16=args.bf16,
        report_to="none",
    )
    trainer = SFTTrainer(model=args.model, args=config, train_dataset=data)
    started = time.monotonic()
    trainer.train()
    trainer.save_model(args.out)
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    summary = {
        "steps": trainer.state.global_step,
        "seconds": round(time.monotonic() - started, 1),
        "losses": losses,
    }
    Path(args.out, "kforge-sft-summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
