"""out = silu(a) * b = a * sigmoid(a) * b: the SwiGLU gate, elementwise over two bfloat16 tensors of
shape (T, H) (spec: T = 4096, H = 4096, 16M elements each; small T = 37, H = 67). The product is
formed in float32 inside the kernel and stored as bfloat16; the tensors are treated as flat arrays.

Honest but untuned: one small block of BLOCK_SIZE = 128 elements per program, num_warps=4, no autotune.

kforge eval --kernel problems/kernels/swiglu.py --entry swiglu --inputs problems/kernels/swiglu.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 128  # elements per program


@triton.jit
def swiglu_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    out = a / (1.0 + tl.exp(-a)) * b
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a = a.contiguous()
    b = b.contiguous()
    out = torch.empty_like(a)
    n = a.numel()
    swiglu_kernel[(triton.cdiv(n, BLOCK_SIZE),)](a, b, out, n, BLOCK=BLOCK_SIZE, num_warps=4)
    return out


##################################################################################################################################################


def test_swiglu():
    results = {}
    a = torch.randn(64, 1000, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(64, 1000, device="cuda", dtype=torch.bfloat16)
    results["test_case_1"] = swiglu(a, b)
    return results


result_gold = test_swiglu()
