"""Uninitialized memory, poisoned, so that output elements nobody writes can be told apart.

The candidate's forward runs with torch's deterministic fill: torch.empty and friends return NaN (floats)
or the dtype's maximum (integers, True for bool), so an output a kernel never writes cannot pass by
holding yesterday's result. The judge's reference runs under the same poisoning. A reference that itself
leaves part of an output unwritten (a Triton wrapper that allocates with torch.empty and writes only
some rows) is then run a second time with a second poison: the elements whose value follows the poison
are undefined and are not compared (docs/verdict.md, "Outputs the reference leaves undefined").
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from kforge.worker.correctness import Tolerance, float64_chunks


def set_deterministic_algorithms(mode: bool, warn_only: bool) -> None:
    """torch.use_deterministic_algorithms without its import of torch._inductor (about 2,000 modules,
    2-3 s of CPU in every worker that poisons memory): the flag itself lives in torch._C; Inductor's
    copy of it only steers Inductor's compiler, so it is kept in step where Inductor is loaded."""
    torch._C._set_deterministic_algorithms(mode, warn_only=warn_only)
    inductor_config = sys.modules.get("torch._inductor.config")
    if inductor_config is not None:
        inductor_config.deterministic = mode  # type: ignore[attr-defined]


@contextmanager
def uninitialized_memory_poisoned() -> Iterator[None]:
    """torch.empty and friends return NaN-filled memory (max ints), so an output a kernel never writes
    cannot pass by holding yesterday's result."""
    was_deterministic = torch.are_deterministic_algorithms_enabled()
    was_warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    was_filling = torch.utils.deterministic.fill_uninitialized_memory  # type: ignore[attr-defined]
    set_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True  # type: ignore[attr-defined]
    try:
        yield
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = was_filling  # type: ignore[attr-defined]
        set_deterministic_algorithms(was_deterministic, warn_only=was_warn_only)


def second_poison(dtype: torch.dtype) -> float | int | bool:
    """A value unlike torch's fill (NaN, the maximum, True) that every dtype can hold exactly."""
    if dtype.is_floating_point or dtype.is_complex:
        return 3.25  # finite and exact down to float8
    if dtype == torch.bool:
        return False
    return int(torch.iinfo(dtype).min)  # 0 for unsigned types


# The Python-level allocators a wrapper or a module calls; ATen's own allocations are always written.
_ALLOCATORS: frozenset[Callable[..., Any]] = frozenset(
    {
        torch.empty,
        torch.empty_like,
        torch.empty_strided,
        torch.Tensor.new_empty,
        torch.Tensor.new_empty_strided,
    }
)


class _SecondPoison(TorchFunctionMode):
    """Fills every tensor the code allocates uninitialized with second_poison (on top of torch's fill)."""

    def __torch_function__(
        self, func: Callable[..., Any], types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        result = func(*args, **(kwargs or {}))
        if func in _ALLOCATORS and isinstance(result, torch.Tensor) and result.numel() > 0:
            with torch.no_grad():
                result.fill_(second_poison(result.dtype))
        return result


@contextmanager
def uninitialized_memory_poisoned_differently() -> Iterator[None]:
    """The same poisoning, with the code's own uninitialized allocations holding second_poison instead."""
    with uninitialized_memory_poisoned(), _SecondPoison():
        yield


def may_hold_poison(tensor: torch.Tensor) -> bool:
    """Whether some element holds torch's fill value: only then can an element be unwritten."""
    return tensor.numel() > 0 and bool(poison_elements(tensor).any().item())


def poison_elements(tensor: torch.Tensor) -> torch.Tensor:
    """Where the tensor holds torch's fill value (a bool mask of its shape): the elements that may be
    unwritten."""
    if tensor.is_complex():
        return torch.isnan(torch.view_as_real(tensor)).any(dim=-1)
    if tensor.is_floating_point():
        return torch.isnan(tensor)
    if tensor.dtype == torch.bool:
        return tensor.clone()
    return tensor == torch.iinfo(tensor.dtype).max


def undefined_elements(first: torch.Tensor, second: torch.Tensor, tolerance: Tolerance) -> torch.Tensor:
    """The elements (a bool mask of first's shape) whose value followed the poison: NaN in one run and not
    in the other, or values apart by more than the tolerance (which keeps nondeterministic sums defined).
    Elements that are NaN in both runs are defined: the reference computes NaN there."""
    if not (first.is_floating_point() or first.is_complex()):
        return first != second
    complex_pair = first.is_complex()
    shape = torch.view_as_real(first).shape if complex_pair else first.shape
    undefined = torch.empty(shape, dtype=torch.bool, device=first.device)
    flat_undefined = undefined.view(-1)
    # In pieces, as the judge's comparisons: float64 temporaries of a whole 6 GiB output took 130 GiB.
    for piece, a, b in float64_chunks(first, second):
        nan_a, nan_b = torch.isnan(a), torch.isnan(b)
        close = (a == b) | ((a - b).abs() <= tolerance.atol + tolerance.rtol * a.abs())
        flat_undefined[piece] = (nan_a != nan_b) | (~nan_a & ~nan_b & ~close)
    return undefined.any(dim=-1) if complex_pair else undefined
