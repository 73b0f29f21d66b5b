"""Reads the rows kforge's dataset commands write, as a Hugging Face dataset, for the training recipes."""

from __future__ import annotations

from typing import Any


def load_rows(path: str) -> Any:
    """The rows of a .parquet file or a JSON-lines file (kforge data writes either) as one split."""
    from datasets import load_dataset

    kind = "parquet" if path.endswith(".parquet") else "json"
    return load_dataset(kind, data_files=path, split="train")
