"""Proves the candidate process never holds the judge's reference outputs.

A spy candidate stops inside forward; meanwhile this probe recomputes the reference the judge holds
(same seed, same device) and searches the candidate's whole host address space (/proc/PID/mem) and,
on a GPU, the whole device allocation behind the shared input, for the reference's bytes. As a positive
control it must find the input's bytes. Used by pytest on the CPU and by scripts/gpu-check on a GPU:

    python tests/python/isolation_probe.py --kforge build/release/kforge --device cuda:0
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

HERE = Path(__file__).resolve().parent
PROBLEM = HERE / "fixtures" / "isolation_problem.py"
INPUT_KEY = "isolation-probe"  # KFORGE_INPUT_KEY for the probed run, so the probe can redraw its inputs


def input_seed(key: str, purpose: str, public_seed: int, index: int) -> int:
    """The seed kforge draws one input set from (src/verify/input_seeds.cpp): HMAC-SHA-256 under the
    input key of "kforge-input-seed/<purpose>/<--seed>/<index>", its first 64 bits cut to 63."""
    message = f"kforge-input-seed/{purpose}/{public_seed}/{index}".encode()
    digest = hmac.new(key.encode(), message, hashlib.sha256).hexdigest()
    return int(digest[:16], 16) & ((1 << 63) - 1)


TRIAL_SEED = input_seed(INPUT_KEY, "trial", 42, 0)  # trial 0 of an evaluation with --seed 42
NEEDLE_OFFSET, NEEDLE_BYTES = 4096, 64

SPY_TEMPLATE = """
import ctypes, os, time
import torch, torch.nn as nn, triton, triton.language as tl

@triton.jit
def fill_zero(out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.zeros([BLOCK], dtype=tl.float32), mask=offsets < n)

def dump_device_allocation(x, path):
    libcuda = ctypes.CDLL("libcuda.so.1")
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    libcuda.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(x.data_ptr()))
    host = ctypes.create_string_buffer(size.value)
    libcuda.cuMemcpyDtoH_v2(host, ctypes.c_uint64(base.value), ctypes.c_size_t(size.value))
    with open(path, "wb") as f:
        f.write(host.raw)

SIGNALS = os.environ["TMPDIR"]  # the candidate's private folder, the one place it may write

class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        fill_zero[(triton.cdiv(x.numel(), 1024),)](out, x.numel(), BLOCK=1024)
        if x.is_cuda:
            torch.cuda.synchronize()
            dump_device_allocation(x, os.path.join(SIGNALS, "dump"))
        with open(os.path.join(SIGNALS, "ready.tmp"), "w") as f:
            f.write(str(os.getpid()))
        os.rename(os.path.join(SIGNALS, "ready.tmp"), os.path.join(SIGNALS, "ready"))
        deadline = time.time() + 120
        while not os.path.exists(os.path.join(SIGNALS, "done")) and time.time() < deadline:
            time.sleep(0.05)
        return out
"""


def reference_and_input(device: str) -> tuple[bytes, bytes]:
    spec = importlib.util.spec_from_file_location("isolation_problem", PROBLEM)
    assert spec is not None and spec.loader is not None
    problem = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(problem)
    torch.manual_seed(TRIAL_SEED)
    (x,) = problem.get_inputs()
    with torch.no_grad():
        reference = problem.Model()(x.to(device)).cpu()
    return reference.numpy().tobytes(), x.numpy().tobytes()


def readable_regions(pid: int) -> list[tuple[int, int]]:
    regions = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split()
        span, perms = fields[0], fields[1]
        path = fields[5] if len(fields) > 5 else ""
        if not perms.startswith("r") or path.startswith(("/dev/nvidia", "[vvar", "[vsyscall")):
            continue
        start, end = (int(value, 16) for value in span.split("-"))
        regions.append((start, end))
    return regions


def search_process(pid: int, needles: dict[str, bytes]) -> dict[str, int]:
    """Occurrences of each needle in the process's readable memory."""
    hits = dict.fromkeys(needles, 0)
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as memory:
        for start, end in readable_regions(pid):
            try:
                memory.seek(start)
                data = memory.read(end - start)
            except (OSError, OverflowError, ValueError):
                continue
            for name, needle in needles.items():
                hits[name] += data.count(needle)
    return hits


def run_probe(kforge: Path, device: str, work: Path) -> dict[str, Any]:
    # The spy may write only inside its private folder, which kforge makes under its own TMPDIR:
    # point that at a folder of ours, and find the spy's signal files there.
    scratch = work / "kforge-tmp"
    scratch.mkdir()
    return _run_probe(kforge, device, work, scratch)


def spy_signals(scratch: Path) -> Path | None:
    """The spy's private folder once it has written its ready file."""
    ready = next(scratch.rglob("ready"), None)
    return ready.parent if ready else None


def _run_probe(kforge: Path, device: str, work: Path, scratch: Path) -> dict[str, Any]:
    candidate = work / "spy_candidate.py"
    candidate.write_text(SPY_TEMPLATE)
    reference, inputs = reference_and_input(device)
    needles = {
        "reference": reference[NEEDLE_OFFSET : NEEDLE_OFFSET + NEEDLE_BYTES],
        "input": inputs[NEEDLE_OFFSET : NEEDLE_OFFSET + NEEDLE_BYTES],
    }
    command = [
        str(kforge),
        "eval",
        "-p",
        str(PROBLEM),
        "-c",
        str(candidate),
        "--device",
        device,
        "--trials",
        "1",
        "--timeout",
        "180",
        "--json",
        "--no-perf",
        "--no-store",  # a stored verdict would be answered without running the spy
        # the spy reads its own memory with ctypes and signals through files, which strict rejects
        # statically; lenient lets it run so that the memory scan happens
        "--profile",
        "lenient",
    ]
    environment = {**os.environ, "TMPDIR": str(scratch), "KFORGE_INPUT_KEY": INPUT_KEY}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment
    )
    signals = None
    try:
        deadline = time.time() + 240
        while (signals := spy_signals(scratch)) is None:
            if process.poll() is not None or time.time() > deadline:
                out, err = process.communicate()
                raise RuntimeError(f"the spy never reached forward:\n{out}\n{err}")
            time.sleep(0.05)
        time.sleep(0.1)
        pid = int((signals / "ready").read_text())
        host_hits = search_process(pid, needles)
        device_hits = None
        if device.startswith("cuda"):
            dump = (signals / "dump").read_bytes()
            device_hits = {name: dump.count(needle) for name, needle in needles.items()}
            device_hits["allocation_bytes"] = len(dump)
    finally:
        if signals is not None:
            (signals / "done").write_text("done")
        out, _ = process.communicate(timeout=240)
    verdict = json.loads(out)
    return {
        "host": host_hits,
        "device": device_hits,
        "outcome": verdict["outcome"],
        "failed_stage": verdict["failed_stage"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kforge", type=Path, default=HERE.parents[1] / "build" / "release" / "kforge")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        result = run_probe(args.kforge, args.device, Path(work))
    print(json.dumps(result))
    leaked = result["host"]["reference"] > 0 or (result["device"] or {}).get("reference", 0) > 0
    control = result["device"]["input"] if result["device"] else result["host"]["input"]
    ok = not leaked and control > 0
    print("isolation:", "PASS" if ok else "FAIL", "(reference bytes reachable)" if leaked else "")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
