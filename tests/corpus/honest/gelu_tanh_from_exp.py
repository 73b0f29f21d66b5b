"""Honest GELU that evaluates the reference formula literally, with tanh built from exp:
tanh(u) = 1 - 2 / (exp(2u) + 1), with u clamped to +-15 so exp never overflows (tanh is
+-1 to float32 precision there). Then 0.5 * x * (1 + tanh(u))."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _tanh(u):
    u = tl.minimum(tl.maximum(u, -15.0), 15.0)
    return 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + _tanh(u)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.contiguous().view(-1)
        out = torch.empty_like(flat)
        n = flat.numel()
        block = 4096 if n >= (1 << 20) else 512
        gelu_kernel[(triton.cdiv(n, block),)](flat, out, n, BLOCK=block, num_warps=8 if block > 1024 else 4)
        return out.view(x.shape)
