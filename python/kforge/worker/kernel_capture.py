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

from kforge.worker import argument_objects
from kforge.worker.answers import StagedError, write_answer
from kforge.worker.correctness import mutated_inputs
from kforge.worker.interpreter import use_interpreter_without_a_gpu
from kforge.worker.test_block import MIN_SEPARATOR, split_test_block
from kforge.worker.timed_outputs import cloned, tensor_bytes, tensors_in
from kforge.worker.values import is_triton_dtype

DTYPES = {
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "int8", "int16", "int32", "int64", "uint8", "bool",
}  # fmt: skip


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


MAX_SEQUENCE_ITEMS = 1024  # items of one sequence argument (kernel_problem.cpp's limit)

PARAMETER_SPREAD = 0.5  # a module parameter captured at one value (weight 1) is drawn this far around it


def is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _holding(value: Any) -> str:
    """What a refused sequence holds, for its error ("a list of 3 Tensor")."""
    if isinstance(value, (tuple, list)) and value:
        kinds = sorted({type(item).__name__ for item in value})
        return f" of {len(value)} {'/'.join(kinds)}"
    return ""


def is_literal(value: Any) -> bool:
    """Nested tuples and lists of scalars that Python's literal syntax gives back exactly (not nan)."""
    try:
        return bool(ast.literal_eval(repr(value)) == value)
    except (ValueError, SyntaxError, RecursionError):
        return False


def describe_object(where: str, value: Any, depth: int = 0) -> dict[str, Any]:
    """An object argument (a module, a config) as its class and attributes (docs/kernel-mode.md). A module
    parameter captured at a single value (a fresh LayerNorm's weight 1 and bias 0) is drawn around it, so
    a kernel that skips the affine step cannot pass on a freshly built module."""
    if depth >= argument_objects.MAX_DEPTH:
        raise CaptureError("capture", f"{where} nests objects deeper than {argument_objects.MAX_DEPTH}")
    try:
        attributes, parameters, buffers = argument_objects.object_parts(value)
    except ValueError as why:
        raise CaptureError(
            "capture", f"{where} is {why}; kernel mode rebuilds modules of parameters and plain attributes"
        ) from None
    described: dict[str, Any] = {}
    for name, item in attributes.items():
        inner = f"{where}.{name}"
        if argument_objects.is_argument_object(item):
            described[name] = describe_object(inner, item, depth + 1)
            continue
        entry = describe_argument(inner, item)
        if name in parameters and entry.get("low") is not None and entry["low"] == entry.get("high"):
            entry.update(low=entry["low"] - PARAMETER_SPREAD, high=entry["high"] + PARAMETER_SPREAD)
        described[name] = entry
    return {
        "object": type(value).__name__,
        "torch_nn": argument_objects.is_torch_module(value),
        "attributes": described,
        "parameters": parameters,
        "buffers": buffers,
    }


def describe_argument(where: int | str, value: Any, written: bool = False) -> dict[str, Any]:
    """One argument as a spec entry (what kforge's generated get_inputs draws from). An argument the
    wrapper writes whose values are not finite (a torch.empty output) is drawn as zeros. `where` names
    the argument in errors (its index, or the attribute of an object argument)."""
    if isinstance(where, int):
        where = f"argument {where}"
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        if dtype not in DTYPES:
            raise CaptureError(
                "capture", f"{where} is a {dtype} tensor; kernel mode's specs take {sorted(DTYPES)}"
            )
        entry: dict[str, Any] = {"shape": list(value.shape), "dtype": dtype}
        if value.numel() and dtype != "bool" and not value.is_complex():  # complex: drawn from randn
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
    if isinstance(value, torch.dtype):
        return {"torch_dtype": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"device": str(value)}  # drawn as the evaluation's device
    if is_triton_dtype(value):
        return {"triton_dtype": value.name}
    if isinstance(value, (tuple, list)) and all(is_scalar(item) for item in value):
        # a window, a stride or a block-shape configuration
        return {"value": list(value), "sequence": type(value).__name__}
    if isinstance(value, dict) and all(isinstance(k, str) and is_scalar(v) for k, v in value.items()):
        return {"value": dict(value)}  # launch options (`**config.kwargs`)
    if argument_objects.is_tensor_sequence(value):  # torch.hstack's `tensors`: each item its own entry
        if len(value) > MAX_SEQUENCE_ITEMS:
            raise CaptureError(
                "capture",
                f"{where} is a sequence of {len(value)} items; at most "
                f"{MAX_SEQUENCE_ITEMS} are captured: write a spec (--inputs) instead",
            )
        items = [describe_argument(f"{where}[{index}]", item) for index, item in enumerate(value)]
        return {"items": items, "sequence": type(value).__name__}
    if isinstance(value, (tuple, list)) and is_literal(value):
        return {"literal": repr(value)}  # nested: tensordot's dims ([1], [0])
    if argument_objects.is_argument_object(value):
        return describe_object(where, value)
    raise CaptureError(
        "capture",
        f"{where} is a {type(value).__name__}{_holding(value)}; kernel mode takes tensors, numbers, strings, "
        "None, (nested) tuples and lists of those and of tensors, dicts of numbers, strings and None, "
        "torch and Triton dtypes and devices, and objects (modules, configs) made of those: write a spec "
        "(--inputs) or a get_inputs() instead",
    )


def load_module(path: Path, code: str) -> types.ModuleType:
    module = types.ModuleType("kforge_kernel_capture")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module
    # Compiled under the file's own name and line numbers: triton.jit reads each kernel's source back.
    # dont_inherit: not this module's `from __future__ import annotations` (as a problem is imported)
    exec(compile(code, str(path), "exec", dont_inherit=True), module.__dict__)
    return module


def is_triton_kernel(node: ast.FunctionDef) -> bool:
    """Decorated with triton.jit / autotune / heuristics (or a bare jit): a kernel, not a wrapper."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in {"jit", "autotune", "heuristics"}:
            return True
    return False


def _launches(node: ast.AST, kernels: set[str]) -> bool:
    """Whether `node` contains a launch `kernel[grid](...)` of one of the file's kernels."""
    return any(
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Subscript)
        and isinstance(inner.func.value, ast.Name)
        and inner.func.value.id in kernels
        for inner in ast.walk(node)
    )


def _called_names(node: ast.AST) -> set[str]:
    """Names `node` calls directly, and the receivers of the methods it calls (`Fn.apply(...)` calls
    into the class Fn, an autograd Function of the file)."""
    called: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name):
            called.add(inner.func.id)
        elif (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and isinstance(inner.func.value, ast.Name)
        ):
            called.add(inner.func.value.id)
    return called


def _launching_functions(tree: ast.Module, aliases: dict[str, str]) -> set[str]:
    """Module-level callables (functions, classes such as autograd Functions, aliases like
    `f = Fn.apply`) from which a Triton launch (`kernel[grid](...)`) is reachable through calls by name
    to the file's own functions and classes."""
    bodies: dict[str, ast.AST] = {}
    kernels: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            if is_triton_kernel(node):
                kernels.add(node.name)
            else:
                bodies[node.name] = node
        elif isinstance(node, ast.ClassDef):
            bodies[node.name] = node
    callables = set(bodies) | set(aliases)
    launching = {name for name, body in bodies.items() if _launches(body, kernels)}
    calls = {name: _called_names(body) & callables for name, body in bodies.items()}
    calls.update({name: {target.split(".")[0]} for name, target in aliases.items()})
    changed = True
    while changed:  # callers of launching functions launch too
        grown = {name for name, called in calls.items() if called & launching}
        changed = not grown <= launching
        launching |= grown
    return launching


def module_aliases(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to a class's attribute (`chunk_fn = ChunkFunction.apply`): name -> target."""
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    aliases: dict[str, str] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id in classes
        ):
            aliases[node.targets[0].id] = f"{node.value.value.id}.{node.value.attr}"
    return aliases


def find_entry(code: str, test_block: str) -> str:
    """The wrapper: the first callable of `code` that `test_block` calls and from which a Triton launch is
    reachable; else the first it calls (a test block often prepares its inputs with a helper of the file,
    such as a quantiser, before it calls the wrapper). Callables are module-level functions (not Triton
    kernels), names bound to a class's method (`fn = Fn.apply`) and `Cls.apply` of a class of the file (an
    autograd Function, called as `Cls.apply(...)`)."""
    try:
        tree = ast.parse(code)
        functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
        classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
        aliases = module_aliases(tree)
        defined = {node.name for node in functions if not is_triton_kernel(node)} | set(aliases)
        calls = [node for node in ast.walk(ast.parse(test_block)) if isinstance(node, ast.Call)]
    except SyntaxError as failure:
        raise CaptureError("usage", f"the file does not parse: {failure}") from None
    called: list[tuple[int, int, str, str]] = []  # line, column, entry, the name that must launch
    for node in calls:
        if isinstance(node.func, ast.Name) and node.func.id in defined:
            called.append((node.lineno, node.col_offset, node.func.id, node.func.id))
        elif (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "apply"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in classes
        ):
            owner = node.func.value.id
            called.append((node.lineno, node.col_offset, f"{owner}.apply", owner))
    if not called:
        raise CaptureError(
            "usage",
            "the test block calls no function of the file by name; give --entry NAME (the wrapper)",
        )
    called.sort()
    launching = _launching_functions(tree, aliases)
    return next((entry for _, _, entry, name in called if name in launching), called[0][2])


def resolve_entry(namespace: dict[str, Any], entry: str) -> Any:
    """The callable `entry` names in a module's namespace: NAME, or OWNER.ATTRIBUTE (`Fn.apply`)."""
    owner, _, attribute = entry.partition(".")
    value = namespace.get(owner)
    if attribute:
        value = getattr(value, attribute, None) if value is not None else None
    if not callable(value):
        raise CaptureError("usage", f"the file has no function {entry}; --entry names the wrapper")
    return value


def replace_entry(namespace: dict[str, Any], entry: str, replacement: Any) -> None:
    owner, _, attribute = entry.partition(".")
    if attribute:
        setattr(namespace[owner], attribute, replacement)
    else:
        namespace[owner] = replacement


def _copies(arguments: list[Any]) -> list[Any]:
    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in arguments]


def call_signature(wrapper: Callable[..., Any], entry: str) -> inspect.Signature | None:
    """The wrapper's signature, which orders the recorded arguments: positional parameters, then the
    items of *args, then keyword-only parameters (which kernel mode's adapter passes back by name). None
    for an autograd Function's `apply` (its forward's parameters after ctx are taken, positionally) or a
    callable without one. **kwargs are refused: their names could not be given back."""
    target = wrapper
    owner = getattr(wrapper, "__self__", None)
    if isinstance(owner, type) and issubclass(owner, torch.autograd.Function):
        target = owner.forward
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    if target is not wrapper and not _has_own_setup_context(owner):
        parameters = list(signature.parameters.values())[1:]  # ctx
        signature = signature.replace(parameters=parameters)
    if any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values()):
        raise CaptureError(
            "usage", f"{entry}{signature}: kernel mode cannot call a wrapper through **kwargs; give --entry"
        )
    return signature


def _has_own_setup_context(owner: type) -> bool:
    """A Function with its own setup_context takes no ctx in forward."""
    return getattr(owner, "setup_context", None) is not getattr(
        torch.autograd.Function, "setup_context", None
    )


def ordered_arguments(
    signature: inspect.Signature | None, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], dict[int, str]]:
    """One call's arguments in the order call_signature describes, and which of them are keyword-only
    parameters (index -> name), passed back by name. Defaults are filled in up to the last positional
    parameter the call gave (so later ones keep their places); parameters after it and keyword-only ones
    the call did not give are left out, as the call left them: a variant's wrapper may declare them
    differently (`sqrt(input, out=None)` against `sqrt(input, *, out=None)`)."""
    if signature is None:
        if kwargs:
            raise CaptureError("usage", "the wrapper was called with keywords it has no signature for")
        return list(args), {}
    bound = signature.bind(*args, **kwargs)
    given = set(bound.arguments)
    bound.apply_defaults()
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    kinds = [signature.parameters[name].kind for name in bound.arguments]
    last_given = max(
        (i for i, name in enumerate(bound.arguments) if name in given and kinds[i] in positional), default=-1
    )
    ordered: list[Any] = []
    keywords: dict[int, str] = {}
    for i, (name, value) in enumerate(bound.arguments.items()):
        keyword_only = kinds[i] == inspect.Parameter.KEYWORD_ONLY
        if (kinds[i] in positional and i > last_given) or (keyword_only and name not in given):
            continue
        if keyword_only:
            keywords[len(ordered)] = name
        ordered.extend(value if kinds[i] == inspect.Parameter.VAR_POSITIONAL else [value])
    return ordered, keywords


CallAgain = Callable[[dict[int, torch.Tensor]], None]


def written_arguments(
    arguments: list[Any], before: list[Any], result: Any, call_again: CallAgain | None = None
) -> list[int]:
    """The tensor arguments the call wrote: those whose bytes changed, and those it handed back as its
    result (or a view of them) whose bytes did not change but that a second call on copies overwrites.
    A written output can hold what it held before (an all-True bool output over memory that already read
    True); an argument returned as it came in (a pass-through) is read, not written. `call_again` calls
    the wrapper once more on private copies of the arguments, with the given ones replaced."""
    changed = mutated_inputs(arguments, before)
    returned = {tensor.untyped_storage().data_ptr() for tensor in tensors_in(result) if tensor.numel() > 0}
    unchanged_but_returned = [
        index
        for index, value in enumerate(arguments)
        if index not in changed
        and isinstance(value, torch.Tensor)
        and value.numel() > 0
        and value.untyped_storage().data_ptr() in returned
    ]
    if not unchanged_but_returned or call_again is None:
        return changed
    return sorted({*changed, *overwritten(arguments, unchanged_but_returned, call_again)})


def _sentinel(tensor: torch.Tensor) -> torch.Tensor | None:
    """A copy holding values unlike the tensor's own (flipped bools, NaN floats); None for integers, which
    may be indices a kernel reads (an arbitrary value there could fault)."""
    if tensor.dtype == torch.bool:
        return ~tensor
    if tensor.is_floating_point() or tensor.is_complex():
        return torch.full_like(tensor, float("nan"))
    return None


def overwritten(arguments: list[Any], indices: list[int], call_again: CallAgain) -> list[int]:
    """Which of these arguments a second call writes: each starts as a sentinel copy, and is written where
    its bytes are no longer the sentinel's. A second call that fails counts as no write."""
    sentinels = {
        index: sentinel for index in indices if (sentinel := _sentinel(arguments[index])) is not None
    }
    fills = {index: sentinel.clone() for index, sentinel in sentinels.items()}
    if not fills:
        return []
    try:
        call_again(fills)
    except Exception:  # noqa: BLE001 - the wrapper on its own copies: no evidence of a write
        return []
    return [index for index in fills if mutated_inputs([fills[index]], [sentinels[index]])]


def uncalled_test_functions(test_block: str) -> list[str]:
    """The test functions a test block defines at its top level (`def test_x():`, no required parameters),
    in order. TritonBench's call accuracy requires a `def test_` in every test block, and some gold files
    define theirs without ever calling it."""
    try:
        tree = ast.parse(test_block)
    except (SyntaxError, ValueError):
        return []
    names = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test"):
            continue
        positional = node.args.posonlyargs + node.args.args
        required = len(positional) - len(node.args.defaults)
        required += sum(default is None for default in node.args.kw_defaults)
        if required == 0:
            names.append(node.name)
    return names


@dataclass
class RecordedCall:
    index: int  # which call of the test block (from 0)
    arguments: list[Any]  # copies of the arguments as they were before the call, keywords bound in order
    writes: list[int]  # tensor arguments whose bytes the call changed
    returned_none: bool
    keywords: dict[int, str]  # arguments passed by name (keyword-only parameters)


class CallRecorder:
    """Stands in for the wrapper while the test block runs: counts the calls and keeps one, the largest by
    tensor bytes (the first of equals) or call `case`, with the arguments it wrote."""

    def __init__(self, wrapper: Callable[..., Any], entry: str, case: int | None) -> None:
        self.wrapper, self.entry, self.case = wrapper, entry, case
        self.signature = call_signature(wrapper, entry)
        self.calls = 0
        self.kept: RecordedCall | None = None
        self.called_tests: list[str] = []  # test functions the test block never called, called by kforge

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        arguments, keywords = ordered_arguments(self.signature, args, kwargs)
        index, self.calls = self.calls, self.calls + 1
        if not self._keeps(index, arguments):
            return self.wrapper(*args, **kwargs)
        before = _copies(arguments)
        result = self.wrapper(*args, **kwargs)

        def call_again(fills: dict[int, torch.Tensor]) -> None:
            replaced = {id(arguments[i]): fill for i, fill in fills.items()}

            def swap(value: Any) -> Any:
                return replaced[id(value)] if id(value) in replaced else cloned([value])[0]

            self.wrapper(*[swap(value) for value in args], **{k: swap(v) for k, v in kwargs.items()})

        written = written_arguments(arguments, before, result, call_again)
        self.kept = RecordedCall(index, before, written, result is None, keywords)
        return result

    def call_uncalled_tests(self, namespace: dict[str, Any], test_block: str) -> None:
        """Where the test block ran without calling the wrapper, calls the test functions it defines and
        never called (as pytest would), so that their calls of the wrapper give the inputs."""
        if self.calls:
            return
        for name in uncalled_test_functions(test_block):
            function = namespace.get(name)
            if not callable(function):
                continue
            self.called_tests.append(name)
            try:
                function()
            except Exception as failure:  # noqa: BLE001 - the file's own test, reported with its name
                raise CaptureError(
                    "test-block",
                    f"the test block defines {name}() and never calls it; called by kforge, it failed: "
                    f"{type(failure).__name__}: {failure}",
                ) from None

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
            tests = ", ".join(self.called_tests)
            called = f" (nor did {tests}, called by kforge)" if tests else ""
            raise CaptureError("test-block", f"the test block never called {self.entry}{called}")
        kept = self.kept
        inputs = [describe_argument(i, value, i in kept.writes) for i, value in enumerate(kept.arguments)]
        for index, name in kept.keywords.items():
            inputs[index]["keyword"] = name
        return {
            "spec": {"inputs": inputs},
            "entry": self.entry,
            "calls": self.calls,
            "case": kept.index,
            "writes": kept.writes,
            "returns_none": kept.returned_none,
            "called_tests": self.called_tests,
        }


def install_recorder(
    namespace: dict[str, Any], code: str, test_block: str, entry: str | None, case: int | None
) -> CallRecorder:
    """Replaces the wrapper (found from the test block when not named) in the file's namespace."""
    entry = entry or find_entry(code, test_block)
    recorder = CallRecorder(resolve_entry(namespace, entry), entry, case)
    replace_entry(namespace, entry, recorder)
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
    module.__dict__["__name__"] = "__main__"  # the test block runs as a script (`if __name__ == "__main__":`)
    try:
        test = compile("\n" * (first_line - 1) + test_block, str(path), "exec", dont_inherit=True)
        exec(test, module.__dict__)
    except Exception as failure:  # noqa: BLE001 - the test block's own error
        raise CaptureError(
            "test-block", f"the test block failed: {type(failure).__name__}: {failure}"
        ) from None
    recorder.call_uncalled_tests(module.__dict__, test_block)
    return recorder


def capture(path: Path, entry: str | None, case: int | None) -> dict[str, Any]:
    use_interpreter_without_a_gpu()
    return record_calls(path, entry, case).answer()


def probe(problem_path: Path, entry: str, small: bool, sizes: dict[str, str], seed: int) -> dict[str, Any]:
    """The arguments the wrapper writes, from one call on the generated problem's inputs (kernel mode
    without --writes and without a test block capture)."""
    use_interpreter_without_a_gpu()
    from kforge.worker.problem_sizes import apply_size_overrides
    from kforge.worker.runtime import to_device

    try:
        module = load_module(problem_path, problem_path.read_text())
    except Exception as failure:  # noqa: BLE001 - the file's own error
        raise CaptureError("import", f"{type(failure).__name__}: {failure}") from None
    wrapper = resolve_entry(module.__dict__, entry)
    try:
        apply_size_overrides(module, small, sizes)
    except Exception as failure:  # noqa: BLE001 - a WorkerError saying which size
        raise CaptureError("usage", str(failure)) from None
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(seed)
    try:
        arguments = [to_device(value, device) for value in module.get_inputs()]
        before = _copies(arguments)
        call = module.__dict__.get("_kf_invoke", lambda entry, args: entry(*args))  # the adapter's own call
        result = call(wrapper, arguments)
    except Exception as failure:  # noqa: BLE001 - the wrapper's own error: the verdict will say it again
        raise CaptureError("probe", f"the wrapper failed: {type(failure).__name__}: {failure}") from None

    def call_again(fills: dict[int, torch.Tensor]) -> None:
        call(wrapper, [fills.get(i, value) for i, value in enumerate(cloned(arguments))])

    written = written_arguments(arguments, before, result, call_again)
    return {"entry": entry, "writes": written, "returns_none": result is None}


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
