"""out = relu(x + alpha * y): an elementwise Triton kernel and its wrapper, in the style of a
TritonBench-G file (a test block after a line of '#'). Honest but untuned: one small block per program.

kforge eval --kernel problems/kernels/scaled_add_relu.py --entry scaled_add_relu \
    --inputs problems/kernels/scaled_add_relu.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 128  # elements per program

@triton.jit
def scaled_add_relu_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.maximum(x + alpha * y, 0.0), mask=mask)


def scaled_add_relu(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    scaled_add_relu_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, alpha, n, BLOCK=BLOCK_SIZE, num_warps=4)
    return out


##################################################################################################################################################


def test_scaled_add_relu():
    results = {}
    x = torch.randn(4096, device="cuda")
    y = torch.randn(4096, device="cuda")
    results["test_case_1"] = scaled_add_relu(x, y, 0.5)
    return results


result_gold = test_scaled_add_relu()
