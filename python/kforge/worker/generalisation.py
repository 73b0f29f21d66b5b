"""The generalisation trial's problem instance: the same problem at other sizes and, where the
constructor takes numbers, with other constants.

A kernel that hard-codes the benchmark's shape (no masks, a grid for 4096 x 8192) or the constructor's
constants (a scale of 1.5 baked in) is exact at the one instance kforge builds by default. The judge
therefore builds a second instance and the candidate is run on it once (docs/verdict.md, "Generalisation
trial"). How the instance is chosen:

- Size constants: the keys of the problem's `KFORGE_SMALL` table when it has one, else the names its
  `KFORGE_SIZE_NAMES` list gives (kernel mode writes the spec's sizes there), else its module-level
  int constants of at least 8 (smaller ones are axes, kernel sizes, strides). Their current values (after
  --small / --size) become odd, non-power-of-two and smaller: a third, rounded down to an odd number
  (8192 -> 2731, 16 -> 5); if the problem rejects that (a reference that raises: heads that no longer
  divide a width), three quarters (8192 -> 6144).
- Constructor numbers: every float among get_init_inputs() (not ints, which are sizes, nor bools) becomes
  1.25 * value + 0.125; if the problem rejects that, the constructor keeps its values.
- A problem declares its shapes fixed with a module-level `KFORGE_FIXED_SHAPES = True` (only the
  constructor's numbers change), or gives the alternative sizes itself with `KFORGE_GENERALISE = {NAME:
  value}`.
The first attempt whose reference builds, runs and writes every element of its outputs is the instance
(sizes that break a relation between constants, D = 2 * HALF_D, can leave part of an output unwritten:
the reference is run once more with NaN-filled fresh memory, as the candidate is, and must not
change); when none does, or nothing can change, the trial is not possible and the verdict says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import torch

from kforge.worker.problem_sizes import SMALL_SIZES_NAME
from kforge.worker.uninitialized import uninitialized_memory_poisoned

SIZE_NAMES_NAME = "KFORGE_SIZE_NAMES"
FIXED_SHAPES_NAME = "KFORGE_FIXED_SHAPES"
ALTERNATIVE_SIZES_NAME = "KFORGE_GENERALISE"
MIN_SIZE_CONSTANT = 8
VALUE_SCALE, VALUE_SHIFT = 1.25, 0.125


@dataclass
class Attempt:
    sizes: dict[str, Any] = field(default_factory=dict)  # overrides on top of the main instance's
    change_init_values: bool = False

    def describe(self) -> str:
        parts = [", ".join(f"{name}={value}" for name, value in self.sizes.items())] if self.sizes else []
        if self.change_init_values:
            parts.append("other constructor numbers")
        return "; ".join(parts) or "nothing changed"


def odd_third(value: int) -> int:
    return max(1, (value // 3) | 1)


def three_quarters(value: int) -> int:
    return max(1, (3 * value) // 4)


def size_constants(problem: ModuleType) -> dict[str, int]:
    """The problem's size constants and their current values (after the main instance's overrides): the
    keys of KFORGE_SMALL, else the names KFORGE_SIZE_NAMES lists (kernel mode writes it from the spec's
    sizes), else every public module-level int of at least MIN_SIZE_CONSTANT."""
    table = getattr(problem, SMALL_SIZES_NAME, None)
    listed = getattr(problem, SIZE_NAMES_NAME, None)
    if isinstance(table, dict) and table:
        names, declared = list(table), True
    elif isinstance(listed, (list, tuple)):
        names, declared = [str(name) for name in listed], True
    else:
        names, declared = [name for name in vars(problem) if not name.startswith(("_", "KFORGE"))], False
    sizes = {}
    for name in names:
        value = getattr(problem, name, None)
        if type(value) is int and (declared or value >= MIN_SIZE_CONSTANT):
            sizes[name] = value
    return sizes


def _resized(sizes: dict[str, int], rule: Any) -> dict[str, int]:
    return {name: rule(value) for name, value in sizes.items() if rule(value) != value}


def attempts(problem: ModuleType) -> tuple[list[Attempt], str]:
    """The instances to try, in order, and what limits them (empty list: the reason it is impossible)."""
    fixed = getattr(problem, FIXED_SHAPES_NAME, False) is True
    declared = getattr(problem, ALTERNATIVE_SIZES_NAME, None)
    note = ""
    if fixed:
        size_choices: list[dict[str, Any]] = []
        note = f"the problem declares its shapes fixed ({FIXED_SHAPES_NAME})"
    elif isinstance(declared, dict):
        size_choices = [dict(declared)]
    else:
        sizes = size_constants(problem)
        size_choices = [
            choice for choice in (_resized(sizes, odd_third), _resized(sizes, three_quarters)) if choice
        ]
        if not size_choices:
            note = "the problem has no size constants to change"
    tries = [Attempt(choice, True) for choice in size_choices]
    tries += [Attempt(choice, False) for choice in size_choices]
    tries.append(Attempt({}, True))
    return tries, note


def _changed(value: Any) -> tuple[Any, bool]:
    if isinstance(value, float):
        return VALUE_SCALE * value + VALUE_SHIFT, True
    if isinstance(value, (list, tuple)):
        items = [_changed(item) for item in value]
        changed = any(flag for _, flag in items)
        return type(value)(item for item, _ in items), changed
    return value, False


def changed_init_values(init_inputs: list[Any]) -> tuple[list[Any], list[str]]:
    """get_init_inputs() with every float changed, and what changed (empty when it holds none)."""
    result, changes = [], []
    for index, value in enumerate(init_inputs):
        new, changed = _changed(value)
        result.append(new)
        if changed:
            changes.append(f"init input {index}: {value!r} -> {new!r}")
    return result, changes


def unwritten_output(model: torch.nn.Module, inputs: list[Any], outputs: list[Any]) -> str | None:
    """Why the reference does not define every element of its outputs at this instance (None when it
    does): with NaN-filled fresh memory, an element it never writes becomes NaN where it was not."""
    with torch.no_grad(), uninitialized_memory_poisoned():
        poisoned = model(*inputs)
    poisoned_outputs = list(poisoned) if isinstance(poisoned, (tuple, list)) else [poisoned]
    for index, (plain, again) in enumerate(zip(outputs, poisoned_outputs, strict=False)):
        if isinstance(plain, torch.Tensor) and isinstance(again, torch.Tensor) and plain.is_floating_point():
            appeared = torch.isnan(again) & ~torch.isnan(plain)
            if bool(appeared.any()):
                count = int(appeared.sum())
                return f"the reference leaves {count} element(s) of output {index} unwritten at these sizes"
    return None
