"""Measures a GPU's roofline ceilings: DRAM copy bandwidth and dense matmul rates per dtype.

The numbers `kforge profile` places kernels against (docs/profile.md); it runs this once per GPU model
and keeps the result. Random data (never zeros: the memory system compresses them), CUDA events, the
median of 20 timed repeats after 5 warm-ups, every launch checked by synchronising. Prints JSON;
`--out FILE` writes it too. Run as `python -m kforge.worker.ceilings [--device cuda:N]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch


def median_ms(run: Callable[[], object], repeats: int = 20, warmup: int = 5) -> float:
    for _ in range(warmup):
        run()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def copy_bandwidth(gib: float) -> dict[str, float]:
    count = int(gib * 2**30) // 4
    source = torch.rand(count, device="cuda")
    target = torch.empty_like(source)
    ms = median_ms(lambda: target.copy_(source))
    torch.testing.assert_close(target, source)
    moved = 2 * count * 4  # every byte read once and written once
    return {"bytes": moved, "ms": ms, "bytes_per_s": moved / (ms / 1e3)}


def matmul_rate(dtype: torch.dtype, size: int, tf32: bool = False) -> dict[str, float]:
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.randn(size, size, device="cuda").to(dtype)
    b = torch.randn(size, size, device="cuda").to(dtype)
    out = torch.empty(size, size, device="cuda", dtype=dtype)
    ms = median_ms(lambda: torch.mm(a, b, out=out))
    if not torch.isfinite(out.float()).all():
        raise RuntimeError(f"non-finite matmul output for {dtype}")
    flops = 2 * size**3
    return {"size": size, "ms": ms, "flop_per_s": flops / (ms / 1e3)}


def measure(gib: float, size: int) -> dict[str, Any]:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {
        "device": props.name,
        "sm_count": props.multi_processor_count,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "memory_bytes": props.total_memory,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "copy": copy_bandwidth(gib),
        "matmul": {
            "bf16": matmul_rate(torch.bfloat16, size),
            "fp16": matmul_rate(torch.float16, size),
            "tf32": matmul_rate(torch.float32, size, tf32=True),
            "fp32": matmul_rate(torch.float32, size, tf32=False),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gib", type=float, default=2.0, help="copy size in GiB (default 2)")
    parser.add_argument("--size", type=int, default=8192, help="square matmul size (default 8192)")
    parser.add_argument("--device", default="cuda:0", help="the GPU to measure (default cuda:0)")
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("ceilings: no CUDA device; the roofline needs a GPU", file=sys.stderr)
        return 2
    try:
        torch.cuda.set_device(torch.device(args.device))
    except (RuntimeError, ValueError) as error:
        print(f"ceilings: cannot use device {args.device!r}: {error}", file=sys.stderr)
        return 2
    result = measure(args.gib, args.size)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
