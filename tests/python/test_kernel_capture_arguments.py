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

from kforge.worker.kernel_capture import (
    CaptureError,
    call_signature,
    describe_argument,
    ordered_arguments,
    written_arguments,
)
from kforge.worker.timed_outputs import cloned, tensors_in
from kforge.worker.values import decode, encode


def test_dtypes_and_devices_are_described_by_name() -> None:
    assert describe_argument(0, torch.float16) == {"torch_dtype": "float16"}
    assert describe_argument(0, tl.float8e5) == {"triton_dtype": "fp8e5"}
    assert describe_argument(0, torch.device("cpu")) == {"device": "cpu"}


def test_a_complex_tensor_has_a_shape_and_dtype_but_no_range() -> None:
    value = torch.randn(3, 5, dtype=torch.complex64)
    assert describe_argument(0, value) == {"shape": [3, 5], "dtype": "complex64"}


class LaunchConfig:  # a configuration object as kernel files define them
    def __init__(self, num_warps: int = 4, **kwargs: int) -> None:
        self.num_warps = num_warps
        self.kwargs = kwargs


def test_a_torch_module_is_described_by_its_attributes_and_constant_parameters_drawn_around_them() -> None:
    spec = describe_argument(1, torch.nn.LayerNorm(8, eps=1e-6))
    assert spec["object"] == "LayerNorm" and spec["torch_nn"] is True
    assert spec["parameters"] == ["bias", "weight"] and spec["buffers"] == []
    attributes = spec["attributes"]
    assert attributes["eps"] == {"value": 1e-6}
    assert attributes["normalized_shape"] == {"value": [8], "sequence": "tuple"}
    assert attributes["weight"] == {"shape": [8], "dtype": "float32", "low": 0.5, "high": 1.5}
    assert attributes["bias"] == {"shape": [8], "dtype": "float32", "low": -0.5, "high": 0.5}


def test_a_plain_object_is_described_by_its_public_attributes() -> None:
    spec = describe_argument(3, LaunchConfig(num_warps=2, BLOCK=64))
    assert spec["object"] == "LaunchConfig" and spec["torch_nn"] is False
    assert spec["attributes"] == {"num_warps": {"value": 2}, "kwargs": {"value": {"BLOCK": 64}}}


def test_an_argument_kforge_cannot_rebuild_is_refused_with_what_is_taken() -> None:
    with pytest.raises(CaptureError, match=r"argument 2 is a Sequential with submodules"):
        describe_argument(2, torch.nn.Sequential(torch.nn.Linear(2, 2)))
    with pytest.raises(CaptureError, match=r"argument 0 is a function;.*objects \(modules, configs\)"):
        describe_argument(0, lambda x: x)
    with pytest.raises(CaptureError, match=r"argument 1.kwargs is a set"):
        config = LaunchConfig()
        config.kwargs = {1, 2}  # type: ignore[assignment]
        describe_argument(1, config)


def test_objects_cross_between_processes_as_a_torch_module_or_a_namespace_of_attributes() -> None:
    tensors: list[torch.Tensor] = []

    def export(tensor: torch.Tensor) -> dict[str, int]:
        tensors.append(tensor.clone())
        return {"i": len(tensors) - 1}

    layernorm = torch.nn.LayerNorm(4)
    with torch.no_grad():
        layernorm.weight.uniform_()
    decoded = decode(encode([layernorm, LaunchConfig(BLOCK=32)], export), lambda data: tensors[data["i"]])
    module, config = decoded
    assert type(module) is torch.nn.LayerNorm and not module.training
    assert isinstance(module.weight, torch.nn.Parameter) and not module.weight.requires_grad
    assert torch.equal(module.weight, layernorm.weight.detach()) and module.eps == layernorm.eps
    assert module.normalized_shape == (4,)
    assert config.num_warps == 4 and config.kwargs == {"BLOCK": 32}
    # The judge finds the same tensors, in the order they were exported: the refresh of a trial's
    # inputs and the timed calls' input checks walk them in step with the shared buffers.
    found = tensors_in([torch.zeros(2), layernorm, LaunchConfig(BLOCK=32)])
    assert len(found) == 1 + len(tensors) and found[0].shape == (2,)
    assert [tuple(t.shape) for t in found[1:]] == [tuple(t.shape) for t in tensors]


def test_dtypes_and_devices_cross_between_processes() -> None:
    values = [torch.bfloat16, tl.float8e5, torch.device("cpu"), (tl.int32, 4)]
    decoded = decode(encode(values, lambda tensor: {}), lambda data: torch.empty(0))
    assert decoded == values
    assert type(decoded[1]) is tl.dtype


def scaled_into(x, /, scale, *, out, bias=0.0):  # a wrapper as real files write them
    return out


def test_keyword_only_parameters_are_recorded_by_name_after_the_positional_ones() -> None:
    signature = call_signature(scaled_into, "scaled_into")
    arguments, keywords = ordered_arguments(signature, (1, 2.0), {"out": 3, "bias": 0.5})
    assert arguments == [1, 2.0, 3, 0.5]
    assert keywords == {2: "out", 3: "bias"}


def test_parameters_the_call_did_not_give_are_left_out_unless_a_later_one_needs_their_place() -> None:
    # A variant's wrapper may declare them differently: `sqrt(input, out=None)` against
    # `sqrt(input, *, out=None)` (TritonBench-T answers); passing the default would break its call.
    signature = call_signature(scaled_into, "scaled_into")
    assert ordered_arguments(signature, (1, 2.0), {"out": 3}) == ([1, 2.0, 3], {2: "out"})

    def spaced(x, bias=None, scale=1.0, clamp=None):  # type: ignore[no-untyped-def]
        return x

    spaced_signature = call_signature(spaced, "spaced")
    assert ordered_arguments(spaced_signature, (1,), {}) == ([1], {})
    assert ordered_arguments(spaced_signature, (1,), {"scale": 2.0}) == ([1, None, 2.0], {})


def test_nested_sequences_of_scalars_are_kept_as_python_literals() -> None:
    assert describe_argument(2, ([1], [0])) == {"literal": "([1], [0])"}
    assert describe_argument(2, (1, 2)) == {"value": [1, 2], "sequence": "tuple"}
    with pytest.raises(CaptureError, match="argument 2 is a tuple"):
        describe_argument(2, ([float("nan")], [0]))  # no literal gives nan back


def test_an_autograd_functions_apply_is_recorded_with_its_forwards_parameters() -> None:
    class Scaled(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor=2.0):
            return x * factor

    signature = call_signature(Scaled.apply, "Scaled.apply")
    assert signature is not None and list(signature.parameters) == ["x", "factor"]
    assert ordered_arguments(signature, (5,), {}) == ([5], {})
    assert ordered_arguments(signature, (5,), {"factor": 3.0}) == ([5, 3.0], {})  # apply takes no names


def test_a_wrapper_taking_kwargs_is_refused() -> None:
    def wrapper(x, **options):
        return x

    with pytest.raises(CaptureError, match="\\*\\*kwargs"):
        call_signature(wrapper, "wrapper")


def test_private_copies_of_an_object_argument_hold_copies_of_its_tensors() -> None:
    # The judge's and the worker's timing inputs are private copies into which value sets are written:
    # an object shared with the pristine inputs would carry those writes back into them.
    layernorm = torch.nn.LayerNorm(4)
    (copy,) = cloned([layernorm])
    assert type(copy) is torch.nn.LayerNorm and copy is not layernorm
    with torch.no_grad():
        copy.weight.fill_(3.0)
    assert torch.equal(layernorm.weight.detach(), torch.ones(4))


def test_a_sequence_of_tensors_is_captured_item_by_item() -> None:
    # torch.hstack's `tensors` (a TritonBench-T wrapper's first argument): each item its own entry.
    parts = [torch.tensor([1.0, 2.0]), torch.tensor([[3, 4]], dtype=torch.int32), 2.5]
    spec = describe_argument(0, parts)
    assert spec["sequence"] == "list"
    first, second, third = spec["items"]
    assert first == {"shape": [2], "dtype": "float32", "low": 1.0, "high": 2.0}
    assert second["shape"] == [1, 2] and second["dtype"] == "int32" and second["values"] == [3, 4]
    assert third == {"value": 2.5}
    assert describe_argument(1, (torch.zeros(3),))["sequence"] == "tuple"
    with pytest.raises(CaptureError, match=r"argument 0\[1\] is a set"):
        describe_argument(0, [torch.zeros(1), {1, 2}])


def test_private_copies_of_a_sequence_argument_hold_copies_of_its_tensors() -> None:
    parts = [torch.zeros(2), torch.ones(2)]
    (copy,) = cloned([parts])
    assert type(copy) is list and copy is not parts and copy[0] is not parts[0]
    copy[0].fill_(5.0)
    assert torch.equal(parts[0], torch.zeros(2))
    assert [tensor.data_ptr() for tensor in tensors_in([copy])] == [t.data_ptr() for t in copy]


def test_an_output_argument_handed_back_counts_as_written_even_when_its_bytes_did_not_change() -> None:
    """isfinite-style wrappers: `out0` comes in as torch.empty memory that may already read True, is filled
    with True and returned. Its bytes are the same before and after; a second call on copies, with out0
    flipped, shows the write. An input returned as it came in (a pass-through) is not written."""
    x, untouched, out = torch.randn(8), torch.randn(8), torch.ones(8, dtype=torch.bool)

    def isfinite_into(x: torch.Tensor, untouched: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        out.copy_(torch.isfinite(x))
        return out

    def call_again(fills: dict[int, torch.Tensor]) -> None:
        isfinite_into(*[fills.get(i, value.clone()) for i, value in enumerate(arguments)])

    arguments = [x, untouched, out]
    before = [value.clone() for value in arguments]
    isfinite_into(*arguments)
    assert written_arguments(arguments, before, out, call_again) == [2]
    assert written_arguments(arguments, before, (out[:4], None), call_again) == [2]  # a view, in a tuple
    assert written_arguments(arguments, before, (x, untouched), call_again) == []  # pass-throughs
    assert written_arguments(arguments, before, out) == []  # no second call: no evidence of the write
    untouched.add_(1)
    assert written_arguments(arguments, before, None, call_again) == [1]  # changed bytes, as before
