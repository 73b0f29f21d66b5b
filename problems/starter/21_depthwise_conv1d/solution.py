"""Reference Triton solution for starter/21_depthwise_conv1d.

ModelNew builds the same nn.Conv1d as Model (so its weight and bias come from the same RNG calls)
and only reads conv.weight / conv.bias in the kernel. 2-D grid: axis 0 walks the (batch, channel)
rows, axis 1 the BLOCK-wide output blocks of a row. Each program loads its channel's KERNEL
taps as scalars and accumulates KERNEL shifted, masked loads of the input row (out-of-range
positions are the zero padding); the shifted loads overlap, so the input is read from DRAM
about once. Stride 1, dilation 1, as in the problem.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def depthwise_conv1d_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_channels, length, out_length,
                            stride_xb, stride_xc, stride_xl, stride_wc, stride_wk,
                            stride_ob, stride_oc, stride_ol,
                            KERNEL: tl.constexpr, PAD: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    b = row // n_channels
    c = row % n_channels
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x_row = x_ptr + b.to(tl.int64) * stride_xb + c.to(tl.int64) * stride_xc
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in tl.static_range(KERNEL):
        w = tl.load(w_ptr + c * stride_wc + k * stride_wk).to(tl.float32)
        pos = offs + (k - PAD)
        x = tl.load(x_row + pos * stride_xl, mask=(pos >= 0) & (pos < length), other=0.0).to(tl.float32)
        acc += x * w
    acc += tl.load(b_ptr + c).to(tl.float32)
    o_row = out_ptr + b.to(tl.int64) * stride_ob + c.to(tl.int64) * stride_oc
    tl.store(o_row + offs * stride_ol, acc, mask=offs < out_length)


class ModelNew(nn.Module):
    BLOCK = 1024

    def __init__(self, channels: int, kernel_size: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(
            channels, channels, kernel_size, padding=kernel_size // 2, groups=channels, bias=True
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.conv.weight  # (channels, 1, kernel_size)
        kernel_size = w.shape[2]
        pad = self.conv.padding[0]
        batch, channels, length = x.shape
        out_length = length + 2 * pad - kernel_size + 1
        out = torch.empty((batch, channels, out_length), dtype=x.dtype, device=x.device)
        grid = (batch * channels, triton.cdiv(out_length, self.BLOCK))
        depthwise_conv1d_kernel[grid](
            x, w, self.conv.bias, out, channels, length, out_length,
            x.stride(0), x.stride(1), x.stride(2), w.stride(0), w.stride(2),
            out.stride(0), out.stride(1), out.stride(2),
            KERNEL=kernel_size, PAD=pad, BLOCK=self.BLOCK, num_warps=4,
        )
        return out
