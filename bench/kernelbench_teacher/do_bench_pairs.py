#!/usr/bin/env python3
"""Eager against candidate with triton.testing.do_bench, outside kforge: an independent timing of the
pairs kforge judged (issue 35 item 6, docs/benchmarks.md).

    python3 bench/kernelbench_teacher/do_bench_pairs.py --pairs PAIRS.jsonl --out TIMES.jsonl \
        [--device cuda:0]

Each line of PAIRS.jsonl names a candidate file that defines both `Model` (the problem's) and `ModelNew`
with `get_inputs()` and `get_init_inputs()`, as the Inductor teacher's rewrites do:
{"name": ..., "candidate": PATH}. One pair at a time, in this process alone on the GPU: both models from
the same seed, inputs from the same seed, one warm call each (Triton compiles), then do_bench's median
(its own L2 clear before every call, 25 ms warm-up, 100 ms of repetitions). One JSON line per pair:
{"name", "eager_ms", "candidate_ms", "speedup"} or {"name", "error"}.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import sys
import traceback
from pathlib import Path
from typing import Any

import torch
from triton.testing import do_bench


def load(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def on(device: torch.device, value: Any) -> Any:
    return value.to(device) if isinstance(value, torch.Tensor) else value


def time_pair(path: str, index: int, device: torch.device) -> dict[str, float]:
    module = load(path, f"kf_pair_{index}")
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs()).to(device).eval()
    torch.manual_seed(0)
    candidate = module.ModelNew(*module.get_init_inputs()).to(device).eval()
    torch.manual_seed(1)
    inputs = [on(device, value) for value in module.get_inputs()]
    with torch.no_grad():
        model(*inputs)
        candidate(*inputs)
        torch.cuda.synchronize(device)
        eager_ms = do_bench(lambda: model(*inputs), return_mode="median")
        candidate_ms = do_bench(lambda: candidate(*inputs), return_mode="median")
    return {"eager_ms": eager_ms, "candidate_ms": candidate_ms, "speedup": eager_ms / candidate_ms}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--device", default="cuda:0")
    arguments = parser.parse_args()
    device = torch.device(arguments.device)
    torch.cuda.set_device(device)
    pairs = [json.loads(line) for line in Path(arguments.pairs).read_text().splitlines() if line.strip()]
    with open(arguments.out, "w") as out:
        for index, pair in enumerate(pairs):
            row: dict[str, Any] = {"name": pair["name"]}
            try:
                row.update(time_pair(pair["candidate"], index, device))
            except Exception as failure:  # noqa: BLE001 - one pair's failure is its row
                row["error"] = f"{type(failure).__name__}: {failure}"[:400]
                row["where"] = traceback.format_exc(limit=2)[-400:]
            out.write(json.dumps(row) + "\n")
            out.flush()
            gc.collect()
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
