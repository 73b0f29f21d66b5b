"""y = x / sqrt(mean(x^2) + eps) * weight: the RMSNorm forward over the last dim of a 2-D bfloat16
tensor of shape (M, N) with a bfloat16 weight of shape (N,) (spec: M = 16384, N = 4096; small M = 21,
N = 299; eps = 1e-6). One program per row walks the row in chunks of BLOCK_SIZE columns twice: the
mean of squares, then the scaled output. Statistics in float32, output in bfloat16.

Honest but untuned: a small chunk of BLOCK_SIZE = 128 columns, num_warps=4, no autotune, the row read
twice rather than held in registers.

kforge eval --kernel problems/kernels/rmsnorm_fwd.py --entry rmsnorm_fwd \
    --inputs problems/kernels/rmsnorm_fwd.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 128  # columns per chunk of the row loops


@triton.jit
def rmsnorm_fwd_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + start + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def rmsnorm_fwd(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    x = x.contiguous()
    weight = weight.contiguous()
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    rmsnorm_fwd_kernel[(n_rows,)](
        x, weight, y, n_cols, x.stride(0), y.stride(0), eps, BLOCK=BLOCK_SIZE, num_warps=4
    )
    return y


##################################################################################################################################################


def test_rmsnorm_fwd():
    results = {}
    x = torch.randn(64, 1000, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(1000, device="cuda", dtype=torch.bfloat16)
    results["test_case_1"] = rmsnorm_fwd(x, w, 1e-6)
    return results


result_gold = test_rmsnorm_fwd()
