"""out = gelu(x) with the tanh approximation, 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))),
elementwise over a float16 tensor of N elements (spec: N = 16777216; small N = 1001). The math runs in
float32 inside the kernel and is stored back as float16; tanh is written with exp so the interpreter
and the GPU take the same path.

Honest but untuned: one small block of BLOCK_SIZE = 128 elements per program, num_warps=4, no autotune.

kforge eval --kernel problems/kernels/gelu_tanh.py --entry gelu_tanh \
    --inputs problems/kernels/gelu_tanh.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 128  # elements per program


@triton.jit
def gelu_tanh_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tanh_inner = 1.0 - 2.0 / (tl.exp(2.0 * inner) + 1.0)
    out = 0.5 * x * (1.0 + tanh_inner)
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    gelu_tanh_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, out, n, BLOCK=BLOCK_SIZE, num_warps=4)
    return out


##################################################################################################################################################


def test_gelu_tanh():
    results = {}
    x = torch.randn(4096, device="cuda", dtype=torch.float16)
    results["test_case_1"] = gelu_tanh(x)
    x = torch.randn(3, 1000, device="cuda", dtype=torch.float16)
    results["test_case_2"] = gelu_tanh(x)
    return results


result_gold = test_gelu_tanh()
