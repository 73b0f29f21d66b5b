"""The inductor teacher: a problem's torch.compile output as a standalone Triton candidate.

`python -m kforge.worker.inductor_teacher --problem P --out RESULT.json [--device auto] [--small]
[--sizes JSON] [--do-bench] [--capture-in F | --capture-out F]` compiles the problem's Model with
Inductor on the GPU (inductor_capture.py), rewrites the generated code into a candidate that imports
only torch and triton (inductor_standalone.py) and writes {"candidate": text} to RESULT.json, or
{"error": why, "stage": ...}; `--do-bench` keeps do_bench's eager and compiled times in the capture.
`--capture-in` rewrites a capture saved earlier (with `--capture-out`, on a GPU) and needs no GPU.
The problem is trusted code (the reference); the candidate is verified afterwards like any other, so
nothing here decides whether it is correct.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import torch

from kforge.worker.answers import write_answer
from kforge.worker.judge import apply_size_overrides
from kforge.worker.protocol import WorkerError
from kforge.worker.runtime import load_module_from_path, select_device, to_device

CAPTURE_SEED = 0


def capture_problem(
    problem_path: Path, device_spec: str, small: bool, sizes: dict[str, Any], timed: bool = False
) -> dict[str, Any]:
    from kforge.train.inductor_capture import capture

    device = select_device(device_spec)
    if device.type != "cuda":
        raise WorkerError(
            "environment",
            "the inductor teacher compiles for the GPU and sees none; on a machine without one, rewrite "
            "captures made on a GPU (kforge data sft --captures DIR)",
        )
    problem = load_module_from_path(str(problem_path), "kforge_problem")
    apply_size_overrides(problem, small, sizes)
    torch.manual_seed(CAPTURE_SEED)
    model = problem.Model(*problem.get_init_inputs()).to(device).eval()
    inputs = [to_device(value, device) for value in problem.get_inputs()]
    record = capture(model, inputs, timed=timed)
    record["problem"] = {"small": small, "sizes": sizes, "device": torch.cuda.get_device_name(device)}
    return record


def teach(arguments: argparse.Namespace) -> dict[str, Any]:
    from kforge.train.inductor_capture import CaptureError
    from kforge.train.inductor_standalone import StandaloneError, standalone_candidate

    problem_path = Path(arguments.problem)
    try:
        problem_source = problem_path.read_text()
    except OSError as failure:
        return {"error": f"cannot read the problem: {failure}", "stage": "usage"}
    try:
        if arguments.capture_in:
            record = json.loads(Path(arguments.capture_in).read_text())
        else:
            record = capture_problem(
                problem_path,
                arguments.device,
                arguments.small,
                json.loads(arguments.sizes),
                arguments.do_bench,
            )
            if arguments.capture_out:
                Path(arguments.capture_out).write_text(json.dumps(record, indent=1, default=str) + "\n")
    except CaptureError as failure:
        return {"error": str(failure), "stage": "capture"}
    except StandaloneError as failure:  # the capture itself met code that is not Triton (a CPU kernel)
        return {"error": str(failure), "stage": "standalone"}
    except WorkerError as failure:
        return {"error": failure.message, "stage": failure.kind}
    except (OSError, ValueError) as failure:
        return {"error": f"cannot read the capture: {failure}", "stage": "usage"}
    try:
        return {
            "candidate": standalone_candidate(record, problem_source),
            "kernels": len(record["kernels"]),
        }
    except StandaloneError as failure:
        return {"error": str(failure), "stage": "standalone"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kforge.worker.inductor_teacher", description=__doc__)
    parser.add_argument("--problem", required=True, help="the problem's problem.py")
    parser.add_argument("--out", required=True, help="where the JSON result goes")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--small", action="store_true", help="the problem's KFORGE_SMALL sizes")
    parser.add_argument("--sizes", default="{}", help="size overrides as a JSON object")
    parser.add_argument(
        "--do-bench",
        action="store_true",
        help="also time eager and compiled forwards with triton.testing.do_bench (kept in the capture)",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--capture-in", help="rewrite this saved capture instead of compiling")
    source.add_argument("--capture-out", help="also save the capture here")
    arguments = parser.parse_args(argv)
    return write_answer(arguments.out, lambda: teach(arguments))


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # The answer is on disk; the interpreter's teardown (Inductor's compile workers, the CUDA context)
    # took 20-33 s per capture on an H200, a third of each compile.
    os._exit(code)
