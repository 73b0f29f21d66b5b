"""How a test block's recorded arguments become an inputs spec (kforge.worker.kernel_capture) and cross
between the judge and the candidate (kforge.worker.values): dtypes, devices, complex tensors, and what is
refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from kforge.worker.kernel_capture import CaptureError, call_signature, describe_argument, ordered_arguments
from kforge.worker.values import decode, encode


def test_dtypes_and_devices_are_described_by_name() -> None:
    assert describe_argument(0, torch.float16) == {"torch_dtype": "float16"}
    assert describe_argument(0, tl.float8e5) == {"triton_dtype": "fp8e5"}
    assert describe_argument(0, torch.device("cpu")) == {"device": "cpu"}


def test_a_complex_tensor_has_a_shape_and_dtype_but_no_range() -> None:
    value = torch.randn(3, 5, dtype=torch.complex64)
    assert describe_argument(0, value) == {"shape": [3, 5], "dtype": "complex64"}


def test_an_object_argument_is_refused_with_what_is_taken() -> None:
    with pytest.raises(CaptureError, match=r"argument 2 is a Linear.*torch and Triton dtypes and devices"):
        describe_argument(2, torch.nn.Linear(2, 2))


def test_dtypes_and_devices_cross_between_processes() -> None:
    values = [torch.bfloat16, tl.float8e5, torch.device("cpu"), (tl.int32, 4)]
    decoded = decode(encode(values, lambda tensor: {}), lambda data: torch.empty(0))
    assert decoded == values
    assert type(decoded[1]) is tl.dtype


def scaled_into(x, /, scale, *, out, bias=0.0):  # a wrapper as real files write them
    return out


def test_keyword_only_parameters_are_recorded_by_name_after_the_positional_ones() -> None:
    signature = call_signature(scaled_into, "scaled_into")
    arguments, keywords = ordered_arguments(signature, (1, 2.0), {"out": 3})
    assert arguments == [1, 2.0, 3, 0.0]
    assert keywords == {2: "out", 3: "bias"}


def test_an_autograd_functions_apply_is_recorded_with_its_forwards_parameters() -> None:
    class Scaled(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor=2.0):
            return x * factor

    signature = call_signature(Scaled.apply, "Scaled.apply")
    assert signature is not None and list(signature.parameters) == ["x", "factor"]
    assert ordered_arguments(signature, (5,), {}) == ([5, 2.0], {})


def test_a_wrapper_taking_kwargs_is_refused() -> None:
    def wrapper(x, **options):
        return x

    with pytest.raises(CaptureError, match="\\*\\*kwargs"):
        call_signature(wrapper, "wrapper")
