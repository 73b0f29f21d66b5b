"""Honest SiLU + per-channel affine on a flat 1-D grid: the channel of each element is
(offset // (H*W)) % C, computed in the kernel; scale/shift are gathered per element."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def silu_affine_flat_kernel(x_ptr, scale_ptr, shift_ptr, out_ptr, n, plane, n_channels, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    c = (offs // plane) % n_channels
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    scale = tl.load(scale_ptr + c, mask=mask, other=0.0)
    shift = tl.load(shift_ptr + c, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x * tl.sigmoid(x) * scale + shift, mask=mask)


class ModelNew(nn.Module):
    BLOCK = 1024

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.scale = nn.Parameter(1.0 + 0.5 * torch.randn(channels))
        self.shift = nn.Parameter(0.5 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 4 and x.shape[1] == self.scale.numel(), "expected NCHW with matching channels"
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        plane = x.shape[2] * x.shape[3]
        silu_affine_flat_kernel[(triton.cdiv(n, self.BLOCK),)](x, self.scale, self.shift, out, n, plane, x.shape[1],
                                                               BLOCK=self.BLOCK, num_warps=4)
        return out
