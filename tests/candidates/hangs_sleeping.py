"""Candidate for starter/01_scaled_add: launches the kernel, then waits in sleeps for a flag nobody sets.

The same hang as hangs.py without its busy loop: tests that only need a call that never returns use this
one, so the hang does not take a core from the tests running beside it."""

import time

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
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
        scaled_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, self.alpha, BLOCK=1024)
        # "Wait for the device to signal completion": the flag is never written, so this never ends.
        done = torch.zeros(1, dtype=torch.int32)
        while int(done[0]) == 0:
            time.sleep(0.5)
        return out
