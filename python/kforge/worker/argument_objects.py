"""Object arguments of a kernel-mode wrapper: an `nn.Module` it reads weights from (`fast_layernorm(ln,
X)`), a configuration object (`Config(BLOCK_M=64)`). What the wrapper can use of them is their attributes,
so an object travels as its class name and attributes (tensors, scalars, dicts and tuples of scalars):

- a module of `torch.nn` (LayerNorm, Linear, ...) is rebuilt as that class, without running its
  constructor: its parameters, buffers and plain attributes are set from the captured ones;
- any other object (a class of the kernel file, a module subclass of the file) becomes a
  `types.SimpleNamespace` of its attributes, so the same stand-in reaches the reference and the
  candidate, whatever classes either file defines. Methods are not carried: a wrapper that calls one
  fails on both sides, which kforge reports as a problem error (docs/kernel-mode.md).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import torch

MAX_DEPTH = 4  # objects inside objects (a config holding a config) up to this depth


def torch_module_class(name: str) -> type[torch.nn.Module] | None:
    """The `torch.nn` module class `name` names (LayerNorm), None for any other name."""
    found = getattr(torch.nn, name, None) if name.isidentifier() else None
    return found if isinstance(found, type) and issubclass(found, torch.nn.Module) else None


def is_argument_object(value: Any) -> bool:
    """An object kforge carries as its attributes: a module, a namespace, or an instance of a plain
    Python class (not a tensor, a scalar, a sequence, a dict, a function or a class)."""
    if isinstance(value, (torch.nn.Module, types.SimpleNamespace)):
        return True
    if isinstance(value, (torch.Tensor, str, bytes, int, float, bool, list, tuple, dict, set, type)):
        return False
    # torch's and Triton's own values (dtypes, devices) have their own encodings
    library = type(value).__module__.split(".")[0]
    if library in {"builtins", "torch", "triton", "numpy"}:
        return False
    return not callable(value) and hasattr(value, "__dict__")


def is_tensor_sequence(value: Any) -> bool:
    """A list or tuple (not a named tuple) holding at least one tensor, at any depth: an argument such as
    torch.hstack's `tensors`, whose tensors are moved, copied and compared one by one."""
    if type(value) not in (list, tuple):
        return False
    return any(isinstance(item, torch.Tensor) or is_tensor_sequence(item) for item in value)


def is_torch_module(value: Any) -> bool:
    """A module whose class `torch.nn` itself defines (rebuilt as that class)."""
    return isinstance(value, torch.nn.Module) and torch_module_class(type(value).__name__) is type(value)


def object_parts(value: Any) -> tuple[dict[str, Any], list[str], list[str]]:
    """An object's public attributes, and which of them are a module's parameters and buffers. A module's
    submodules are refused: rebuilding one would need its constructor."""
    if isinstance(value, torch.nn.Module):
        if children := [name for name, _ in value.named_children()]:
            raise ValueError(f"a {type(value).__name__} with submodules ({', '.join(children)})")
        parameters = {name: item.detach() for name, item in value.named_parameters(recurse=False)}
        buffers = {name: item for name, item in value.named_buffers(recurse=False) if item is not None}
        plain = {
            name: item
            for name, item in vars(value).items()
            if not name.startswith("_") and name != "training" and not callable(item)
        }
        return {**plain, **parameters, **buffers}, sorted(parameters), sorted(buffers)
    attributes = {name: item for name, item in vars(value).items() if not name.startswith("_")}
    return attributes, [], []


def build(class_name: str, attributes: dict[str, Any], parameters: list[str], buffers: list[str]) -> Any:
    """The object an argument spec or an encoded value describes: a `torch.nn` module of its class, else
    a namespace of its attributes."""
    module_class = torch_module_class(class_name)
    if module_class is None:
        return types.SimpleNamespace(**attributes)
    module = module_class.__new__(module_class)
    torch.nn.Module.__init__(module)
    for name, item in attributes.items():
        if name in parameters:
            module.register_parameter(name, torch.nn.Parameter(item, requires_grad=False))
        elif name in buffers:
            module.register_buffer(name, item)
        else:
            setattr(module, name, item)
    return module.eval()


def rebuilt_class(value: Any) -> str:
    """The class an object is rebuilt as in the other process: its own for a `torch.nn` module, else
    a namespace."""
    return type(value).__name__ if is_torch_module(value) else "SimpleNamespace"


def encode_object(value: Any, encode_item: Callable[[Any], dict[str, Any]], depth: int = 0) -> dict[str, Any]:
    """An object as a tagged value (values.encode's "object"); objects inside it likewise."""
    if depth >= MAX_DEPTH:
        raise TypeError(f"objects nested deeper than {MAX_DEPTH} cannot pass between processes")
    attributes, parameters, buffers = object_parts(value)
    return {
        "t": "object",
        "class": rebuilt_class(value),
        "v": {name: _encode_attribute(item, encode_item, depth) for name, item in attributes.items()},
        "parameters": parameters,
        "buffers": buffers,
    }


def _encode_attribute(item: Any, encode_item: Callable[[Any], dict[str, Any]], depth: int) -> dict[str, Any]:
    return encode_object(item, encode_item, depth + 1) if is_argument_object(item) else encode_item(item)


def decode_object(data: dict[str, Any], decode_item: Callable[[Any], Any]) -> Any:
    attributes = {str(name): decode_item(item) for name, item in dict(data.get("v", {})).items()}
    parameters, buffers = list(data.get("parameters", [])), list(data.get("buffers", []))
    return build(str(data.get("class", "")), attributes, parameters, buffers)


def map_tensors(value: Any, change: Callable[[torch.Tensor], torch.Tensor], depth: int = 0) -> Any:
    """The same object with `change` applied to each tensor attribute (a move to another device)."""
    if depth >= MAX_DEPTH:
        raise ValueError(f"objects nested deeper than {MAX_DEPTH}")
    attributes, parameters, buffers = object_parts(value)
    moved = {
        name: change(item)
        if isinstance(item, torch.Tensor)
        else map_tensors(item, change, depth + 1)
        if is_argument_object(item)
        else item
        for name, item in attributes.items()
    }
    return build(rebuilt_class(value), moved, parameters, buffers)


def same_layout(a: Any, b: Any) -> bool:
    """Whether two objects have the same attributes, tensors of the same shape, dtype and device, and
    the same other values (another seed's draw of the same argument)."""
    if type(a) is not type(b):
        return False
    parts_a, parts_b = object_parts(a), object_parts(b)
    if parts_a[1:] != parts_b[1:] or parts_a[0].keys() != parts_b[0].keys():
        return False
    for name, item in parts_a[0].items():
        other = parts_b[0][name]
        if isinstance(item, torch.Tensor) or isinstance(other, torch.Tensor):
            if not (
                isinstance(item, torch.Tensor)
                and isinstance(other, torch.Tensor)
                and (item.shape, item.dtype, item.device) == (other.shape, other.dtype, other.device)
            ):
                return False
        elif is_argument_object(item):
            if not same_layout(item, other):
                return False
        elif type(item) is not type(other) or item != other:
            return False
    return True
