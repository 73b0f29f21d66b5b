"""The candidate worker's corrections to Triton's interpreter: bfloat16 tl.dot and the float32 ->
bfloat16 cast give what the GPU gives (Triton 3.6's interpreter multiplies bfloat16 bit patterns as
integers and truncates the cast). Run in a fresh interpreter-mode process, as a CPU candidate is."""

from __future__ import annotations

from conftest import run_on_the_interpreter

CHECK = r"""
import numpy as np
import torch
import triton
import triton.language as tl
from kforge.worker.interpreter import float32_to_bfloat16_bits, prepare_triton_interpreter

prepare_triton_interpreter()
prepare_triton_interpreter()  # a second call must not wrap the fix twice


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b).to(tl.bfloat16))


torch.manual_seed(0)
a = torch.randn(32, 64, dtype=torch.bfloat16)
b = torch.randn(64, 16, dtype=torch.bfloat16)
c = torch.full((32, 16), float("nan"), dtype=torch.bfloat16)
dot_kernel[(1,)](a, b, c, 32, 16, 64)
expected = (a.float() @ b.float()).to(torch.bfloat16)
assert torch.equal(c, expected), f"bfloat16 dot off by {(c.float() - expected.float()).abs().max()}"

x = torch.cat([
    torch.randn(200_000) * 1000,
    torch.tensor([float("inf"), -float("inf"), float("nan"), 3.3895314e38, 3.4e38, 0.0, -0.0, 1e-40]),
])
ours = torch.from_numpy(float32_to_bfloat16_bits(x.numpy()).view(np.int16))
theirs = x.to(torch.bfloat16).view(torch.int16)
both_nan = torch.isnan(ours.view(torch.bfloat16)) & torch.isnan(theirs.view(torch.bfloat16))
assert bool(((ours == theirs) | both_nan).all()), "float32 -> bfloat16 must round as torch does"
print("ok")
"""


def test_bfloat16_dot_and_cast_match_the_gpu_rules() -> None:
    run = run_on_the_interpreter(CHECK)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr
