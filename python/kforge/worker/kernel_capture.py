"""Kernel mode's inputs from a kernel file's own test block (docs/kernel-mode.md).

Runs the file's code, then its test block (the part after a line of at least 20 '#' characters, as in
TritonBench-G files) with the wrapper `--entry` replaced by a recorder, and writes the arguments of one
recorded call as an inputs spec: each tensor's shape and dtype with the value range it had (floats
uniform in [min, max], integers in [min, max]), each scalar as its value. The largest call (by tensor
bytes) is taken unless --case picks another. Without --entry the wrapper is found: the first function of
the file (not a Triton kernel) that the test block itself calls. Every failure becomes an answer with a
stage and a reason.

  python -m kforge.worker.kernel_capture --kernel FILE.py [--entry NAME] --out RESULT.json [--case K]
"""

from __future__ import annotations

import argparse
import ast
import inspect
import sys
import types
from pathlib import Path
from typing import Any

import torch

from kforge.worker.answers import StagedError, write_answer
from kforge.worker.interpreter import use_interpreter_without_a_gpu
from kforge.worker.test_block import MIN_SEPARATOR, split_test_block

DTYPES = {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"}


class CaptureError(StagedError):
    """A capture failure with its stage."""


def describe_argument(index: int, value: Any) -> dict[str, Any]:
    """One argument as a spec entry (what kforge's generated get_inputs draws from)."""
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
                entry.update(low=float(low), high=float(high))
            else:
                entry.update(low=int(low), high=int(high) + 1)
        return entry
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    raise CaptureError(
        "capture",
        f"argument {index} is a {type(value).__name__}; kernel mode takes tensors, numbers, strings and "
        "None: write a spec (--inputs) or a get_inputs() instead",
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


def find_entry(code: str, test_block: str) -> str:
    """The first function defined in `code` (not a Triton kernel) that `test_block` calls by name."""
    try:
        defined = {
            node.name
            for node in ast.parse(code).body
            if isinstance(node, ast.FunctionDef) and not is_triton_kernel(node)
        }
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
    return called[0][2]


def record_calls(path: Path, entry: str | None) -> tuple[str, list[list[Any]]]:
    """The entry (found when not given) and the positional arguments of every call the test block makes."""
    code, test_block, first_line = split_test_block(path.read_text())
    if not test_block:
        raise CaptureError("usage", f"{path} has no test block (a line of at least {MIN_SEPARATOR} '#')")
    entry = entry or find_entry(code, test_block)
    try:
        module = load_module(path, code)
    except Exception as failure:  # noqa: BLE001 - the file's own error, reported with its trace
        raise CaptureError("import", f"{type(failure).__name__}: {failure}") from None
    wrapper = module.__dict__.get(entry)
    if not callable(wrapper):
        raise CaptureError("usage", f"{path} has no function {entry}; --entry names the wrapper")
    signature = inspect.signature(wrapper)
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in signature.parameters.values()):
        raise CaptureError(
            "usage", f"{entry}{signature}: kernel mode calls the wrapper with positional arguments only"
        )
    calls: list[list[Any]] = []

    def recorder(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        calls.append(
            [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in bound.arguments.values()]
        )
        return wrapper(*args, **kwargs)

    module.__dict__[entry] = recorder
    try:
        exec(compile("\n" * (first_line - 1) + test_block, str(path), "exec"), module.__dict__)
    except Exception as failure:  # noqa: BLE001 - the test block's own error
        raise CaptureError(
            "test-block", f"the test block failed: {type(failure).__name__}: {failure}"
        ) from None
    if not calls:
        raise CaptureError("test-block", f"the test block never called {entry}")
    return entry, calls


def tensor_bytes(arguments: list[Any]) -> int:
    return sum(v.numel() * v.element_size() for v in arguments if isinstance(v, torch.Tensor))


def capture(path: Path, entry: str | None, case: int | None) -> dict[str, Any]:
    use_interpreter_without_a_gpu()
    entry, calls = record_calls(path, entry)
    if case is not None and not 0 <= case < len(calls):
        raise CaptureError("usage", f"--case {case}: the test block called {entry} {len(calls)} times")
    chosen = case if case is not None else max(range(len(calls)), key=lambda i: tensor_bytes(calls[i]))
    inputs = [describe_argument(i, value) for i, value in enumerate(calls[chosen])]
    return {"spec": {"inputs": inputs}, "entry": entry, "calls": len(calls), "case": chosen}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kforge.worker.kernel_capture", description=__doc__)
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--entry", default=None, help="the wrapper; default: the one the test block calls")
    parser.add_argument("--out", required=True, help="where the JSON result goes")
    parser.add_argument("--case", type=int, default=None, help="which call (from 0); default: the largest")
    arguments = parser.parse_args(argv)
    return write_answer(
        arguments.out, lambda: capture(Path(arguments.kernel), arguments.entry, arguments.case)
    )


if __name__ == "__main__":
    sys.exit(main())
