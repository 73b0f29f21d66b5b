"""Honest RMSNorm whose Triton kernel is defined inside the ModelNew class body and launched as
self._rmsnorm[grid](...), a staticmethod-like attribute (JITFunction is not a descriptor, so
attribute access returns the kernel itself)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


class ModelNew(nn.Module):
    @triton.jit
    def _rmsnorm(x_ptr, w_ptr, out_ptr, n_cols, stride_row, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            idx = start + cols
            v = tl.load(x_ptr + row * stride_row + idx, mask=idx < n_cols, other=0.0)
            acc += v * v
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK):
            idx = start + cols
            mask = idx < n_cols
            v = tl.load(x_ptr + row * stride_row + idx, mask=mask, other=0.0)
            w = tl.load(w_ptr + idx, mask=mask, other=0.0)
            tl.store(out_ptr + row * stride_row + idx, v * rstd * w, mask=mask)

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        x2 = x.reshape(-1, dim).contiguous()
        out = torch.empty_like(x2)
        self._rmsnorm[(x2.shape[0],)](x2, self.weight, out, dim, x2.stride(0), self.eps,
                                      BLOCK=min(1024, triton.next_power_of_2(dim)), num_warps=4)
        return out.view(x.shape)
