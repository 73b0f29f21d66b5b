"""JSON encoding of the values that cross between processes: init inputs, forward inputs and outputs.

Tensors are not encoded here; the caller passes an exporter that turns each into a shared-buffer descriptor.
Floats travel as hex strings so they round-trip exactly (NaN and infinities included).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch

from kforge.worker import argument_objects

TensorExporter = Callable[[torch.Tensor], dict[str, Any]]
TensorImporter = Callable[[dict[str, Any]], torch.Tensor]

DTYPES_BY_NAME: dict[str, torch.dtype] = {
    str(dtype).removeprefix("torch."): dtype
    for dtype in (
        torch.float64,
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
        torch.complex64,
        torch.complex128,
        torch.float8_e4m3fn,
        torch.float8_e5m2,
    )
}


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def dtype_from_name(name: str) -> torch.dtype:
    try:
        return DTYPES_BY_NAME[name]
    except KeyError:
        raise ValueError(f"unsupported dtype {name!r}; kforge supports {sorted(DTYPES_BY_NAME)}") from None


def is_triton_dtype(value: Any) -> bool:
    """A `tl.float8e5`-style Triton dtype (checked without importing Triton where it is not loaded)."""
    language = sys.modules.get("triton.language")  # a value of Triton's can only exist once it is loaded
    return language is not None and type(value) is language.dtype


def _triton_dtype(name: Any) -> Any:
    import triton.language as tl

    if (
        not isinstance(name, str)
        or name not in tl.dtype.SINT_TYPES + tl.dtype.UINT_TYPES + tl.dtype.FP_TYPES + tl.dtype.OTHER_TYPES
    ):
        raise ValueError(f"unknown Triton dtype {name!r}")
    return tl.dtype(name)


def encode(value: Any, export_tensor: TensorExporter) -> dict[str, Any]:
    if isinstance(value, torch.Tensor):
        return {"t": "tensor", **export_tensor(value)}
    if value is None:
        return {"t": "none"}
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if isinstance(value, int):
        return {"t": "int", "v": str(value)}
    if isinstance(value, float):
        return {"t": "float", "v": value.hex()}
    if isinstance(value, str):
        return {"t": "str", "v": value}
    if isinstance(value, torch.dtype):
        return {"t": "dtype", "v": dtype_name(value)}
    if isinstance(value, torch.device):
        return {"t": "device", "v": str(value)}
    if is_triton_dtype(value):
        return {"t": "triton_dtype", "v": value.name}
    if isinstance(value, (list, tuple)):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {"t": kind, "v": [encode(item, export_tensor) for item in value]}
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {"t": "dict", "v": {key: encode(item, export_tensor) for key, item in value.items()}}
    if argument_objects.is_argument_object(value):  # a wrapper's module or config argument
        return argument_objects.encode_object(value, lambda item: encode(item, export_tensor))
    raise TypeError(f"cannot pass a value of type {type(value).__name__} between processes")


def decode(data: Any, import_tensor: TensorImporter) -> Any:
    if not isinstance(data, dict) or "t" not in data:
        raise ValueError("an encoded value must be an object with a 't' tag")
    tag = data["t"]
    simple: dict[str, Callable[[Any], Any]] = {
        "none": lambda _: None,
        "bool": bool,
        "int": int,
        "float": float.fromhex,
        "str": str,
        "dtype": dtype_from_name,
        "device": torch.device,
        "triton_dtype": _triton_dtype,
    }
    if tag in simple:
        return simple[tag](data.get("v"))
    if tag == "tensor":
        return import_tensor(data)
    if tag in ("list", "tuple"):
        items = [decode(item, import_tensor) for item in data["v"]]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict":
        return {key: decode(item, import_tensor) for key, item in data["v"].items()}
    if tag == "object":
        return argument_objects.decode_object(data, lambda item: decode(item, import_tensor))
    raise ValueError(f"unknown value tag {tag!r}")


def describe(value: Any) -> str:
    """A short human description of a value's type, for error messages."""
    if isinstance(value, torch.Tensor):
        return f"Tensor[{dtype_name(value.dtype)}, {list(value.shape)}, {value.device}]"
    return type(value).__name__
