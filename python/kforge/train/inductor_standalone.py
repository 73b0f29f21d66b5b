"""Turns a capture record (inductor_capture.py) into a standalone KernelBench candidate.

The candidate is the problem's source followed by Inductor's Triton kernels and a `ModelNew(Model)`
whose forward runs Inductor's launch sequence. It imports only torch and triton:
- the kernels keep their code; Inductor's autotuning decorator goes, `triton_helpers.NAME` becomes
  kforge's own `ih_NAME` (inductor_helpers.py), `libdevice` comes from `triton.language.extra`, and
  its functions that `tl.math` has as accurately (exp, log, rsqrt, ...) become those, which the CPU
  interpreter can run;
- each `kernel.run(...)` becomes `kernel[grid](...)` with the launch config autotuning chose and the
  grid computed now from the static sizes;
- `ModelNew` subclasses the problem's `Model`, so the judge's seed gives it the same parameters.
Anything that is not Triton (a cuBLAS/cuDNN extern kernel, an ATen fallback) is refused with its name.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

from kforge.train import inductor_helpers

HELPER_PREFIX = "ih_"
# Names the translated launch sequence may use besides its own locals, kernels and helpers.
ALLOWED_GLOBALS = frozenset(
    {
        "torch",
        "triton",
        "tl",
        "reinterpret_tensor",
        "assert_size_stride",
        "assert_alignment",
        "len",
        "range",
        "int",
        "float",
        "max",
        "min",
        "tuple",
        "list",
    }
)
# libdevice functions with an equally accurate tl.math form: these run in Triton's CPU interpreter
# too (which has no libdevice); sqrt keeps IEEE rounding as libdevice's does.
LIBDEVICE_AS_TL_MATH = {
    "exp": "exp",
    "exp2": "exp2",
    "log": "log",
    "log2": "log2",
    "sin": "sin",
    "cos": "cos",
    "rsqrt": "rsqrt",
    "sqrt": "sqrt_rn",
    "erf": "erf",
    "floor": "floor",
    "ceil": "ceil",
    "fma": "fma",
}
DROPPED_CALLS = frozenset({"torch.cuda.set_device", "torch.cuda.synchronize"})
ALLOCATORS = frozenset({"empty_strided_cuda", "empty_strided_cpu", "empty_strided"})

RUNTIME_SUPPORT = """
def reinterpret_tensor(tensor, size, stride, offset):
    # A view of the same storage with another size and stride, `offset` elements further on.
    return tensor.as_strided(size, stride, tensor.storage_offset() + offset)


def assert_size_stride(tensor, size, stride):
    if tuple(tensor.shape) != tuple(size) or tuple(tensor.stride()) != tuple(stride):
        raise ValueError(
            f"the compiled kernels expect size {tuple(size)} and stride {tuple(stride)}, "
            f"got {tuple(tensor.shape)} and {tuple(tensor.stride())}"
        )


def assert_alignment(tensor, alignment):
    if tensor.data_ptr() % alignment != 0:
        raise ValueError(f"the compiled kernels expect {alignment}-byte aligned data")
"""


class StandaloneError(Exception):
    """The generated code cannot be made standalone; the message names what stands in the way."""


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


# --- kernels ---------------------------------------------------------------------------------------


def kernel_sources(wrapper: ast.Module) -> dict[str, str]:
    """`name = async_compile.triton('name', '''source''', ...)` assignments of the wrapper module."""
    sources: dict[str, str] = {}
    for statement in wrapper.body:
        if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)):
            continue
        callee = _dotted(statement.value.func)
        if not callee.startswith("async_compile."):
            continue
        target = statement.targets[0]
        if callee != "async_compile.triton":
            raise StandaloneError(
                f"the generated code compiles {callee.split('.')[-1]} code, not only Triton"
            )
        arguments = statement.value.args
        if (
            not isinstance(target, ast.Name)
            or len(arguments) < 2
            or not isinstance(arguments[1], ast.Constant)
        ):
            raise StandaloneError("an async_compile.triton call of an unexpected form")
        sources[target.id] = str(arguments[1].value)
    return sources


class _KernelRewriter(ast.NodeTransformer):
    """Inductor's helper calls to kforge's helpers, and the kernel's local helper functions renamed."""

    def __init__(self, renames: dict[str, str], available_helpers: set[str]) -> None:
        self.renames = renames
        self.available_helpers = available_helpers
        self.helpers_used: set[str] = set()

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "triton_helpers":
            name = HELPER_PREFIX + node.attr
            if name not in self.available_helpers:
                raise StandaloneError(
                    f"the kernels call triton_helpers.{node.attr}, which kforge's rewrite lacks"
                )
            self.helpers_used.add(name)
            return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == "libdevice"
            and node.attr in LIBDEVICE_AS_TL_MATH
        ):
            tl_math = ast.Attribute(value=ast.Name(id="tl", ctx=ast.Load()), attr="math", ctx=ast.Load())
            return ast.copy_location(
                ast.Attribute(value=tl_math, attr=LIBDEVICE_AS_TL_MATH[node.attr], ctx=node.ctx), node
            )
        if isinstance(node.value, ast.Name) and node.value.id in ("triton_heuristics", "torch"):
            raise StandaloneError(f"a kernel uses {_dotted(node)} inside its code")
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.renames:
            return ast.copy_location(ast.Name(id=self.renames[node.id], ctx=node.ctx), node)
        return node


def _is_jit_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return _dotted(target) == "triton.jit"


def standalone_kernel(
    name: str, source: str, index: int, available_helpers: set[str]
) -> tuple[str, set[str]]:
    """One kernel's module without Inductor's imports and decorator; returns it and the helpers it uses."""
    module = ast.parse(source)
    kept: list[ast.stmt] = []
    for statement in module.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(statement, ast.Expr) and _dotted(
            getattr(statement.value, "func", ast.Name(""))
        ).startswith("triton_helpers."):
            continue  # triton_helpers.set_driver_to_gpu()
        kept.append(statement)
    functions = [statement for statement in kept if isinstance(statement, ast.FunctionDef)]
    if not any(function.name == name for function in functions):
        raise StandaloneError(f"kernel {name}: its source defines no function of that name")
    renames = {function.name: f"{function.name}_k{index}" for function in functions if function.name != name}
    for function in functions:
        function.name = renames.get(function.name, function.name)
        function.decorator_list = [
            decorator for decorator in function.decorator_list if _is_jit_decorator(decorator)
        ]
        if not function.decorator_list:
            raise StandaloneError(f"kernel {name}: function {function.name} is not a @triton.jit function")
    rewriter = _KernelRewriter(renames, available_helpers)
    rewritten = ast.fix_missing_locations(rewriter.visit(ast.Module(body=kept, type_ignores=[])))
    return ast.unparse(rewritten), rewriter.helpers_used


def helper_definitions() -> dict[str, ast.FunctionDef]:
    module = ast.parse(inspect.getsource(inductor_helpers))
    return {node.name: node for node in module.body if isinstance(node, ast.FunctionDef)}


def helper_source(used: set[str], definitions: dict[str, ast.FunctionDef]) -> str:
    """The used helpers and every helper they call, in the order of inductor_helpers.py."""
    needed: set[str] = set()
    pending = list(used)
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        needed.add(name)
        for node in ast.walk(definitions[name]):
            if isinstance(node, ast.Name) and node.id in definitions and node.id not in needed:
                pending.append(node.id)
    return "\n\n\n".join(ast.unparse(definitions[name]) for name in definitions if name in needed)


# --- the launch sequence --------------------------------------------------------------------------


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


_GRID_OPERATORS: dict[type, Any] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


def integer_expression(text: str, scope: dict[str, Any]) -> int:
    """An integer expression of Inductor's grid arithmetic (+ - * // %, unary minus, max, min, names
    bound in scope), evaluated without eval: a capture is a file and may come from anywhere."""

    def value(node: ast.expr) -> int:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int)
            and not isinstance(node.value, bool)
        ):
            return node.value
        if isinstance(node, ast.Name):
            bound = scope.get(node.id)
            if not isinstance(bound, int) or isinstance(bound, bool):
                raise ValueError(f"{node.id} is not a known integer")
            return bound
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _GRID_OPERATORS:
            return int(_GRID_OPERATORS[type(node.op)](value(node.left), value(node.right)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("max", "min"):
            arguments = [value(argument) for argument in node.args]
            return max(arguments) if node.func.id == "max" else min(arguments)
        raise ValueError(f"{ast.unparse(node)} is not grid arithmetic")

    return value(ast.parse(text.strip(), mode="eval").body)


def evaluate_grid(kernel: str, grid: dict[str, Any], scope: dict[str, Any]) -> tuple[int, int, int]:
    """The grid Inductor's launcher would compute, from this call's sizes and the chosen config."""
    names = dict(scope)
    try:
        for line in grid["prefix"]:  # `name = expression` lines
            target, _, expression = str(line).partition("=")
            if not target.strip().isidentifier():
                raise ValueError(f"{line!r} is not an assignment")
            names[target.strip()] = integer_expression(expression, names)
        x, y, z = (integer_expression(str(grid[axis]), names) for axis in ("x", "y", "z"))
    except (ValueError, SyntaxError, ZeroDivisionError, KeyError) as failure:
        raise StandaloneError(f"kernel {kernel}: its grid {grid} is not static here ({failure})") from None
    return x, y, z


def launcher_parameters(meta: dict[str, Any], count: int) -> list[str]:
    """The names `kernel.run(...)` binds its positional arguments to, as Inductor's launcher defines them:
    the kernel's parameters less the constexprs it fixes (Triton >= 3.3; before, less the config's), then
    any extra launcher arguments (a template's grid)."""
    if meta.get("def_args"):
        return list(meta["def_args"])
    fixed = set(meta["config"]["kwargs"]) | set(meta["constants"])
    extra = list(meta.get("extra_launcher_args", []))
    constexprs = set(meta.get("constexprs", []))
    current = [name for name in meta["arg_names"] if not (name in constexprs and name in fixed)] + extra
    older = [name for name in meta["arg_names"] if name not in meta["config"]["kwargs"]] + extra
    return current if len(current) == count or len(older) != count else older


def launch_call(node: ast.Call, kernel: str, meta: dict[str, Any]) -> ast.Call:
    """`kernel.run(a, b, n, stream=s)` as `kernel[grid](x=a, y=b, xnumel=n, XBLOCK=.., num_warps=..)`."""
    def_args = launcher_parameters(meta, len(node.args))
    if len(node.args) != len(def_args) or any(isinstance(arg, ast.Starred) for arg in node.args):
        raise StandaloneError(
            f"kernel {kernel}: the wrapper passes {len(node.args)} arguments, its launcher takes "
            f"{len(def_args)}"
            f" ({', '.join(def_args)})"
        )
    bound = dict(zip(def_args, node.args, strict=True))
    config = meta["config"]
    scope = {name: _literal(value) for name, value in bound.items()}
    scope.update(config["kwargs"])
    grid = evaluate_grid(kernel, meta["grid"], scope)
    keywords: list[ast.keyword] = []
    for name in meta["arg_names"]:
        if name in bound:
            value: ast.expr = bound[name]
        elif name in config["kwargs"]:
            value = ast.Constant(config["kwargs"][name])
        elif name in meta["constants"]:
            value = ast.Constant(meta["constants"][name])
        else:
            raise StandaloneError(f"kernel {kernel}: nothing gives its parameter {name}")
        keywords.append(ast.keyword(arg=name, value=value))
    keywords.append(ast.keyword(arg="num_warps", value=ast.Constant(config["num_warps"])))
    keywords.append(ast.keyword(arg="num_stages", value=ast.Constant(config["num_stages"])))
    if config.get("maxnreg"):
        keywords.append(ast.keyword(arg="maxnreg", value=ast.Constant(config["maxnreg"])))
    launcher = ast.Subscript(
        value=ast.Name(id=kernel, ctx=ast.Load()),
        slice=ast.Tuple(elts=[ast.Constant(value) for value in grid], ctx=ast.Load()),
        ctx=ast.Load(),
    )
    return ast.Call(func=launcher, args=[], keywords=keywords)


class _CallRewriter(ast.NodeTransformer):
    """The wrapper's `call` body as plain torch + Triton launches; refuses what is not Triton."""

    def __init__(self, kernels: dict[str, dict[str, Any]]) -> None:
        self.kernels = kernels

    def visit_With(self, node: ast.With) -> Any:
        # `with torch.cuda._DeviceGuard(0):` - the judge already made the device current.
        kept: list[ast.stmt] = []
        for statement in node.body:
            rewritten = self.visit(statement)
            if rewritten is not None:
                kept.extend(rewritten if isinstance(rewritten, list) else [rewritten])
        return kept

    def visit_Expr(self, node: ast.Expr) -> Any:
        if isinstance(node.value, ast.Call) and _dotted(node.value.func) in DROPPED_CALLS:
            return None
        return self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> Any:
        if isinstance(node.value, ast.Call) and _dotted(node.value.func) == "get_raw_stream":
            return None  # kernels launch on the current stream, as the judge times them
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> Any:
        callee = _dotted(node.func)
        owner, _, method = callee.rpartition(".")
        if method == "run" and owner in self.kernels:
            return ast.copy_location(launch_call(node, owner, self.kernels[owner]), node)
        if callee in ALLOCATORS:
            return ast.copy_location(self._allocation(node), node)
        if callee.startswith("extern_kernels."):
            raise StandaloneError(
                f"the compiled code calls extern_kernels.{method} (a library kernel, not Triton)"
            )
        if callee.startswith(("aten.", "torch.ops.", "inductor_ops.", "_quantized.")):
            raise StandaloneError(f"the compiled code falls back to the ATen operator {callee}")
        return self.generic_visit(node)

    def _allocation(self, node: ast.Call) -> ast.Call:
        if len(node.args) != 3:
            raise StandaloneError(f"an allocation of an unexpected form: {ast.unparse(node)}")
        size, stride, dtype = (self.visit(argument) for argument in node.args)
        return ast.Call(
            func=ast.Attribute(
                value=ast.Name(id="torch", ctx=ast.Load()), attr="empty_strided", ctx=ast.Load()
            ),
            args=[size, stride],
            keywords=[
                ast.keyword(arg="dtype", value=dtype),
                ast.keyword(arg="device", value=ast.Name(id="device", ctx=ast.Load())),
            ],
        )


def call_body(wrapper: ast.Module) -> list[ast.stmt]:
    """The statements of the wrapper's `call(args)` (a Runner method in recent torch, else a function)."""
    for statement in wrapper.body:
        if isinstance(statement, ast.FunctionDef) and statement.name == "call":
            return statement.body
        if isinstance(statement, ast.ClassDef):
            for member in statement.body:
                if isinstance(member, ast.FunctionDef) and member.name == "call":
                    return member.body
    raise StandaloneError("the generated module has no call(args) function")


def _check_free_names(function: ast.FunctionDef, known: set[str]) -> None:
    assigned = {arg.arg for arg in function.args.args}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            assigned.add(node.id)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in assigned | known:
            raise StandaloneError(
                f"the compiled launch sequence uses {node.id}, which a standalone file lacks"
            )


def launch_function(wrapper: ast.Module, kernels: dict[str, dict[str, Any]]) -> str:
    """`def inductor_call(args, device)`: the wrapper's call body, rewritten."""
    rewriter = _CallRewriter(kernels)
    body: list[ast.stmt] = []
    for statement in call_body(wrapper):
        rewritten = rewriter.visit(statement)
        if rewritten is None:
            continue
        body.extend(rewritten if isinstance(rewritten, list) else [rewritten])
    arguments = ast.arguments(
        posonlyargs=[], args=[ast.arg("args"), ast.arg("device")], kwonlyargs=[], kw_defaults=[], defaults=[]
    )
    function = ast.FunctionDef(
        name="inductor_call", args=arguments, body=body, decorator_list=[], returns=None
    )
    function = ast.fix_missing_locations(function)
    _check_free_names(function, set(ALLOWED_GLOBALS) | set(kernels))
    return ast.unparse(function)


# --- the candidate ----------------------------------------------------------------------------------


def _state_expression(name: str) -> str:
    """`self.a.b` where every part is a name; containers' numbered children (`features.0.weight` of an
    nn.Sequential) through get_submodule, which reaches any child by its state-dict path."""
    *owner, leaf = name.split(".")
    if all(part.isidentifier() for part in owner):
        return "self." + name
    return f"self.get_submodule({'.'.join(owner)!r}).{leaf}"


def model_new_source(inputs: list[dict[str, Any]], outputs: dict[str, Any]) -> str:
    arguments = []
    for item in inputs:
        if item["kind"] == "state":
            arguments.append(_state_expression(item["name"]))
        else:
            arguments.append(f"inputs[{int(item['index'])}]")
    picked = [f"results[{int(index)}]" for index in outputs["indices"]]
    if outputs["structure"] == "tensor":
        returned = picked[0]
    elif outputs["structure"] == "list":
        returned = "[" + ", ".join(picked) + "]"
    else:
        returned = "(" + ", ".join(picked) + ("," if len(picked) == 1 else "") + ")"
    lines = [
        "class ModelNew(Model):",
        '    """The problem\'s Model (same parameters from the same seed), run by the kernels above."""',
        "",
        "    def forward(self, *inputs):",
        "        device = next(value.device for value in inputs if isinstance(value, torch.Tensor))",
        f"        results = inductor_call([{', '.join(arguments)}], device)",
        f"        return {returned}",
    ]
    return "\n".join(lines)


def _state_names_valid(inputs: list[dict[str, Any]]) -> None:
    for item in inputs:
        if item["kind"] != "state":
            continue
        parts = item["name"].split(".")
        if not parts[-1].isidentifier() or not all(part and part.isprintable() for part in parts):
            raise StandaloneError(f"parameter {item['name']!r} is not reachable as an attribute path")


def standalone_candidate(record: dict[str, Any], problem_source: str) -> str:
    """The candidate file's text: the problem, then the kernels, helpers and ModelNew."""
    wrapper = ast.parse(record["wrapper"])
    sources = kernel_sources(wrapper)
    missing = sorted(set(sources) - set(record["kernels"]))
    if missing:
        raise StandaloneError(f"no launch config was captured for kernel(s) {', '.join(missing)}")
    _state_names_valid(record["inputs"])
    definitions = helper_definitions()
    helpers_used: set[str] = set()
    kernel_blocks = []
    for index, (name, source) in enumerate(sources.items()):
        block, used = standalone_kernel(name, source, index, set(definitions))
        helpers_used |= used
        kernel_blocks.append(block)
    launches = launch_function(wrapper, {name: record["kernels"][name] for name in sources})
    if not sources:
        raise StandaloneError("the compiled code launches no Triton kernel")
    header = [
        "# ---- Triton code from torch.compile (Inductor), made standalone by kforge's inductor teacher.",
        "# Launch configs are the ones Inductor's autotuning chose; grids are fixed for the problem's sizes.",
        "import triton",
        "import triton.language as tl",
        "from triton.language import math as tl_math",
        "from triton.language.extra import libdevice",
    ]
    parts = ["\n".join(header)]
    if helpers_used:
        parts.append(helper_source(helpers_used, definitions))
    parts.extend(kernel_blocks)
    parts.append(RUNTIME_SUPPORT.strip())
    parts.append(launches)
    parts.append(model_new_source(record["inputs"], record["outputs"]))
    return problem_source.rstrip() + "\n\n\n" + "\n\n\n".join(parts) + "\n"


def write_candidate(record: dict[str, Any], problem_path: Path, out: Path) -> str:
    text = standalone_candidate(record, problem_path.read_text())
    out.write_text(text)
    return text
