"""Honest RMSNorm with functools.lru_cache'd launch metadata.

Two memoised helpers return integers only: the number of SMs of a device (a small constant on the
CPU interpreter) and the block size for a row length. The normalisation itself runs in the kernel
on every call.
"""

import functools

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, n_rows, n_cols, eps, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        base = row * n_cols
        sq = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            idx = start + cols
            v = tl.load(x_ptr + base + idx, mask=idx < n_cols, other=0.0)
            sq += v * v
        rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK):
            idx = start + cols
            mask = idx < n_cols
            v = tl.load(x_ptr + base + idx, mask=mask, other=0.0)
            w = tl.load(w_ptr + idx, mask=mask, other=0.0)
            tl.store(out_ptr + base + idx, v * rstd * w, mask=mask)


@functools.lru_cache(maxsize=None)
def _num_sms(device_index: int, is_cuda: bool) -> int:
    if not is_cuda:
        return 4
    return torch.cuda.get_device_properties(device_index).multi_processor_count


@functools.lru_cache(maxsize=64)
def _block_for(n_cols: int) -> int:
    return max(16, min(triton.next_power_of_2(n_cols), 2048))


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_cols = x.shape[-1]
        rows = x.numel() // n_cols
        sms = _num_sms(x.device.index or 0, x.is_cuda)
        out = torch.empty_like(x)
        grid = (max(1, min(rows, 4 * sms)),)
        rmsnorm_kernel[grid](x, self.weight, out, rows, n_cols, self.eps, BLOCK=_block_for(n_cols))
        return out
