"""y = (x - mean) / sqrt(var + eps) * weight + bias: the LayerNorm forward over the last dim of a 2-D
float16 tensor of shape (M, N) with float16 weight and bias of shape (N,) (spec: M = 16384, N = 4096;
small M = 19, N = 333; eps = 1e-5). One program per row walks the row in chunks of BLOCK_SIZE columns
three times: the mean, then the biased variance around it, then the normalized, scaled and shifted
output. Statistics in float32, output in float16.

Honest but untuned: a small chunk of BLOCK_SIZE = 128 columns, num_warps=4, no autotune, the row read
three times rather than held in registers.

kforge eval --kernel problems/kernels/layernorm_fwd.py --entry layernorm_fwd \
    --inputs problems/kernels/layernorm_fwd.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 128  # columns per chunk of the row loops


@triton.jit
def layernorm_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        acc += tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_row + start + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def layernorm_fwd(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    x = x.contiguous()
    weight = weight.contiguous()
    bias = bias.contiguous()
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    layernorm_fwd_kernel[(n_rows,)](
        x, weight, bias, y, n_cols, x.stride(0), y.stride(0), eps, BLOCK=BLOCK_SIZE, num_warps=4
    )
    return y


##################################################################################################################################################


def test_layernorm_fwd():
    results = {}
    x = torch.randn(64, 1000, device="cuda", dtype=torch.float16)
    w = torch.randn(1000, device="cuda", dtype=torch.float16)
    b = torch.randn(1000, device="cuda", dtype=torch.float16)
    results["test_case_1"] = layernorm_fwd(x, w, b, 1e-5)
    return results


result_gold = test_layernorm_fwd()
