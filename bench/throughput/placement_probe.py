"""Does a kernel's time depend on where its buffers lie? Times a problem's reference and a candidate
on several freshly allocated copies of the same inputs in one process (the allocator is shifted by a
pad of random size before each copy), the way kforge times them: L2 flushed before each sample, CUDA
events around one call, median of 100. Run it in a few processes and compare the spread within one
process with the spread between processes. Used to explain bench/throughput's repeated-evaluation
spread (docs/benchmarks.md):

    python bench/throughput/placement_probe.py problems/starter/13_matmul_fp16 --copies 8
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import statistics
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import torch


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_ms(call: Any, flush: torch.Tensor, samples: int) -> float:
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem_dir", type=Path)
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="seeds the pad sizes (the inputs use seed 1)")
    args = parser.parse_args()
    problem = load(args.problem_dir / "problem.py", "probe_problem")
    solution = load(args.problem_dir / "solution.py", "probe_solution")
    device = torch.device("cuda", 0)
    torch.manual_seed(1)
    host_inputs = problem.get_inputs()
    init = problem.get_init_inputs()
    torch.manual_seed(2)
    reference = problem.Model(*init).to(device).eval()
    torch.manual_seed(2)
    candidate = solution.ModelNew(*init).to(device).eval()
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=device)
    pads = random.Random(args.seed)
    rows = []
    kept: list[torch.Tensor] = []
    with torch.no_grad():
        for copy in range(args.copies):
            kept.append(torch.empty(pads.randint(1, 512) << 20, dtype=torch.uint8, device=device))
            inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in host_inputs]
            ref_ms = median_ms(lambda inputs=inputs: reference(*inputs), flush, args.samples)
            cand_ms = median_ms(lambda inputs=inputs: candidate(*inputs), flush, args.samples)
            addresses = [hex(x.data_ptr()) for x in inputs if isinstance(x, torch.Tensor)]
            rows.append(
                {"copy": copy, "reference_ms": ref_ms, "candidate_ms": cand_ms, "inputs_at": addresses}
            )
            kept.extend(x for x in inputs if isinstance(x, torch.Tensor))

    def spread(key: str) -> float:
        values = [row[key] for row in rows]
        return (max(values) - min(values)) / statistics.median(values)

    print(json.dumps({"rows": rows, "reference_spread": spread("reference_ms"),
                      "candidate_spread": spread("candidate_ms")}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
