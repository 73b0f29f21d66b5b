"""Which function of a kernel file kernel mode takes as the wrapper when no --entry is given
(kforge.worker.kernel_capture.find_entry): the one the test block calls that reaches a Triton launch."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from kforge.worker.kernel_capture import CaptureError, find_entry

CODE = """
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) * 2, mask=offsets < n)


def quantize(w):  # a PyTorch helper the test block prepares its inputs with
    return (w * 127).round().to(torch.int8)


def _launch(x, out):
    scale_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)


def scaled(x):
    out = torch.empty_like(x)
    _launch(x, out)
    return out
"""


def test_the_called_function_that_reaches_a_launch_is_the_wrapper() -> None:
    test_block = "def test():\n    w = quantize(torch.randn(8))\n    return scaled(w.float())\n"
    assert find_entry(CODE, test_block) == "scaled"  # through _launch, not the helper called first


def test_without_a_launching_call_the_first_called_function_is_taken() -> None:
    assert find_entry(CODE, "def test():\n    return quantize(torch.randn(8))\n") == "quantize"


def test_a_test_block_calling_no_function_of_the_file_is_a_usage_error() -> None:
    with pytest.raises(CaptureError, match="calls no function of the file by name"):
        find_entry(CODE, "def test():\n    return torch.randn(8)\n")


FUNCTION_CODE = (
    CODE
    + """

class Scaled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor=2.0):
        out = torch.empty_like(x)
        _launch(x, out)
        return out


scaled_fn = Scaled.apply
"""
)


def test_an_autograd_function_called_through_apply_is_the_wrapper() -> None:
    test_block = "def test():\n    w = quantize(torch.randn(8))\n    return Scaled.apply(w.float())\n"
    assert find_entry(FUNCTION_CODE, test_block) == "Scaled.apply"


def test_a_module_level_alias_of_apply_is_the_wrapper() -> None:
    test_block = "def test():\n    w = quantize(torch.randn(8))\n    return scaled_fn(w.float())\n"
    assert find_entry(FUNCTION_CODE, test_block) == "scaled_fn"
