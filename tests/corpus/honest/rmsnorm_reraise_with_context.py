"""Honest RMSNorm whose launch is wrapped in try/except that *re-raises* with the shape and
block in the message (no fallback: a failed kernel still fails the call)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, n_cols, stride_x, stride_out, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        v = tl.load(x_ptr + row * stride_x + idx, mask=idx < n_cols, other=0.0).to(tl.float32)
        acc += v * v
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        v = tl.load(x_ptr + row * stride_x + idx, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0)
        tl.store(out_ptr + row * stride_out + idx, v * rstd * w, mask=mask)


class ModelNew(nn.Module):
    MAX_BLOCK = 2048

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        x2 = x.reshape(-1, dim).contiguous()
        out = torch.empty_like(x2)
        block = min(triton.next_power_of_2(dim), self.MAX_BLOCK)
        try:
            rmsnorm_kernel[(x2.shape[0],)](x2, self.weight, out, dim, x2.stride(0), out.stride(0), self.eps,
                                           BLOCK=block, num_warps=8)
        except Exception as err:
            raise RuntimeError(f"rmsnorm kernel failed for input {tuple(x.shape)} with BLOCK={block}") from err
        return out.view(x.shape)
