"""Reference Triton solution for starter/27_rmsnorm_residual_fp16.

One program per row, two passes. h = x + residual is rounded to float16 (the reference's
residual stream is float16) and then widened, so both see the same h; the sum of squares,
the rsqrt and the weight product are float32, and the output is rounded to float16 once.
h is recomputed in the second pass instead of being written out.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def residual_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, out_ptr, n_cols, stride_x_row, stride_r_row,
                            stride_out_row, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x_row
    r_row = r_ptr + row * stride_r_row
    out_row = out_ptr + row * stride_out_row
    cols = tl.arange(0, BLOCK)

    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + idx, mask=mask, other=0.0).to(tl.float32)
        h = (x + r).to(x_ptr.dtype.element_ty).to(tl.float32)
        acc += h * h
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)

    for start in range(0, n_cols, BLOCK):
        idx = start + cols
        mask = idx < n_cols
        x = tl.load(x_row + idx, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + idx, mask=mask, other=0.0).to(tl.float32)
        h = (x + r).to(x_ptr.dtype.element_ty).to(tl.float32)
        w = tl.load(w_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + idx, (h * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    MAX_BLOCK = 4096

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(dim)).to(torch.float16))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        dim = x.shape[-1]
        x2 = x.reshape(-1, dim)
        r2 = residual.reshape(-1, dim)
        if x2.stride(-1) != 1:
            x2 = x2.contiguous()
        if r2.stride(-1) != 1:
            r2 = r2.contiguous()
        rows = x2.shape[0]
        out = torch.empty((rows, dim), dtype=x.dtype, device=x.device)
        block = min(triton.next_power_of_2(dim), self.MAX_BLOCK)
        residual_rmsnorm_kernel[(rows,)](
            x2, r2, self.weight, out, dim,
            x2.stride(0), r2.stride(0), out.stride(0), self.eps,
            BLOCK=block, num_warps=8,
        )
        return out.reshape(x.shape)
