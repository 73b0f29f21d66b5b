"""Reference Triton solution for starter/30_bias_add_tanh_scale.

2-D grid: axis 0 walks the (batch, channel) planes, axis 1 the blocks of one H*W plane,
so each program loads its channel's bias and scale once, as scalars. Triton has no tanh
in its core language, so the kernel uses tanh(u) = sign(u) * (1 - e) / (1 + e) with
e = exp(-2|u|) in (0, 1]: no overflow for large |u|, and the absolute error near 0 stays
around float32 epsilon.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_tanh_scale_kernel(x_ptr, bias_ptr, scale_ptr, out_ptr, n_channels, plane_size,
                           stride_xb, stride_xc, stride_ob, stride_oc, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    b = plane // n_channels
    c = plane % n_channels
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < plane_size
    x_base = x_ptr + b.to(tl.int64) * stride_xb + c.to(tl.int64) * stride_xc
    o_base = out_ptr + b.to(tl.int64) * stride_ob + c.to(tl.int64) * stride_oc
    bias = tl.load(bias_ptr + c).to(tl.float32)
    scale = tl.load(scale_ptr + c).to(tl.float32)
    u = tl.load(x_base + offs, mask=mask, other=0.0).to(tl.float32) + bias
    e = tl.exp(-2.0 * tl.abs(u))
    t = (1.0 - e) / (1.0 + e)
    t = tl.where(u < 0.0, -t, t)
    tl.store(o_base + offs, t * scale, mask=mask)


class ModelNew(nn.Module):
    MAX_BLOCK = 4096

    def __init__(self, channels: int) -> None:
        super().__init__()
        # Same RNG draws, same order as Model.
        self.bias = nn.Parameter(0.5 * torch.randn(channels))
        self.scale = nn.Parameter(1.0 + 0.5 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()  # each (b, c) plane must be dense
        batch, channels, height, width = x.shape
        plane_size = height * width
        out = torch.empty_like(x)
        block = min(triton.next_power_of_2(plane_size), self.MAX_BLOCK)
        grid = (batch * channels, triton.cdiv(plane_size, block))
        bias_tanh_scale_kernel[grid](
            x, self.bias, self.scale, out, channels, plane_size,
            x.stride(0), x.stride(1), out.stride(0), out.stride(1),
            BLOCK=block, num_warps=8,
        )
        return out
