"""Writes the throughput benchmark's samples: 16 candidates for each of 10 starter problems.

Every candidate is derived from the problem's reference solution.py by a checked textual edit:

- 10 correct: the solution itself, a cosmetic copy (header comment, kernels renamed), and 8 that
  change block-size constants or launch options (num_warps, num_stages) to values that keep the
  kernels correct at the GPU sizes and at the KFORGE_SMALL sizes (masks cover every tail);
- 3 wrong, still Triton: every stored value scaled by 1.01 (1.05 for half-precision outputs, whose
  tolerance is 1e-2), every `x < bound` inside the kernels turned into `x < bound - 1` (off by one),
  and a plausible formula slip of the problem's own (WRONG_FORMULAS: operands swapped, bias dropped...);
- 3 crashing: forward raises, forward views its first input to an illegal shape, a syntax error.

Each JSON line: {"problem", "code", "expected": correct|wrong|crash, "variant", "candidate_index", "id"}.
Lines are ordered candidate-index major (every problem's candidate 0, then every problem's candidate 1,
...) and each problem's 16 kinds are interleaved, so any prefix of the file is a representative mix.
The output depends on nothing but the solution files: no randomness, no clock.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Problem order matters: --problems-subset N keeps the first N, so the first ones are a spread.
PROBLEMS: tuple[str, ...] = (
    "01_scaled_add",  # elementwise
    "04_softmax",  # online softmax
    "13_matmul_fp16",  # the one tensor-core matmul
    "03_row_sum",  # row reduction
    "09_silu_channel_affine",  # fusion with per-channel parameters
    "05_layernorm",  # norm with affine parameters
    "29_mse_loss",  # two-kernel reduction to a 0-d output
    "02_gelu_tanh",  # elementwise, transcendental
    "07_rmsnorm",  # norm
    "25_swiglu_gate",  # fusion over two halves of a row
)

Subst = dict[str, int]  # constant or launch keyword -> new value


@dataclass(frozen=True)
class VariantSpec:
    """The honest edits of one problem: 4 block-constant edits and 2 launch-option edits."""

    blocks: tuple[Subst, Subst, Subst, Subst]
    launches: tuple[Subst, Subst]


# Values chosen to stay correct and compile at the GPU sizes too: powers of two, no tile that would
# overflow shared memory (the matmul only shrinks its tiles), no register-spilling extremes.
SPECS: dict[str, VariantSpec] = {
    "01_scaled_add": VariantSpec(
        ({"BLOCK": 1024}, {"BLOCK": 2048}, {"BLOCK": 8192}, {"BLOCK": 512}),
        ({"num_warps": 4}, {"num_warps": 16}),
    ),
    "02_gelu_tanh": VariantSpec(
        ({"BLOCK": 1024}, {"BLOCK": 2048}, {"BLOCK": 8192}, {"BLOCK": 512}),
        ({"num_warps": 4}, {"num_warps": 16}),
    ),
    "03_row_sum": VariantSpec(
        ({"MAX_BLOCK": 1024}, {"MAX_BLOCK": 2048}, {"MAX_BLOCK": 8192}, {"MAX_BLOCK": 512}),
        ({"num_warps": 4}, {"num_warps": 16}),
    ),
    "04_softmax": VariantSpec(
        ({"MAX_BLOCK": 4096}, {"MAX_BLOCK": 2048}, {"MAX_BLOCK": 1024}, {"MAX_BLOCK": 512}),
        ({"num_warps": 4}, {"num_warps": 16}),
    ),
    "05_layernorm": VariantSpec(
        ({"MAX_BLOCK": 2048}, {"MAX_BLOCK": 1024}, {"MAX_BLOCK": 8192}, {"MAX_BLOCK": 512}),
        ({"num_warps": 4}, {"num_warps": 16}),
    ),
    "07_rmsnorm": VariantSpec(
        ({"MAX_BLOCK": 2048}, {"MAX_BLOCK": 1024}, {"MAX_BLOCK": 8192}, {"MAX_BLOCK": 512}),
        ({"num_warps": 4}, {"num_warps": 16}),
    ),
    "09_silu_channel_affine": VariantSpec(
        ({"MAX_BLOCK": 1024}, {"MAX_BLOCK": 2048}, {"MAX_BLOCK": 8192}, {"MAX_BLOCK": 512}),
        ({"num_warps": 4}, {"num_warps": 16}),
    ),
    "13_matmul_fp16": VariantSpec(
        ({"BLOCK_K": 32}, {"BLOCK_M": 64}, {"BLOCK_N": 64, "GROUP_M": 4}, {"num_stages": 4}),
        ({"num_warps": 4}, {"num_stages": 2}),
    ),
    "25_swiglu_gate": VariantSpec(
        ({"MAX_BLOCK": 512}, {"MAX_BLOCK": 2048}, {"MAX_BLOCK": 4096}, {"MAX_BLOCK": 256}),
        ({"num_warps": 8}, {"num_warps": 2}),
    ),
    "29_mse_loss": VariantSpec(
        (
            {"BLOCK": 1024},
            {"BLOCKS_PER_PROGRAM": 8},
            {"BLOCK": 4096, "BLOCKS_PER_PROGRAM": 4},
            {"MEAN_BLOCK": 512},
        ),
        ({"num_warps": 4}, {"num_warps": 16}),
    ),
}

# Each problem's 16 candidates in file order, interleaved so that a prefix of k slots holds all three
# kinds close to the 10/3/3 mix (4 slots: 2/1/1, 5 slots: 3/1/1).
SLOTS: tuple[tuple[str, str], ...] = (
    ("correct", "solution"),
    ("wrong", "wrong_scale"),
    ("correct", "cosmetic_rename"),
    ("crash", "crash_raise"),
    ("correct", "block_0"),
    ("correct", "launch_0"),
    ("wrong", "wrong_bound_off_by_one"),
    ("correct", "block_1"),
    ("crash", "crash_bad_view"),
    ("correct", "block_0+launch_0"),
    ("correct", "block_2"),
    ("wrong", "wrong_formula"),
    ("correct", "launch_1"),
    ("crash", "crash_syntax"),
    ("correct", "block_3"),
    ("correct", "block_1+launch_1"),
)

LAUNCH_KEYWORDS = ("num_warps", "num_stages")
HALF_PRECISION_MARKERS = ("float16", "bfloat16", "_fp16", "_bf16")


class EditError(RuntimeError):
    """A textual edit did not apply as intended: the solution changed shape, the table needs a look."""


def _substitute_constants(source: str, subst: Subst) -> str:
    """Class-level constants (`    NAME = 123`) exactly once each; launch keywords at every launch."""
    for name, value in subst.items():
        if name in LAUNCH_KEYWORDS:
            pattern = re.compile(rf"\b{name}=\d+")
            source, count = pattern.subn(f"{name}={value}", source)
        else:
            pattern = re.compile(rf"^(\s+){name} = \d+$", re.MULTILINE)
            source, count = pattern.subn(rf"\g<1>{name} = {value}", source)
            if count != 1:
                raise EditError(f"constant {name} defined {count} times, expected once")
        if count == 0:
            raise EditError(f"no {name}= in the solution")
    return source


def _jit_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """Top-level functions decorated with @triton.jit (or @jit)."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                text = ast.unparse(decorator)
                if text in ("triton.jit", "jit") or text.startswith("triton.jit("):
                    found.append(node)
    return found


def _model_new_forward(tree: ast.Module) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    return item
    raise EditError("no ModelNew.forward")


def _line_offsets(source: str) -> list[int]:
    """Character offset of the start of each line (1-based line numbers index offsets[line - 1])."""
    offsets, total = [], 0
    for line in source.splitlines(keepends=True):
        offsets.append(total)
        total += len(line)
    return offsets


def _span(offsets: list[int], node: ast.expr) -> tuple[int, int]:
    # ast columns are UTF-8 byte offsets; the solutions are ASCII, checked in main().
    assert node.end_lineno is not None and node.end_col_offset is not None
    return offsets[node.lineno - 1] + node.col_offset, offsets[node.end_lineno - 1] + node.end_col_offset


def _replace_spans(source: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply (start, end, text) edits, last first, so earlier offsets stay valid."""
    for start, end, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[end:]
    return source


def wrong_scale(source: str, problem_text: str) -> str:
    """Multiply the value of every tl.store in every kernel by a factor just outside the tolerance."""
    half = any(marker in problem_text for marker in HALF_PRECISION_MARKERS)
    # float32 outputs are judged at 1e-4, half precision at 1e-2 (docs/verdict.md): 1.01 vs 1.05.
    factor = "1.05" if half else "1.01"
    tree = ast.parse(source)
    offsets = _line_offsets(source)
    edits = []
    for function in _jit_functions(tree):
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "tl.store" and len(node.args) >= 2:
                start, end = _span(offsets, node.args[1])
                edits.append((start, end, f"({source[start:end]}) * {factor}"))
    if not edits:
        raise EditError("no tl.store(ptr, value) to scale")
    return _replace_spans(source, edits)


def wrong_bound_off_by_one(source: str) -> str:
    """Every `expr < name` inside the kernels becomes `expr < name - 1`: masks and bounds lose their last
    element (a load reads `other` instead, a store leaves it unwritten)."""
    tree = ast.parse(source)
    offsets = _line_offsets(source)
    edits = []
    for function in _jit_functions(tree):
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Compare)
                and len(node.ops) == 1
                and isinstance(node.ops[0], ast.Lt)
                and isinstance(node.comparators[0], ast.Name)
            ):
                start, end = _span(offsets, node.comparators[0])
                edits.append((start, end, f"({source[start:end]} - 1)"))
    if not edits:
        raise EditError("no `x < bound` comparison in the kernels")
    return _replace_spans(source, edits)


# A plausible formula slip per problem, each wrong at every size: (text in solution.py, replacement).
WRONG_FORMULAS: dict[str, tuple[str, str]] = {
    "01_scaled_add": ("alpha * x + y", "alpha * y + x"),  # operands swapped
    "02_gelu_tanh": ("tl.exp(-2.0 * u)", "tl.exp(-u)"),  # sigmoid(u) for sigmoid(2u)
    "03_row_sum": ("tl.sum(acc, axis=0))", "tl.sum(acc, axis=0) / n_cols)"),  # mean for sum
    "04_softmax": ("y = tl.exp(x - row_max) * inv_sum", "y = tl.exp(x - row_max)"),  # never normalised
    "05_layernorm": ("(x - mean) * rstd * w + b", "(x - mean) * rstd * w"),  # bias dropped
    "07_rmsnorm": ("x * rstd * w", "x * rstd"),  # weight dropped
    "09_silu_channel_affine": ("* scale + shift", "* shift + scale"),  # parameters swapped
    "13_matmul_fp16": ("acc = tl.dot(a, b, acc)", "acc = tl.dot(a, b)"),  # only the last K tile counts
    "25_swiglu_gate": ("a * tl.sigmoid(a) * b", "b * tl.sigmoid(b) * a"),  # gate on the wrong half
    "29_mse_loss": ("acc += d * d", "acc += tl.abs(d)"),  # mean absolute error
}


def wrong_formula(problem: str, source: str) -> str:
    old, new = WRONG_FORMULAS[problem]
    if source.count(old) != 1:
        raise EditError(f"{old!r} occurs {source.count(old)} times, expected once")
    return source.replace(old, new)


def _insert_in_forward(source: str, statement_for_arg: str) -> str:
    """Insert one statement as forward's first, indented like forward's body; {arg} = first input."""
    tree = ast.parse(source)
    forward = _model_new_forward(tree)
    if len(forward.args.args) < 2:
        raise EditError("forward takes no input")
    arg = forward.args.args[1].arg
    first = forward.body[0]
    lines = source.splitlines(keepends=True)
    indent = " " * first.col_offset
    lines.insert(first.lineno - 1, indent + statement_for_arg.format(arg=arg) + "\n")
    return "".join(lines)


def crash_raise(source: str) -> str:
    return _insert_in_forward(source, 'raise RuntimeError("no launch configuration for this shape")')


def crash_bad_view(source: str) -> str:
    # One element too many for a view: torch raises "shape '[n+1]' is invalid for input of size n".
    return _insert_in_forward(source, "{arg} = {arg}.view({arg}.numel() + 1)")


def crash_syntax(source: str) -> str:
    edited = source.replace("class ModelNew(nn.Module):", "class ModelNew(nn.Module)", 1)
    if edited == source:
        raise EditError("class ModelNew(nn.Module): not found")
    return edited


def cosmetic_rename(source: str) -> str:
    """Same kernels under other names, with a header comment: what two LLM samples often differ by."""
    tree = ast.parse(source)
    for function in _jit_functions(tree):
        source, count = re.subn(rf"\b{function.name}\b", f"{function.name}_v2", source)
        if count < 2:  # the definition and at least one launch
            raise EditError(f"kernel {function.name} renamed {count} times")
    return "# Candidate: the reference kernels, renamed; no functional change.\n" + source


def make_variant(problem: str, variant: str, solution: str, problem_text: str, spec: VariantSpec) -> str:
    if variant == "solution":
        return solution
    if variant == "cosmetic_rename":
        return cosmetic_rename(solution)
    if variant == "wrong_scale":
        return wrong_scale(solution, problem_text)
    if variant == "wrong_bound_off_by_one":
        return wrong_bound_off_by_one(solution)
    if variant == "wrong_formula":
        return wrong_formula(problem, solution)
    if variant == "crash_raise":
        return crash_raise(solution)
    if variant == "crash_bad_view":
        return crash_bad_view(solution)
    if variant == "crash_syntax":
        return crash_syntax(solution)
    subst: Subst = {}
    for part in variant.split("+"):
        kind, index = part.split("_")
        subst.update((spec.blocks if kind == "block" else spec.launches)[int(index)])
    return _substitute_constants(solution, subst)


def _check_variant(problem: str, variant: str, expected: str, code: str, solution: str) -> None:
    """The edits must have changed the text, and only the syntax-error variant may fail to parse."""
    if variant != "solution" and code == solution:
        raise EditError(f"{problem}/{variant}: the edit changed nothing")
    try:
        compile(code, f"{problem}/{variant}", "exec")
    except SyntaxError:
        if variant != "crash_syntax":
            raise
        return
    if variant == "crash_syntax":
        raise EditError(f"{problem}/{variant}: still parses")
    if expected != "crash" and "class ModelNew" not in code:
        raise EditError(f"{problem}/{variant}: no ModelNew left")


def make_samples(
    problems_dir: Path, problems: list[str], candidates_per_problem: int = len(SLOTS)
) -> list[dict[str, Any]]:
    """All samples, candidate-index major, in the documented deterministic order."""
    if not 1 <= candidates_per_problem <= len(SLOTS):
        raise ValueError(f"candidates per problem must be 1..{len(SLOTS)}")
    per_problem: dict[str, list[dict[str, Any]]] = {}
    for problem in problems:
        solution = (problems_dir / problem / "solution.py").read_text()
        problem_text = (problems_dir / problem / "problem.py").read_text()
        if not solution.isascii():
            raise EditError(f"{problem}: the edits use ast columns, which need an ASCII solution")
        rows = []
        for index, (expected, variant) in enumerate(SLOTS[:candidates_per_problem]):
            code = make_variant(problem, variant, solution, problem_text, SPECS[problem])
            _check_variant(problem, variant, expected, code, solution)
            rows.append(
                {
                    "problem": problem,
                    "code": code,  # "code" is inline source; kforge reads "candidate" as a file path
                    "expected": expected,
                    "variant": variant,
                    "candidate_index": index,
                    "id": f"{problem}/{index:02d}-{variant}",
                }
            )
        per_problem[problem] = rows
    return [per_problem[problem][index] for index in range(candidates_per_problem) for problem in problems]


def write_samples(samples: list[dict[str, Any]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as stream:
        for sample in samples:
            stream.write(json.dumps(sample, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--problems", type=Path, default=Path("problems/starter"), help="starter suite folder"
    )
    parser.add_argument("--out", type=Path, default=Path("samples.jsonl"), help="JSON Lines file to write")
    parser.add_argument(
        "--problems-subset", type=int, default=len(PROBLEMS), help="keep the first N problems"
    )
    parser.add_argument(
        "--candidates-per-problem", type=int, default=len(SLOTS), help="keep the first N slots"
    )
    args = parser.parse_args(argv)
    problems = list(PROBLEMS[: args.problems_subset])
    samples = make_samples(args.problems, problems, args.candidates_per_problem)
    write_samples(samples, args.out)
    kinds = {kind: sum(1 for s in samples if s["expected"] == kind) for kind in ("correct", "wrong", "crash")}
    print(f"{len(samples)} samples over {len(problems)} problems ({kinds}) -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
