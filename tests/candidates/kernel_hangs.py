"""Candidate for starter/01_scaled_add: the Triton kernel itself spins on a flag that never changes.

On a GPU this is a kernel that never finishes (only killing the process recovers the device).
Under TRITON_INTERPRET=1 it is an endless Python loop inside the interpreted kernel.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, flag_ptr, n_elements, alpha, BLOCK: tl.constexpr):
    # "Wait until the producer has published the data": nobody ever writes the flag.
    # volatile: re-read every iteration, so the compiler can neither hoist the load nor drop the loop.
    while tl.load(flag_ptr, volatile=True) == 0:
        pass
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
        flag = torch.empty(1, dtype=torch.int32, device=x.device)
        flag.fill_(0)
        n = x.numel()
        scaled_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, flag, n, self.alpha, BLOCK=1024)
        return out
