"""A tiny randomly initialised causal LM with its own tokenizer, built offline from a config.

kforge's own end-to-end runs of the training recipes use it (no weights to download, minutes on one
GPU); a real run passes a real model's path instead. The tokenizer is a byte-level BPE trained on the
given texts (the prompts and answers the run will see) with a ChatML-style chat template, so TRL's
conversational formats work with it.

    python -m kforge.train.tiny_model --texts sft.jsonl prompts.jsonl --out runs/tiny-model
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ["<|pad|>", "<|im_start|>", "<|im_end|>"]


def texts_of(paths: Iterable[Path]) -> Iterator[str]:
    """Every string found in the rows of JSON Lines files (prompts, completions, answers)."""

    def strings(value: object) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for item in value.values():
                yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)

    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                yield from strings(json.loads(line))


def build_tiny_model(
    out: Path, texts: Iterable[str], vocab_size: int = 2048, hidden: int = 128, layers: int = 2, seed: int = 0
) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<|pad|>", bos_token="<|im_start|>", eos_token="<|im_end|>"
    )
    fast.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=hidden,
        intermediate_size=4 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=16384,
        pad_token_id=fast.pad_token_id,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    fast.save_pretrained(out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument(
        "--texts", nargs="+", required=True, help="JSON Lines files to train the tokenizer on"
    )
    parser.add_argument("--out", required=True)
    parser.add_argument("--vocab", type=int, default=2048)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    arguments = parser.parse_args()
    out = build_tiny_model(
        Path(arguments.out),
        texts_of(Path(p) for p in arguments.texts),
        arguments.vocab,
        arguments.hidden,
        arguments.layers,
    )
    print(f"tiny random model in {out}")


if __name__ == "__main__":
    main()
