"""The reference's timed call, shaped like the candidate worker's: used by the judge and by the reference
timed beside the candidate (beside_reference.py).

Besides the call, the candidate worker does untimed work between its samples: the previous output is
NaN-filled before a sample, elements of the output are gathered after it, the output is kept until then.
A 4 µs kernel's time moves by up to 0.35 µs with what ran before the flush (issue 31, docs/benchmarks.md),
so the reference's side queues the same kernels between its samples and drops their results. Both sides
rotate the placements of their inputs and outputs the same way (placements.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from kforge.worker.placements import KeptOutputs, RotatingInputs
from kforge.worker.timed_outputs import TimedOutputLog, cloned, copy_values, poison_outputs


def model_tensors(model: torch.nn.Module | None) -> list[torch.Tensor]:
    """A module's parameters and buffers (none without a module): never poisoned, since an output may be
    a view of them."""
    if model is None:
        return []
    return [*model.parameters(), *model.buffers()]


@dataclass
class ReferenceHooks:
    call: Callable[[], object]
    before_sample: Callable[[int], None]  # j: the sample's index in the request
    after_sample: Callable[[int], None]
    warm_up_before: Callable[[int], None]  # j: the warm-up call's index (the value sets in turn)


@dataclass
class ShadowedReference:
    """The reference's timing inputs (private copies, one per placement) and its last timed outputs (the
    last poisoned before the next sample, across requests)."""

    inputs: RotatingInputs
    value_sets: list[list[Any]]  # input values copied into the next placement before a sample, by set
    kept_intact: list[Any] = field(default_factory=list)  # never poisoned: inputs, the model's tensors
    output: Any = None
    kept_outputs: KeptOutputs = field(default_factory=KeptOutputs)

    @staticmethod
    def of(
        inputs: list[Any], value_sets: list[list[Any]], kept_intact: list[Any], device: torch.device
    ) -> ShadowedReference:
        """Private copies of inputs, placed as placements.RotatingInputs places them on this device."""
        return ShadowedReference(RotatingInputs.of(cloned(inputs), device), value_sets, kept_intact)

    def hooks(self, model: Any, order: list[int]) -> ReferenceHooks:
        """The call and the untimed work around it for one request with this value order."""
        sets = self.value_sets
        shadow_log = TimedOutputLog()
        last_use = {index: position for position, index in enumerate(order)}
        kept_intact = [*self.inputs.every_value(), *self.kept_intact]

        def load_values(index: int) -> None:
            poison_outputs(self.output, kept_intact)
            self.kept_outputs.keep(self.output)
            self.inputs.advance()
            if sets:
                copy_values(self.inputs.current, sets[index])

        def call() -> object:
            with torch.no_grad():
                self.output = model(*self.inputs.current)
            return self.output

        def after_sample(j: int) -> None:
            value_set = order[j] if sets else 0
            shadow_log.record(self.output, value_set, keep_whole=last_use.get(value_set, j) == j)

        return ReferenceHooks(
            call=call,
            before_sample=lambda j: load_values(order[j] if sets else 0),
            after_sample=after_sample,
            warm_up_before=lambda j: load_values(j % max(1, len(sets))),
        )
