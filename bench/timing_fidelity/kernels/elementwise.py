"""Elementwise: out = relu(alpha * x + y), then `iters` rounds of v = 0.999 v + 0.01 sin(v) per element.

iters = 0 is a plain memory-bound map; the larger iters make the same map compute-bound, so the
benchmark reaches ~100 ms without inputs of many gigabytes (which the judge would draw on the CPU).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def affine_relu_mix_kernel(x_ptr, y_ptr, out_ptr, alpha, iters, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.maximum(alpha * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), 0.0)
    for _ in range(iters):
        v = 0.999 * v + 0.01 * tl.sin(v)
    tl.store(out_ptr + offs, v, mask=mask)


def elementwise(x: torch.Tensor, y: torch.Tensor, alpha: float, iters: int) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    affine_relu_mix_kernel[(triton.cdiv(n, 1024),)](x, y, out, alpha, iters, n, BLOCK=1024, num_warps=4)
    return out
