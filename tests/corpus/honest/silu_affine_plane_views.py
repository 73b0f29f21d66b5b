"""Honest SiLU + channel affine (the reference: x * torch.sigmoid(x) * scale.view(1,-1,1,1) +
shift.view(1,-1,1,1)). The input is viewed as (B*C, H*W) planes; each program handles one block
of one plane and loads its channel's scale and shift once. The block size is a constexpr
computed in Python from the plane size."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def plane_kernel(x_ptr, scale_ptr, shift_ptr, out_ptr, n_channels, plane_size, stride_plane,
                 BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    c = plane % n_channels
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < plane_size
    base = plane.to(tl.int64) * stride_plane
    x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
    y = x * tl.sigmoid(x) * tl.load(scale_ptr + c) + tl.load(shift_ptr + c)
    tl.store(out_ptr + base + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.scale = nn.Parameter(1.0 + 0.5 * torch.randn(channels))
        self.shift = nn.Parameter(0.5 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        planes = x.contiguous().view(b * c, h * w)
        out = torch.empty_like(planes)
        block = min(2048, triton.next_power_of_2(h * w))
        grid = (b * c, triton.cdiv(h * w, block))
        plane_kernel[grid](planes, self.scale, self.shift, out, c, h * w, planes.stride(0), BLOCK=block)
        return out.view(b, c, h, w)
