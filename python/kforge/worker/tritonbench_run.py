"""Runs one TritonBench file, code and test block, as TritonBench's call accuracy does (docs/tritonbench.md).

The file is the model's code (or the gold code), a separator line of '#' and the gold test block. With
--keep-imports-and-functions the code part is first cut down to its imports and function definitions,
TritonBench-G's rule for a model's answer. The file runs as one module with the RNG seeded, its stdout
(Python's and the C level's) captured; the values the test block binds at its top level
(`result_gold = test_x()`) are saved with torch.save for kforge.worker.tritonbench_compare. Memory torch
allocates uninitialized is NaN-filled (kforge.worker.uninitialized), so what the file leaves unwritten is
the same on every run. Every failure becomes an answer with a stage and a reason; a crash or hang leaves
no answer, which is a failed call. The answer's "may_hold_poison" says whether some saved number holds
the fill (NaN, an integer type's maximum): kforge then runs the gold file again with --second-poison
(what it allocates uninitialized holds another value), and kforge.worker.tritonbench_compare excludes
the elements whose value followed the poison, which the gold leaves undefined.

With --capture (the gold file's run) the wrapper is recorded while the test block runs, as
kforge.worker.kernel_capture does, and the answer's "capture" holds kernel mode's inputs spec, the entry
and the arguments the wrapper writes (or "capture_error", which does not fail the run): one run of the
gold file serves execution accuracy and kforge's verdict.

  python -m kforge.worker.tritonbench_run --file F.py --out RESULT.json --values VALUES.pt
      [--keep-imports-and-functions] [--seed 0] [--capture [--entry NAME] [--case K]]
      [--no-poison | --second-poison]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

from kforge.worker.answers import StagedError, write_answer
from kforge.worker.interpreter import use_interpreter_without_a_gpu
from kforge.worker.test_block import MIN_SEPARATOR, split_test_block

MAX_STDOUT = 1 << 20  # bytes of stdout kept (compared for execution accuracy)
MAX_DEPTH = 8  # nesting of containers in a test block's values


class RunError(StagedError):
    """A run failure with its stage (syntax, run, usage)."""


def imports_and_functions(code: str) -> str:
    """TritonBench-G's filter of a model's answer: its imports and function definitions, in order."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code  # TritonBench keeps unparsable code as it is; running it then fails
    kept = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef))]
    return "\n\n".join(ast.unparse(node) for node in kept) + "\n"


def bound_names(test_block: str) -> list[str]:
    """Names the test block binds at its top level (`result_gold = ...`), the values it produces."""
    try:
        tree = ast.parse(test_block)
    except SyntaxError as failure:
        raise RunError("syntax", f"the test block does not parse: {failure}") from None
    names: list[str] = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for target in targets:
            if isinstance(target, ast.Name) and target.id not in names:
                names.append(target.id)
    return names


def portable(value: Any, depth: int = 0) -> Any:
    """A value torch.load(weights_only=True) can read back: tensors on the CPU, containers, scalars."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if value is None or isinstance(value, (bool, int, float, str, complex)):
        return value
    if depth >= MAX_DEPTH:
        return f"<{type(value).__name__} nested too deep>"
    if isinstance(value, dict):
        return {str(key): portable(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [portable(item, depth + 1) for item in value]
    return f"<{type(value).__name__}>"


def may_hold_poison(value: Any) -> bool:
    """Whether a saved value holds torch's fill somewhere in a number tensor (NaN, an integer maximum):
    only then can the gold have left an element undefined. Bool tensors are left out (True is both the
    fill and a common answer, and a second run of the gold for every bool result costs more than it finds)."""
    import torch

    from kforge.worker.timed_outputs import tensors_in
    from kforge.worker.uninitialized import may_hold_poison as tensor_may_hold_poison

    return any(tensor.dtype != torch.bool and tensor_may_hold_poison(tensor) for tensor in tensors_in(value))


class Capture:
    """The wrapper recorded while the test block runs (--capture): kernel mode's inputs and writes."""

    def __init__(self, entry: str | None, case: int | None) -> None:
        self.entry, self.case = entry, case
        self.recorder: Any = None
        self.error: dict[str, str] | None = None

    def install(self, namespace: dict[str, Any], code: str, test_block: str) -> None:
        from kforge.worker.kernel_capture import CaptureError, install_recorder

        try:
            self.recorder = install_recorder(namespace, code, test_block, self.entry, self.case)
        except CaptureError as failure:
            self.error = {"stage": failure.stage, "error": str(failure)}

    def call_uncalled_tests(self, namespace: dict[str, Any], test_block: str) -> None:
        """After the run (its stdout and values kept as TritonBench sees them): a test block that never
        called the wrapper has its uncalled test functions called, for the capture alone."""
        from kforge.worker.kernel_capture import CaptureError

        if self.recorder is None or self.error is not None:
            return
        try:
            with CapturedStdout():  # their prints are not the file's output
                self.recorder.call_uncalled_tests(namespace, test_block)
        except CaptureError as failure:
            self.error = {"stage": failure.stage, "error": str(failure)}

    def answer(self) -> dict[str, Any]:
        from kforge.worker.kernel_capture import CaptureError

        if self.error is not None or self.recorder is None:
            return {"capture_error": self.error or {"stage": "internal", "error": "no recorder"}}
        try:
            return {"capture": self.recorder.answer()}
        except CaptureError as failure:
            return {"capture_error": {"stage": failure.stage, "error": str(failure)}}


# What torch says when code asks for CUDA on a machine without it: the machine's lack, not the file's.
NO_GPU_MESSAGES = (
    "Found no NVIDIA driver",
    "Torch not compiled with CUDA enabled",
    "No CUDA GPUs are available",
    "no CUDA-capable device is detected",
)


def _needs_a_gpu(failure: BaseException) -> bool:
    import torch

    return not torch.cuda.is_available() and any(message in str(failure) for message in NO_GPU_MESSAGES)


def _execute(code: Any, namespace: dict[str, Any]) -> None:
    try:
        exec(code, namespace)  # the file under test; a model's answer runs in the sandbox
    except SystemExit as failure:
        if failure.code not in (None, 0):
            raise RunError("run", f"the file exited with {failure.code!r}") from None
    except BaseException as failure:  # noqa: BLE001 - the file's own error is the answer
        if _needs_a_gpu(failure):
            raise RunError(
                "environment",
                f"it creates CUDA tensors and this machine has no GPU ({type(failure).__name__}: "
                f"{failure}); judge TritonBench items on a GPU machine (--device cuda:N)",
            ) from None
        raise RunError("run", f"{type(failure).__name__}: {failure}") from None


def run_module(
    path: Path, code_part: str, test_block: str, seed: int, capture: Capture | None = None
) -> dict[str, Any]:
    """Executes the code and then the test block as the module __main__ (compiled under `path`, whose file
    holds both, one after the other); with `capture`, the wrapper is recorded in between."""
    import torch

    torch.manual_seed(seed)
    module = types.ModuleType("__main__")
    module.__file__ = str(path)
    sys.modules["__main__"] = module
    test_offset = "\n" * code_part.count("\n")  # the test block keeps its line numbers in the file
    try:
        # dont_inherit: this module's `from __future__ import annotations` must not reach the file, whose
        # annotations Python evaluates (a name they use but never import is the file's own error).
        code = compile(code_part, str(path), "exec", dont_inherit=True)
        test = compile(test_offset + test_block, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as failure:
        raise RunError("syntax", f"{type(failure).__name__}: {failure}") from None
    _execute(code, module.__dict__)
    if capture is not None:
        capture.install(module.__dict__, code_part, test_block)
    _execute(test, module.__dict__)
    if torch.cuda.is_available():
        torch.cuda.synchronize()  # a kernel fault surfaces here, inside the call
    return module.__dict__


class CapturedStdout:
    """fd 1 redirected to a file while the module runs: print() and Triton's device prints alike."""

    def __enter__(self) -> CapturedStdout:
        sys.stdout.flush()
        self.file = tempfile.TemporaryFile()
        self.saved = os.dup(1)
        os.dup2(self.file.fileno(), 1)
        return self

    def __exit__(self, *_: object) -> None:
        sys.stdout.flush()
        os.dup2(self.saved, 1)
        os.close(self.saved)

    def text(self) -> str:
        self.file.seek(0)
        return self.file.read(MAX_STDOUT).decode("utf-8", errors="replace")


def run(
    path: Path,
    values: Path,
    keep_imports_and_functions: bool,
    seed: int,
    capture: Capture | None = None,
    poisoned: bool = True,
    second_poison: bool = False,
) -> dict[str, Any]:
    code, test_block, _ = split_test_block(path.read_text(errors="replace"))
    if not test_block:
        raise RunError("usage", f"{path} has no test block (a line of at least {MIN_SEPARATOR} '#')")
    if keep_imports_and_functions:
        code = imports_and_functions(code)
    names = bound_names(test_block)
    code_part = code.rstrip("\n") + "\n"
    # triton.jit reads each kernel's source back from the file: the file must hold what runs.
    runnable = values.parent / f"run_{path.name}"
    runnable.write_text(code_part + test_block)
    use_interpreter_without_a_gpu()
    import torch

    from kforge.worker.uninitialized import (
        uninitialized_memory_poisoned,
        uninitialized_memory_poisoned_differently,
    )

    captured = (lambda: capture.answer()) if capture is not None else dict
    # Poisoned as the verdict's runs are: an element the gold leaves unwritten (a torch.empty output
    # filled in part) is NaN in the gold's values and in a right answer's alike, and compares equal.
    # Unpoisoned only where the gold's own test block needs it (it reads memory it never wrote).

    def poisoning() -> contextlib.AbstractContextManager[Any]:
        if not poisoned:
            return contextlib.nullcontext()
        if second_poison:
            return uninitialized_memory_poisoned_differently()
        return uninitialized_memory_poisoned()

    with CapturedStdout() as stdout, poisoning():
        try:
            namespace = run_module(runnable, code_part, test_block, seed, capture)
        except RunError as failure:
            return {
                "ok": False,
                "stage": failure.stage,
                "error": str(failure),
                "code": code,
                "stdout": stdout.text(),
                **captured(),
            }
    saved = {name: portable(namespace.get(name)) for name in names}
    torch.save(saved, values)
    text = stdout.text()
    if capture is not None:
        with poisoning():
            capture.call_uncalled_tests(namespace, test_block)
    return {
        "ok": True,
        "code": code,
        "stdout": text,
        "values": names,
        "may_hold_poison": poisoned and may_hold_poison(saved),
        **captured(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kforge.worker.tritonbench_run", description=__doc__)
    parser.add_argument("--file", required=True, help="code, separator line, test block")
    parser.add_argument("--out", required=True, help="where the JSON result goes")
    parser.add_argument("--values", required=True, help="where the test block's values go (torch.save)")
    parser.add_argument("--keep-imports-and-functions", action="store_true", help="TritonBench-G's filter")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--capture", action="store_true", help="record the wrapper: kernel mode's inputs")
    parser.add_argument("--entry", default=None, help="--capture: the wrapper (default: found)")
    parser.add_argument("--case", type=int, default=None, help="--capture: which call (default: largest)")
    poison = parser.add_mutually_exclusive_group()
    poison.add_argument(
        "--no-poison", action="store_true", help="leave torch.empty memory as it is (a gold that reads it)"
    )
    poison.add_argument(
        "--second-poison",
        action="store_true",
        help="fill uninitialized allocations with a second value (finds what the gold leaves undefined)",
    )
    arguments = parser.parse_args(argv)
    capture = Capture(arguments.entry, arguments.case) if arguments.capture else None
    return write_answer(
        arguments.out,
        lambda: run(
            Path(arguments.file),
            Path(arguments.values),
            arguments.keep_imports_and_functions,
            arguments.seed,
            capture,
            poisoned=not arguments.no_poison,
            second_poison=arguments.second_poison,
        ),
        ok=False,
    )


if __name__ == "__main__":
    sys.exit(main())
