"""The program `kforge profile` runs (under Nsight Compute when there is one) to look at a candidate.

It builds the problem's inputs and the candidate's ModelNew as the judge does (same seed, same size
overrides), runs forward once to compile and autotune, then runs it again between cudaProfilerStart and
cudaProfilerStop: the launches `ncu --profile-from-start off` measures, and nothing else (no input
generation, no compilation, no autotuning). It then writes, for every Triton kernel that was launched,
what its compiled form says: registers, spills, shared memory, warps, stages and a summary of its SASS.

Run as `python -m kforge.worker.profiler --problem P --candidate C --device cuda:N --out FILE`. The
candidate has passed kforge's verdict pipeline before this runs (docs/profile.md).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from kforge.worker.problem_sizes import apply_size_overrides
from kforge.worker.protocol import WorkerError
from kforge.worker.runtime import load_module_from_path, select_device, to_device
from kforge.worker.trace import CANDIDATE_MODULE

# An instruction line as Triton's disassembler writes it ("--:-:0:Y:4<TAB>@!P0 LDG.E.128 R4, ...;": the
# control bits, a tab, the instruction) or as cuobjdump does ("/*0090*/   @!P0 LDG.E.128 R4, ... ;").
_SASS_INSTRUCTION = re.compile(
    r"^(?:[-0-9]{1,2}:[-0-9]:[-0-9]:[-Y]:[0-9a-f]\t|\s*/\*[0-9a-f]{4,}\*/\s+)(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)",
    re.M,
)
_VECTOR_WIDTH = re.compile(r"\.(64|128|256)(?:\.|$)")
# Tensor-core instruction families: Hopper warpgroup MMA (HGMMA; QGMMA for fp8), warp-level MMA.
_TENSOR_CORE_OPS = ("HGMMA", "QGMMA", "IGMMA", "HMMA", "IMMA", "DMMA", "UTCHMMA", "UTCQMMA")


def sass_summary(sass: str) -> dict[str, Any]:
    """Counts what matters for a diagnosis in one kernel's SASS: global memory access widths, async
    copies (cp.async, TMA) and tensor-core instructions by family."""
    mnemonics = _SASS_INSTRUCTION.findall(sass)
    loads = [m for m in mnemonics if m.startswith("LDG.") or m == "LDG"]
    stores = [m for m in mnemonics if m.startswith("STG.") or m == "STG"]

    def widest(ops: list[str]) -> Counter[str]:
        widths: Counter[str] = Counter()
        for op in ops:
            match = _VECTOR_WIDTH.search(op)
            widths[match.group(1) if match else "32_or_less"] += 1
        return widths

    tensor: Counter[str] = Counter()
    for mnemonic in mnemonics:
        family = mnemonic.split(".", 1)[0]
        if family in _TENSOR_CORE_OPS:
            tensor[family] += 1
    return {
        "instructions": len(mnemonics),
        "global_loads": len(loads),
        "global_load_widths": dict(widest(loads)),
        "global_stores": len(stores),
        "global_store_widths": dict(widest(stores)),
        "async_copies": sum(1 for m in mnemonics if m.startswith("LDGSTS")),
        "tma_copies": sum(1 for m in mnemonics if m.startswith(("UTMALDG", "UTMASTG", "UBLKCP"))),
        "tensor_core": dict(tensor),
    }


class LaunchedKernels:
    """The compiled kernels launched while `recording` is set, with their launch counts.

    JITFunction.run returns the CompiledKernel it launched: that is the variant (one autotuner config,
    one specialisation) that actually ran, not every variant the function compiled.
    """

    def __init__(self) -> None:
        self.recording = False
        self.compiled: dict[int, tuple[Any, str]] = {}
        self.launches: Counter[int] = Counter()

    def install(self) -> None:
        from triton.runtime.jit import JITFunction

        original: Callable[..., Any] = JITFunction.run
        launched = self

        def run(kernel: Any, *args: Any, **kwargs: Any) -> Any:
            compiled = original(kernel, *args, **kwargs)
            if launched.recording and hasattr(compiled, "metadata"):
                source = getattr(getattr(kernel, "fn", None), "__name__", None) or str(kernel)
                launched.compiled.setdefault(id(compiled), (compiled, source))
                launched.launches[id(compiled)] += 1
            return compiled

        JITFunction.run = run  # type: ignore[method-assign]


def kernel_facts(compiled: Any, source_name: str, launches: int) -> dict[str, Any]:
    """What one compiled Triton kernel says about itself."""
    metadata = compiled.metadata
    facts: dict[str, Any] = {
        "name": str(getattr(metadata, "name", source_name)),
        "source_name": source_name,
        "launches": launches,
        "registers": getattr(compiled, "n_regs", None),
        "spilled_registers": getattr(compiled, "n_spills", None),
        "shared_bytes": getattr(metadata, "shared", None),
        "num_warps": getattr(metadata, "num_warps", None),
        "num_stages": getattr(metadata, "num_stages", None),
        "num_ctas": getattr(metadata, "num_ctas", None),
    }
    try:
        facts["sass"] = sass_summary(compiled.asm["sass"])
    except Exception as error:  # noqa: BLE001 - a missing disassembler is reported, not fatal
        facts["sass"] = None
        facts["sass_unavailable"] = f"{type(error).__name__}: {error}"
    return facts


def profile(args: argparse.Namespace) -> dict[str, Any]:
    device = select_device(args.device)
    if device.type != "cuda":
        raise WorkerError("usage", "the profiler needs a CUDA device: the interpreter compiles no kernel")
    torch.cuda.set_device(device)
    launched = LaunchedKernels()
    launched.install()  # before the candidate is imported, so its kernels' launches are seen
    problem = load_module_from_path(args.problem, "kforge_problem")
    sizes = apply_size_overrides(problem, args.small, dict(args.size))
    torch.manual_seed(args.seed)
    init_inputs = list(problem.get_init_inputs())
    candidate = load_module_from_path(args.candidate, CANDIDATE_MODULE)
    torch.manual_seed(args.seed)
    model = candidate.ModelNew(*init_inputs).to(device)
    torch.manual_seed(args.seed)
    inputs = [to_device(value, device) for value in problem.get_inputs()]
    with torch.no_grad():
        model(*inputs)  # compiles and autotunes outside the profiled range
        torch.cuda.synchronize()
        launched.recording = True
        torch.cuda.profiler.start()
        for _ in range(args.repeats):
            model(*inputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        launched.recording = False
    kernels = [
        kernel_facts(compiled, source, launched.launches[key])
        for key, (compiled, source) in launched.compiled.items()
    ]
    properties = torch.cuda.get_device_properties(device)
    return {
        "device": properties.name,
        "compute_capability": f"{properties.major}.{properties.minor}",
        "sm_count": properties.multi_processor_count,
        "sizes": sizes,
        "profiled_forwards": args.repeats,
        "kernels": kernels,
    }


def _size_pair(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    if not name or not value:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problem", required=True)
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--out", required=True, help="where the JSON result goes")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeats", type=int, default=1, help="profiled forward calls")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--size", type=_size_pair, action="append", default=[])
    args = parser.parse_args()
    try:
        result: dict[str, Any] = profile(args)
    except WorkerError as error:
        result = {"error": {"kind": error.kind, "message": error.message}}
    except Exception as error:  # noqa: BLE001 - the candidate's failure is the result, not a crash
        result = {
            "error": {
                "kind": "candidate",
                "message": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc(limit=8),
            }
        }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0 if "error" not in result else 1


if __name__ == "__main__":
    sys.exit(main())
