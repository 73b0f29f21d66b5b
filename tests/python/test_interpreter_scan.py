"""The candidate worker's log-step tl.associative_scan on Triton's interpreter: the same results as the
element-by-element scan it replaces, for an add, a non-commutative pair combine (a linear recurrence)
and integers, along either axis, with masked (padded) elements. Run in a fresh interpreter-mode
process, as a CPU candidate is."""

from __future__ import annotations

from conftest import run_on_the_interpreter

CHECK = r"""
import torch
import triton
import triton.language as tl
from triton.runtime import interpreter
from kforge.worker import interpreter as kforge_interpreter
from kforge.worker.interpreter import prepare_triton_interpreter

log_steps = {"done": 0}
log_step_scan = kforge_interpreter._log_step_scan


def counted(*args):
    result = log_step_scan(*args)  # raising here would fall back to the element-by-element scan
    log_steps["done"] += 1
    return result


kforge_interpreter._log_step_scan = counted
sequential = interpreter.ScanOps.generic_scan
prepare_triton_interpreter()
prepare_triton_interpreter()  # a second call must not wrap the scan twice
assert interpreter.ScanOps.generic_scan is not sequential


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _recurrence(a1, b1, a2, b2):  # x[i] = a[i] * x[i-1] + b[i]: associative, not commutative
    return a1 * a2, b1 * a2 + b2


@triton.jit
def add_scan(x_ptr, out_ptr, n, AXIS: tl.constexpr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    mask = c < n
    x = tl.load(x_ptr + r * C + c, mask=mask, other=0)
    tl.store(out_ptr + r * C + c, tl.associative_scan(x, AXIS, _add), mask=mask)


@triton.jit
def recurrence_scan(a_ptr, b_ptr, out_ptr, C: tl.constexpr):
    c = tl.arange(0, C)
    _, x = tl.associative_scan((tl.load(a_ptr + c), tl.load(b_ptr + c)), 0, _recurrence)
    tl.store(out_ptr + c, x)


def both(run):
    # the same kernel with the patched scan and with the original one
    before = log_steps["done"]
    fast = run()
    assert log_steps["done"] > before, "the log-step scan fell back to the element-by-element one"
    patched = interpreter.ScanOps.generic_scan
    interpreter.ScanOps.generic_scan = sequential
    try:
        slow = run()
    finally:
        interpreter.ScanOps.generic_scan = patched
    return fast, slow


torch.manual_seed(0)
for dtype in (torch.float32, torch.int32):
    x = (torch.rand(4, 64) * 8).to(dtype)
    for axis in (0, 1):
        def run():
            out = torch.zeros_like(x)
            add_scan[(1,)](x, out, 50, axis, 4, 64)
            return out
        fast, slow = both(run)
        assert torch.allclose(fast.double(), slow.double(), rtol=1e-6, atol=1e-4), (dtype, axis)
        expected = torch.where(torch.arange(64) < 50, x, torch.zeros_like(x)).double().cumsum(axis)
        mask = torch.arange(64) < 50
        assert torch.allclose(fast.double()[:, mask], expected[:, mask], rtol=1e-6, atol=1e-4), (dtype, axis)

a, b = torch.rand(128) * 0.5 + 0.5, torch.randn(128)
def run():
    out = torch.zeros(128)
    recurrence_scan[(1,)](a, b, out, 128)
    return out
fast, slow = both(run)
expected, value = [], 0.0
for ai, bi in zip(a.double().tolist(), b.double().tolist()):
    value = ai * value + bi
    expected.append(value)
assert torch.allclose(fast, slow, rtol=1e-5, atol=1e-5)
assert torch.allclose(fast.double(), torch.tensor(expected, dtype=torch.float64), rtol=1e-4, atol=1e-4)
print("ok")
"""


def test_the_log_step_scan_gives_what_the_element_by_element_scan_gives() -> None:
    run = run_on_the_interpreter(CHECK)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr
