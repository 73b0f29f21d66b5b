"""Adjustments that let real-world Triton code run under TRITON_INTERPRET=1 on a machine with no GPU."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np

EQUAL_TIMES = [1.0, 1.0, 1.0]
_PATCHED = "_kforge_bfloat16_fixed"
_SCAN_PATCHED = "_kforge_log_step_scan"


def _no_timing(kernel_call: Callable[[], Any], quantiles: Any = None, **_: Any) -> list[float]:
    """The interpreter's timings mean nothing: report every config as equal, so the first one wins."""
    return EQUAL_TIMES


def bfloat16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 values (as the interpreter stores them: uint16 bit patterns) widened exactly to float32."""
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def float32_to_bfloat16_bits(values: np.ndarray) -> np.ndarray:
    """float32 rounded to the nearest bfloat16, ties to even, as the GPU's cvt.rn.bf16.f32 does; NaN
    stays a (quiet) NaN and values past the largest bfloat16 become infinity."""
    data = np.asarray(values, dtype=np.float32)
    bits = data.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(data)
    rounded[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)
    return rounded


def _fix_bfloat16(builder_class: Any, tensor_handle: Any, tl: Any) -> None:
    """Triton 3.6's interpreter keeps bfloat16 as uint16 bit patterns: its tl.dot multiplies those
    patterns as integers (wrong results for any bfloat16 matmul), and its float32 -> bfloat16 cast
    truncates where the GPU rounds to nearest even. Widen bfloat16 dot operands to float32 (every
    product of two bfloat16 values is exact in float32, and the GPU accumulates in float32), and
    round the cast as the GPU does."""
    if getattr(builder_class, _PATCHED, False):
        return
    create_dot = builder_class.create_dot
    cast_impl = builder_class.cast_impl

    def widened(handle: Any) -> Any:
        if handle.dtype.scalar != tl.bfloat16:
            return handle
        return tensor_handle(bfloat16_bits_to_float32(handle.data), tl.float32)

    def dot(self: Any, a: Any, b: Any, d: Any, input_precision: Any, max_num_imprecise_acc: Any) -> Any:
        return create_dot(self, widened(a), widened(b), d, input_precision, max_num_imprecise_acc)

    def cast(self: Any, src: Any, dst_type: Any) -> Any:
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16:
            return tensor_handle(float32_to_bfloat16_bits(src.data), dst_type.scalar)
        return cast_impl(self, src, dst_type)

    builder_class.create_dot = dot
    builder_class.cast_impl = cast
    setattr(builder_class, _PATCHED, True)


def prepare_triton_interpreter() -> None:
    """@triton.autotune asks the active GPU driver for a benchmarker, and there is none on the CPU:
    give autotuners without their own do_bench a constant one, so they pick their first config.
    Also makes the interpreter's bfloat16 arithmetic match the GPU's (_fix_bfloat16), skips its
    integer-overflow sanitizer (_skip_dead_overflow_checks) and scans in log steps (_scan_in_log_steps)."""
    import triton.language as tl
    from triton.runtime import interpreter
    from triton.runtime.autotuner import Autotuner

    def do_bench(self: Autotuner) -> Callable[..., list[float]]:
        return self._do_bench if self._do_bench is not None else _no_timing

    patched = cached_property(do_bench)
    patched.__set_name__(Autotuner, "do_bench")
    Autotuner.do_bench = patched  # type: ignore[method-assign,assignment]
    _fix_bfloat16(interpreter.InterpreterBuilder, interpreter.TensorHandle, tl)
    _skip_dead_overflow_checks(interpreter.interpreter_builder)
    _scan_in_log_steps(interpreter.ScanOps)


def _scan_in_log_steps(scan_ops: Any) -> None:
    """tl.associative_scan with a combine function of the user's: Triton 3.6's interpreter calls the
    combine function once per element, in Python (a 37 x 4096 scan: 150,000 interpreted calls, tens of
    seconds). Combine whole shifted arrays instead, log2(n) times (Hillis-Steele; earlier elements stay
    the left operand): the same result for an associative function, which the scan requires, with the
    tree-shaped rounding order a GPU scan has rather than a sequential one."""
    if getattr(scan_ops, _SCAN_PATCHED, False):
        return
    sequential = scan_ops.generic_scan

    def generic_scan(self: Any, inputs: list[Any]) -> list[Any]:
        try:
            return _log_step_scan(self, inputs)
        except Exception:  # noqa: BLE001 - a combine function the array form cannot take: one by one
            return sequential(self, inputs)

    scan_ops.generic_scan = generic_scan
    setattr(scan_ops, _SCAN_PATCHED, True)


def _log_step_scan(scan: Any, inputs: list[Any]) -> list[Any]:
    axis, dtypes = scan.axis, [item.dtype for item in inputs]
    accumulated = [np.array(item.handle.data, copy=True) for item in inputs]
    length = accumulated[0].shape[axis]
    kept = [slice(None)] * accumulated[0].ndim
    shift = 1
    while shift < length:
        # Whole blocks (Triton's shapes are powers of two): each element meets the one `shift` before
        # it; the first `shift` positions meet wrapped-around values, and their results are dropped.
        earlier = [np.roll(data, shift, axis=axis) for data in accumulated]
        with np.errstate(all="ignore"):
            combined = scan.combine_fn.fn(
                *(scan.to_tensor(data, dtype) for data, dtype in zip(earlier, dtypes, strict=True)),
                *(
                    scan.to_tensor(data.copy(), dtype)
                    for data, dtype in zip(accumulated, dtypes, strict=True)
                ),
            )
        results = combined if isinstance(combined, tuple) else (combined,)
        kept[axis] = slice(shift, length)
        for data, result in zip(accumulated, results, strict=True):
            values = np.broadcast_to(np.asarray(result.handle.data, dtype=data.dtype), data.shape)
            data[tuple(kept)] = values[tuple(kept)]
        shift *= 2
    return [scan.to_tensor(data, dtype) for data, dtype in zip(accumulated, dtypes, strict=True)]


def _skip_dead_overflow_checks(builder: Any) -> None:
    """The interpreter computes an overflow check for every 32-bit integer add, sub and mul (about a
    third of an interpreted kernel's time) and then drops it: its device_assert does nothing without
    debug, which the interpreter never sets. Turning the check off changes no result, as on the GPU."""
    if not builder.options.debug:
        builder.options = dataclasses.replace(builder.options, sanitize_overflow=False)


def use_interpreter_without_a_gpu() -> None:
    """Without a GPU a worker that runs a user's file (test block on CPU tensors) uses Triton's interpreter.
    Call before the file imports triton: TRITON_INTERPRET is read then."""
    import torch

    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"
        prepare_triton_interpreter()
