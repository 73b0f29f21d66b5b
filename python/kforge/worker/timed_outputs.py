"""What the candidate worker keeps of its timed calls, so the judge can check the timed calls themselves.

Between timing samples the worker copies one of several input value sets (made by the judge from other
seeds, in an order the supervisor draws at random) into the same timing input buffers. After every
timed call it keeps, untimed, SAMPLED_ELEMENTS elements of each output at positions drawn at random
once per evaluation, and a whole copy of the last output of each value set in each request. The judge
compares them all with its references: a candidate that answers from a cache keyed on the input
object, its pointer, a call count or a global flag returns another value set's answer and is rejected.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from kforge.worker import argument_objects
from kforge.worker.correctness import aliased_input, flatten_outputs, is_plain_value
from kforge.worker.dispatch_guard import kforge_owned

SAMPLED_ELEMENTS = 256  # elements of each output checked per timed call
MAX_PROBLEMS = 4  # distinct problems reported

_CLONE = torch.Tensor.clone
_INDEX_SELECT = torch.Tensor.index_select
_FLATTEN = torch.Tensor.flatten
_COPY = torch.Tensor.copy_
_STACK = torch.stack


def input_attribute_problems(inputs: list[Any]) -> list[str]:
    """State the candidate stored on its input tensors: Python attributes, a .grad, a swapped class."""
    problems = []
    for index, value in enumerate(inputs):
        if not isinstance(value, torch.Tensor):
            continue
        if type(value) is not torch.Tensor:
            problems.append(f"input {index} became a {type(value).__name__}")
        names = sorted(vars(value))
        if names:
            problems.append(f"input {index} has attribute(s) {', '.join(map(repr, names[:5]))}")
        if value.grad is not None:
            problems.append(f"input {index} has a .grad")
    return problems


def cloned(values: list[Any]) -> list[Any]:
    """Private copies of the tensors among values (an object argument's too: a new object holding
    copies; a list of tensors: a new list); other values as they are."""
    return [_cloned(value) for value in values]


def _cloned(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if argument_objects.is_argument_object(value):
        return argument_objects.map_tensors(value, torch.Tensor.clone)
    if argument_objects.is_tensor_sequence(value):
        return type(value)(_cloned(item) for item in value)
    return value


SPACER_BYTES = 1 << 16  # around a reference's moved argument copies; accesses further away go unseen
SPACER_BYTE = 0xFF  # NaN as any float type


@dataclass
class Spacers:
    """Allocations of SPACER_BYTE around each tensor argument: what a call reads there is not its input,
    and what it writes there is outside its arguments."""

    around: list[tuple[int, str, torch.Tensor]] = field(default_factory=list)  # argument, side, bytes

    def copy_apart(self, tensor: torch.Tensor, index: int) -> torch.Tensor:
        """A copy of argument `index`, allocated between two new spacers."""
        self.around.append((index, "before", self._spacer(tensor.device)))
        copy = tensor.clone()
        self.around.append((index, "after", self._spacer(tensor.device)))
        return copy

    @staticmethod
    def _spacer(device: torch.device) -> torch.Tensor:
        return torch.full((SPACER_BYTES,), SPACER_BYTE, dtype=torch.uint8, device=device)

    def written(self) -> list[str]:
        """Where the call wrote outside its arguments ("before argument 0", "after argument 2")."""
        return [
            f"{side} argument {index}"
            for index, side, spacer in self.around
            if not bool((spacer == SPACER_BYTE).all().item())
        ]


def cloned_apart(values: list[Any]) -> tuple[list[Any], Spacers]:
    """Private copies as cloned() makes them, each tensor allocated between two spacers of SPACER_BYTE:
    the copies sit at other addresses than in a plain run, next to other bytes, so a reference that
    reads outside its arguments gives another answer (and shows as one that disagrees with itself),
    and one that writes outside them changes a spacer. The spacers must live until the call has ended."""
    spacers = Spacers()
    copies = [
        spacers.copy_apart(value, index) if isinstance(value, torch.Tensor) else _cloned(value)
        for index, value in enumerate(values)
    ]
    return copies, spacers


def tensors_in(value: Any) -> list[torch.Tensor]:
    """The tensors of an input list (nested lists, tuples, dicts and object arguments too), in the order
    values.encode exports them."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [tensor for item in value for tensor in tensors_in(item)]
    if isinstance(value, dict):
        return [tensor for item in value.values() for tensor in tensors_in(item)]
    if argument_objects.is_argument_object(value):  # a module's weights, a config's tensors
        attributes = argument_objects.object_parts(value)[0]
        return [tensor for item in attributes.values() for tensor in tensors_in(item)]
    return []


def tensor_bytes(values: Any) -> int:
    """Bytes of the tensors among values (nested lists, tuples, dicts and object arguments too)."""
    return sum(tensor.nbytes for tensor in tensors_in(values if isinstance(values, list) else [values]))


def copy_values(destination: list[Any], source: list[Any]) -> None:
    """Writes the source set's tensor values into the destination's buffers (kforge's own op)."""
    with kforge_owned():
        for into, value in zip(tensors_in(destination), tensors_in(source), strict=True):
            _COPY(into, value)


@dataclass(frozen=True)
class _Layout:
    container: str | None
    outputs: tuple[tuple[tuple[int, ...], Any, Any], ...]  # shape, dtype, device (a plain value: its type)


def _layout(result: Any) -> _Layout | str:
    """The result's container and each output's shape, dtype and device, or why it cannot be checked."""
    container = type(result).__name__ if isinstance(result, (tuple, list)) else None
    described = []
    for index, item in enumerate(flatten_outputs(result)):
        if is_plain_value(item):  # checked whole in the kept last output; nothing to sample
            described.append(((), type(item), None))
            continue
        if type(item) is not torch.Tensor:
            return f"timed output {index} is a {type(item).__name__}, expected a torch.Tensor"
        described.append((tuple(item.shape), item.dtype, item.device))
    return _Layout(container, tuple(described))


@dataclass
class TimedOutputLog:
    """Sampled elements of every timed output and whole copies of the last output of each value set."""

    output_problem: Callable[[torch.Tensor], str | None] = lambda item: None
    layout: _Layout | None = None
    positions: list[torch.Tensor] = field(default_factory=list)  # per output: flat indices
    rows: list[list[torch.Tensor]] = field(default_factory=list)  # per timed call: per output
    slots: dict[int, list[torch.Tensor]] = field(default_factory=dict)  # value set -> its last output
    problems: list[str] = field(default_factory=list)

    def _problem(self, text: str) -> None:
        if text not in self.problems and len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)

    def record(self, result: Any, value_set: int, keep_whole: bool) -> None:
        """Untimed, after a timed call: keeps what the judge will check of its output."""
        layout = _layout(result)
        if isinstance(layout, str):
            self._problem(layout)
            return
        if self.layout is None:
            self.layout = layout
            self._choose_positions(flatten_outputs(result))
        elif layout != self.layout:
            self._problem("the timed calls returned outputs of changing number, shape, dtype or device")
            return
        outputs = flatten_outputs(result)
        for item in outputs:
            problem = None if is_plain_value(item) else self.output_problem(item)
            if problem is not None:
                self._problem(f"a timed output is {problem}")
                return
        with kforge_owned():
            self.rows.append(
                [
                    where.float() if is_plain_value(item) else _INDEX_SELECT(_FLATTEN(item), 0, where)
                    for item, where in zip(outputs, self.positions, strict=True)
                ]
            )
            if keep_whole:
                self.slots[value_set] = [item if is_plain_value(item) else _CLONE(item) for item in outputs]

    def _choose_positions(self, outputs: list[Any]) -> None:
        generator = torch.Generator().manual_seed(secrets.randbits(63))
        with kforge_owned():
            devices = [item.device for item in outputs if isinstance(item, torch.Tensor)]
            device = devices[0] if devices else None
            for item in outputs:
                if is_plain_value(item):  # no elements to sample, on the device the samples travel from
                    self.positions.append(torch.empty(0, dtype=torch.int64, device=device))
                    continue
                count = min(item.numel(), SAMPLED_ELEMENTS)
                chosen = torch.randint(max(1, item.numel()), (count,), generator=generator, dtype=torch.int64)
                self.positions.append(chosen.to(item.device))

    def sampled_rows(self, output: int) -> torch.Tensor:
        """Output `output`'s sampled elements of every timed call, one row per call."""
        with kforge_owned():
            return _STACK([row[output] for row in self.rows])

    def slot_result(self, value_set: int) -> Any:
        """The kept last output of a value set, in the container forward returned."""
        assert self.layout is not None
        outputs = self.slots[value_set]
        if self.layout.container is None:
            return outputs[0]
        return tuple(outputs) if self.layout.container == "tuple" else list(outputs)


def poison_outputs(result: Any, inputs: list[Any]) -> None:
    """Fills a finished call's outputs with NaN (-1 for integers), except an input it returned: memory the
    allocator recycles, or a tensor the code keeps, no longer holds a correct result. Allocators that bypass
    torch's fill of fresh memory (Inductor's empty_strided_cuda) would otherwise hand the next call, even
    one whose kernels are skipped in the ghost replay, the previous call's answer."""
    with kforge_owned():
        for item in flatten_outputs(result):
            if type(item) is torch.Tensor and item.numel() > 0 and aliased_input(item, inputs) is None:
                item.fill_(float("nan") if item.is_floating_point() else -1)
