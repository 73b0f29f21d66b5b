"""kforge's own tensor operations, out of reach of the candidate's dispatch modes and subclasses.

A candidate that enters a TorchDispatchMode or TorchFunctionMode and never leaves it would otherwise
run its own code inside every operation kforge performs on its outputs (detach, copy into the shared
buffer, NaN poisoning), and could compute the answer there, unseen. So:

- every operation kforge performs on candidate-produced tensors runs under `kforge_owned()`: Python
  dispatch (modes and __torch_dispatch__ subclasses) and torch-function handling (modes and
  __torch_function__ overrides) are switched off, so only ATen's own kernels run;
- after every candidate call the mode stacks are compared with what kforge expects
  (`mode_stack_problems`), and any mode that is not kforge's own is reported and removed;
- tensors the candidate hands over (outputs, parameters, buffers) must be plain tensors
  (`tensor_type_problem`).

The guards are bound when this module is imported, before the candidate is: replacing
torch._C._DisableTorchDispatch later does not change what kforge calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import torch

_DISABLE_DISPATCH = torch._C._DisableTorchDispatch
_DISABLE_TORCH_FUNCTION = torch._C.DisableTorchFunction
_DISPATCH_STACK_LENGTH = torch._C._len_torch_dispatch_stack
_DISPATCH_STACK_AT = torch._C._get_dispatch_stack_at
_POP_DISPATCH = torch._C._pop_torch_dispatch_stack
_FUNCTION_STACK_LENGTH = torch._C._len_torch_function_stack
_FUNCTION_STACK_AT = torch._C._get_function_stack_at
_POP_FUNCTION = torch._C._pop_torch_function_stack
_TENSOR_TORCH_FUNCTION = vars(torch.Tensor).get("__torch_function__")
_TENSOR_TORCH_DISPATCH = vars(torch.Tensor).get("__torch_dispatch__")
_PARAMETER_TORCH_FUNCTION = vars(torch.nn.Parameter).get("__torch_function__")

# `with torch.device(...)` and torch.set_default_device push this mode; it only picks a default device.
_DEVICE_CONTEXT: type | None
try:
    from torch.utils._device import DeviceContext as _DEVICE_CONTEXT
except ImportError:  # pragma: no cover - older torch
    _DEVICE_CONTEXT = None

# The tensor types a candidate may hand over: plain tensors and parameters (nn.Buffer is a plain tensor).
PLAIN_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)


@contextmanager
def kforge_owned() -> Iterator[None]:
    """kforge's own operations on candidate tensors: no Python dispatch, no torch-function handling."""
    with ExitStack() as stack:
        stack.enter_context(_DISABLE_TORCH_FUNCTION())
        stack.enter_context(_DISABLE_DISPATCH())
        yield


def dispatch_modes() -> list[Any]:
    """The TorchDispatchMode stack, innermost last."""
    return [_DISPATCH_STACK_AT(i) for i in range(_DISPATCH_STACK_LENGTH())]


def function_modes() -> list[Any]:
    """The TorchFunctionMode stack, innermost last."""
    return [_FUNCTION_STACK_AT(i) for i in range(_FUNCTION_STACK_LENGTH())]


def _allowed(mode: Any, own: tuple[Any, ...]) -> bool:
    return any(mode is mine for mine in own) or (
        _DEVICE_CONTEXT is not None and type(mode) is _DEVICE_CONTEXT
    )


def mode_stack_problems(own_dispatch: tuple[Any, ...] = (), own_function: tuple[Any, ...] = ()) -> list[str]:
    """What is wrong with the mode stacks: a mode that is not kforge's own, or one of kforge's missing.
    Called after every candidate call; an empty list means the stacks are as kforge left them."""
    problems: list[str] = []
    dispatch, function = dispatch_modes(), function_modes()
    for kind, stack, own in (
        ("TorchDispatchMode", dispatch, own_dispatch),
        ("TorchFunctionMode", function, own_function),
    ):
        for mode in stack:
            if not _allowed(mode, own):
                problems.append(f"a {kind} the candidate left active ({type(mode).__qualname__})")
        for mine in own:
            if not any(mode is mine for mode in stack):
                problems.append(
                    f"kforge's {type(mine).__name__} was removed from the {kind} stack during the call"
                )
    for owner, name, original in (
        (torch.Tensor, "__torch_function__", _TENSOR_TORCH_FUNCTION),
        (torch.Tensor, "__torch_dispatch__", _TENSOR_TORCH_DISPATCH),
        (torch.nn.Parameter, "__torch_function__", _PARAMETER_TORCH_FUNCTION),
    ):
        if vars(owner).get(name) is not original:
            problems.append(f"{owner.__name__}.{name} was replaced")
    return problems


def clear_foreign_modes(own_dispatch: tuple[Any, ...] = (), own_function: tuple[Any, ...] = ()) -> None:
    """Pops every mode above the innermost of kforge's own (or all of them when none of kforge's is on
    the stack), so that nothing the candidate pushed survives into kforge's own handling."""
    while _DISPATCH_STACK_LENGTH() > 0 and not _allowed(
        _DISPATCH_STACK_AT(_DISPATCH_STACK_LENGTH() - 1), own_dispatch
    ):
        _POP_DISPATCH(None)  # None: the plain mode stack (not a per-dispatch-key one)
    while _FUNCTION_STACK_LENGTH() > 0 and not _allowed(
        _FUNCTION_STACK_AT(_FUNCTION_STACK_LENGTH() - 1), own_function
    ):
        _POP_FUNCTION()


def tensor_type_problem(value: Any, what: str) -> str | None:
    """Why `value` (a tensor the candidate produced or holds) is not a plain tensor, or None."""
    if not isinstance(value, torch.Tensor):
        return None
    kind = type(value)
    if kind not in PLAIN_TENSOR_TYPES:
        return f"{what} is a {kind.__qualname__}, a tensor subclass: only plain tensors and nn.Parameter"
    for name in ("__torch_function__", "__torch_dispatch__"):
        if name in vars(value):
            return f"{what} carries its own {name}"
    return None
