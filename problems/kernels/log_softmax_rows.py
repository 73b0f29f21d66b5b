"""out[i, :] = log_softmax(x[i, :]) = x - max - log(sum(exp(x - max))) over the last dim of a 2-D
float32 tensor of shape (M, N) (spec: M = 16384, N = 4096; small M = 21, N = 299). One program per row
makes two passes over the row in chunks of BLOCK_SIZE columns: an online max and rescaled sum of
exponentials, then the write of x - max - log(sum).

Honest but untuned: a small chunk of BLOCK_SIZE = 128 columns, num_warps=4, no autotune, the row read
twice rather than held in registers.

kforge eval --kernel problems/kernels/log_softmax_rows.py --entry log_softmax_rows \
    --inputs problems/kernels/log_softmax_rows.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 128  # columns per chunk of the row loops


@triton.jit
def log_softmax_rows_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    cols = tl.arange(0, BLOCK)
    m = float("-inf")
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    shift = m + tl.log(s)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + start + cols, (x - shift).to(out_ptr.dtype.element_ty), mask=mask)


def log_softmax_rows(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    log_softmax_rows_kernel[(n_rows,)](
        x, out, n_cols, x.stride(0), out.stride(0), BLOCK=BLOCK_SIZE, num_warps=4
    )
    return out


##################################################################################################################################################


def test_log_softmax_rows():
    results = {}
    x = torch.randn(64, 1000, device="cuda")
    results["test_case_1"] = log_softmax_rows(x)
    return results


result_gold = test_log_softmax_rows()
