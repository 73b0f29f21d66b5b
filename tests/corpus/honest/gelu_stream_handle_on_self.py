"""Honest tanh-GELU that keeps the current stream handle on self.

The handle (of the stream forward is called on) is looked up on the first call and kept, then
used to enter a stream context around the launch: the context switches to the stream that is
already current, so the work stays where kforge's timing sees it. On the CPU interpreter there is
no stream and the context is `torch.cuda.stream(None)`, which does nothing.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_tanh_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    # tanh(u) = 2 / (1 + exp(-2u)) - 1, so 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)).
    tl.store(out_ptr + offs, x / (1.0 + tl.exp(-2.0 * u)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stream = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.stream is None and x.is_cuda:
            self.stream = torch.cuda.current_stream(x.device)
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        with torch.cuda.stream(self.stream):
            gelu_tanh_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        return out
