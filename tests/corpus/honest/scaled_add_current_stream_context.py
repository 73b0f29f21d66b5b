"""Honest scaled add launched inside `torch.cuda.stream(torch.cuda.current_stream(dev))`.

The stream context names the stream that is already current, so it changes nothing: the kernel
runs where kforge's timing events are recorded. (Code generators and wrappers emit this pattern.)
On the CPU interpreter the context gets None and does nothing.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha: float) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        current = torch.cuda.current_stream(x.device) if x.is_cuda else None
        with torch.cuda.stream(current):
            scaled_add_kernel[(triton.cdiv(n, 2048),)](x, y, out, n, self.alpha, BLOCK=2048)
        return out
