"""Kernel mode's inputs from a kernel file's own test block, and the arguments its wrapper writes
(docs/kernel-mode.md).

Runs the file's code, then its test block (the part after a line of at least 20 '#' characters, as in
TritonBench-G files) with the wrapper `--entry` replaced by a recorder, and writes the arguments of one
recorded call as an inputs spec: each tensor's shape and dtype with the value range it had (floats
uniform in [min, max], integers in [min, max]), each scalar as its value. The largest call (by tensor
bytes) is taken unless --case picks another. Without --entry the wrapper is found: the first function of
the file (not a Triton kernel) that the test block itself calls. The recorded call's tensor arguments are
compared before and after it: those it changed are the arguments the wrapper writes ("writes"), which
kernel mode then compares like returned outputs.

With --probe the inputs come from a generated kernel-mode problem instead (its get_inputs(), the spec's
or the file's own): the wrapper is called once on them and only "writes" and "returns_none" are answered.
Every failure becomes an answer with a stage and a reason.

  python -m kforge.worker.kernel_capture --kernel FILE.py [--entry NAME] --out RESULT.json [--case K]
  python -m kforge.worker.kernel_capture --probe PROBLEM.py --entry NAME --out RESULT.json
      [--small] [--size NAME=VALUE ...] [--seed S]
"""

from __future__ import annotations

import argparse
import ast
import inspect
import math
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from kforge.worker.answers import StagedError, write_answer
from kforge.worker.correctness import mutated_inputs
from kforge.worker.interpreter import use_interpreter_without_a_gpu
from kforge.worker.test_block import MIN_SEPARATOR, split_test_block

DTYPES = {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"}


class CaptureError(StagedError):
    """A capture failure with its stage."""


MAX_KEPT_INTEGERS = 4096  # integer tensors up to this size are kept as captured (offsets, lengths, indices)


def integer_structure(value: torch.Tensor) -> dict[str, Any]:
    """What fresh draws of an integer tensor must keep: small ones (batch offsets, sequence lengths,
    index lists) exactly as captured, since their values tie to each other and to other arguments; of
    larger ones whether the values were distinct (a permutation, scatter destinations: duplicates
    would race) and sorted (offsets)."""
    flat = value.detach().reshape(-1).cpu()
    if flat.numel() <= MAX_KEPT_INTEGERS:
        return {"values": [int(item) for item in flat.tolist()]}
    structure: dict[str, Any] = {}
    if torch.unique(flat).numel() == flat.numel():
        structure["unique"] = True
    if bool((flat[1:] >= flat[:-1]).all()):
        structure["sorted"] = True
    return structure


def describe_argument(index: int, value: Any, written: bool = False) -> dict[str, Any]:
    """One argument as a spec entry (what kforge's generated get_inputs draws from). An argument the
    wrapper writes whose values are not finite (a torch.empty output) is drawn as zeros."""
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        if dtype not in DTYPES:
            raise CaptureError(
                "capture", f"argument {index} is a {dtype} tensor; kernel mode's specs take {sorted(DTYPES)}"
            )
        entry: dict[str, Any] = {"shape": list(value.shape), "dtype": dtype}
        if value.numel() and dtype != "bool":
            low, high = value.min().item(), value.max().item()
            if value.is_floating_point():
                if math.isfinite(low) and math.isfinite(high):
                    entry.update(low=float(low), high=float(high))
                elif written:
                    entry.update(low=0.0, high=0.0)
            else:
                entry.update(low=int(low), high=int(high) + 1)
                entry.update(integer_structure(value))
        return entry
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    if isinstance(value, (tuple, list)) and all(
        item is None or isinstance(item, (bool, int, float, str)) for item in value
    ):  # a window, a stride or a block-shape configuration
        return {"value": list(value), "sequence": type(value).__name__}
    raise CaptureError(
        "capture",
        f"argument {index} is a {type(value).__name__}; kernel mode takes tensors, numbers, strings, None "
        "and tuples or lists of those: write a spec (--inputs) or a get_inputs() instead",
    )


def load_module(path: Path, code: str) -> types.ModuleType:
    module = types.ModuleType("kforge_kernel_capture")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module
    # Compiled under the file's own name and line numbers: triton.jit reads each kernel's source back.
    exec(compile(code, str(path), "exec"), module.__dict__)  # the user's own file, as a problem is
    return module


def is_triton_kernel(node: ast.FunctionDef) -> bool:
    """Decorated with triton.jit / autotune / heuristics (or a bare jit): a kernel, not a wrapper."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in {"jit", "autotune", "heuristics"}:
            return True
    return False


def _launching_functions(tree: ast.Module) -> set[str]:
    """Module-level functions from which a Triton launch (`kernel[grid](...)`) is reachable through calls
    by name to the file's own functions."""
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    kernels = {name for name, node in functions.items() if is_triton_kernel(node)}
    launching: set[str] = set()
    calls: dict[str, set[str]] = {}
    for name, node in functions.items():
        if name in kernels:
            continue
        calls[name] = set()
        for inner in ast.walk(node):
            if not isinstance(inner, ast.Call):
                continue
            launch = isinstance(inner.func, ast.Subscript)
            target = inner.func.value if launch else inner.func
            if isinstance(target, ast.Name) and target.id in kernels and launch:
                launching.add(name)
            elif isinstance(target, ast.Name) and target.id in functions:
                calls[name].add(target.id)
    changed = True
    while changed:  # callers of launching functions launch too
        grown = {name for name, called in calls.items() if called & launching}
        changed = not grown <= launching
        launching |= grown
    return launching


def find_entry(code: str, test_block: str) -> str:
    """The wrapper: the first function defined in `code` (not a Triton kernel) that `test_block` calls by
    name and from which a Triton launch is reachable; else the first it calls (a test block often prepares
    its inputs with a helper of the file, such as a quantiser, before it calls the wrapper)."""
    try:
        tree = ast.parse(code)
        functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
        defined = {node.name for node in functions if not is_triton_kernel(node)}
        calls = [node for node in ast.walk(ast.parse(test_block)) if isinstance(node, ast.Call)]
    except SyntaxError as failure:
        raise CaptureError("usage", f"the file does not parse: {failure}") from None
    called = sorted(
        (node.lineno, node.col_offset, node.func.id)
        for node in calls
        if isinstance(node.func, ast.Name) and node.func.id in defined
    )
    if not called:
        raise CaptureError(
            "usage",
            "the test block calls no function of the file by name; give --entry NAME (the wrapper)",
        )
    launching = _launching_functions(tree)
    return next((name for _, _, name in called if name in launching), called[0][2])


def tensor_bytes(arguments: list[Any]) -> int:
    return sum(v.numel() * v.element_size() for v in arguments if isinstance(v, torch.Tensor))


def _copies(arguments: list[Any]) -> list[Any]:
    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in arguments]


def positional_signature(wrapper: Callable[..., Any], entry: str) -> inspect.Signature:
    """The wrapper's signature; kernel mode calls it positionally, so only such parameters are taken."""
    signature = inspect.signature(wrapper)
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in signature.parameters.values()):
        raise CaptureError(
            "usage", f"{entry}{signature}: kernel mode calls the wrapper with positional arguments only"
        )
    return signature


@dataclass
class RecordedCall:
    index: int  # which call of the test block (from 0)
    arguments: list[Any]  # copies of the arguments as they were before the call, keywords bound in order
    writes: list[int]  # tensor arguments whose bytes the call changed
    returned_none: bool


class CallRecorder:
    """Stands in for the wrapper while the test block runs: counts the calls and keeps one, the largest by
    tensor bytes (the first of equals) or call `case`, with the arguments it wrote."""

    def __init__(self, wrapper: Callable[..., Any], entry: str, case: int | None) -> None:
        self.wrapper, self.entry, self.case = wrapper, entry, case
        self.signature = positional_signature(wrapper, entry)
        self.calls = 0
        self.kept: RecordedCall | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = list(bound.arguments.values())
        index, self.calls = self.calls, self.calls + 1
        if not self._keeps(index, arguments):
            return self.wrapper(*args, **kwargs)
        before = _copies(arguments)
        result = self.wrapper(*args, **kwargs)
        self.kept = RecordedCall(index, before, mutated_inputs(arguments, before), result is None)
        return result

    def _keeps(self, index: int, arguments: list[Any]) -> bool:
        if self.case is not None:
            return index == self.case
        return self.kept is None or tensor_bytes(arguments) > tensor_bytes(self.kept.arguments)

    def answer(self) -> dict[str, Any]:
        """The kept call as an inputs spec, with the arguments it wrote."""
        if self.calls == 0 or self.kept is None:
            if self.case is not None and self.calls:
                raise CaptureError(
                    "usage", f"--case {self.case}: the test block called {self.entry} {self.calls} times"
                )
            raise CaptureError("test-block", f"the test block never called {self.entry}")
        kept = self.kept
        inputs = [describe_argument(i, value, i in kept.writes) for i, value in enumerate(kept.arguments)]
        return {
            "spec": {"inputs": inputs},
            "entry": self.entry,
            "calls": self.calls,
            "case": kept.index,
            "writes": kept.writes,
            "returns_none": kept.returned_none,
        }


def install_recorder(
    namespace: dict[str, Any], code: str, test_block: str, entry: str | None, case: int | None
) -> CallRecorder:
    """Replaces the wrapper (found from the test block when not named) in the file's namespace."""
    entry = entry or find_entry(code, test_block)
    wrapper = namespace.get(entry)
    if not callable(wrapper):
        raise CaptureError("usage", f"the file has no function {entry}; --entry names the wrapper")
    recorder = CallRecorder(wrapper, entry, case)
    namespace[entry] = recorder
    return recorder


def record_calls(path: Path, entry: str | None, case: int | None) -> CallRecorder:
    """Runs the file's code, then its test block with the wrapper recorded."""
    code, test_block, first_line = split_test_block(path.read_text())
    if not test_block:
        raise CaptureError("usage", f"{path} has no test block (a line of at least {MIN_SEPARATOR} '#')")
    entry = entry or find_entry(code, test_block)  # a file that does not parse fails before it runs
    try:
        module = load_module(path, code)
    except Exception as failure:  # noqa: BLE001 - the file's own error, reported with its trace
        raise CaptureError("import", f"{type(failure).__name__}: {failure}") from None
    recorder = install_recorder(module.__dict__, code, test_block, entry, case)
    try:
        exec(compile("\n" * (first_line - 1) + test_block, str(path), "exec"), module.__dict__)
    except Exception as failure:  # noqa: BLE001 - the test block's own error
        raise CaptureError(
            "test-block", f"the test block failed: {type(failure).__name__}: {failure}"
        ) from None
    return recorder


def capture(path: Path, entry: str | None, case: int | None) -> dict[str, Any]:
    use_interpreter_without_a_gpu()
    return record_calls(path, entry, case).answer()


def probe(problem_path: Path, entry: str, small: bool, sizes: dict[str, str], seed: int) -> dict[str, Any]:
    """The arguments the wrapper writes, from one call on the generated problem's inputs (kernel mode
    without --writes and without a test block capture)."""
    use_interpreter_without_a_gpu()
    from kforge.worker.judge import apply_size_overrides
    from kforge.worker.runtime import to_device

    try:
        module = load_module(problem_path, problem_path.read_text())
    except Exception as failure:  # noqa: BLE001 - the file's own error
        raise CaptureError("import", f"{type(failure).__name__}: {failure}") from None
    wrapper = module.__dict__.get(entry)
    if not callable(wrapper):
        raise CaptureError("usage", f"the file has no function {entry}; --entry names the wrapper")
    try:
        apply_size_overrides(module, small, sizes)
    except Exception as failure:  # noqa: BLE001 - a WorkerError saying which size
        raise CaptureError("usage", str(failure)) from None
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(seed)
    try:
        arguments = [to_device(value, device) for value in module.get_inputs()]
        before = _copies(arguments)
        result = wrapper(*arguments)
    except Exception as failure:  # noqa: BLE001 - the wrapper's own error: the verdict will say it again
        raise CaptureError("probe", f"the wrapper failed: {type(failure).__name__}: {failure}") from None
    return {"entry": entry, "writes": mutated_inputs(arguments, before), "returns_none": result is None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kforge.worker.kernel_capture", description=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--kernel", help="the kernel file, its test block at the end")
    source.add_argument("--probe", help="a generated kernel-mode problem: which arguments does entry write?")
    parser.add_argument("--entry", default=None, help="the wrapper; default: the one the test block calls")
    parser.add_argument("--out", required=True, help="where the JSON result goes")
    parser.add_argument("--case", type=int, default=None, help="which call (from 0); default: the largest")
    parser.add_argument("--small", action="store_true", help="--probe: the problem's KFORGE_SMALL sizes")
    parser.add_argument("--size", action="append", default=[], help="--probe: NAME=VALUE size override")
    parser.add_argument("--seed", type=int, default=42, help="--probe: the seed of get_inputs()")
    arguments = parser.parse_args(argv)
    if arguments.probe:
        sizes = dict(pair.split("=", 1) for pair in arguments.size)
        return write_answer(
            arguments.out,
            lambda: probe(
                Path(arguments.probe), arguments.entry or "", arguments.small, sizes, arguments.seed
            ),
        )
    return write_answer(
        arguments.out, lambda: capture(Path(arguments.kernel), arguments.entry, arguments.case)
    )


if __name__ == "__main__":
    sys.exit(main())
