"""out[i, :] = softmax(x[i, :]): a numerically stable softmax over the last dim of a 2-D float16
tensor of shape (M, N) (spec: M = 8192, N = 8192; small M = 19, N = 333). One program per row makes
two passes over the row in chunks of BLOCK_SIZE columns: the first keeps an online running max and a
rescaled running sum of exponentials, the second writes exp(x - max) / sum. Math in float32, output in
float16.

Honest but untuned: a small chunk of BLOCK_SIZE = 128 columns, num_warps=4, no autotune, the row read
twice rather than held in registers.

kforge eval --kernel problems/kernels/softmax_rows.py --entry softmax_rows \
    --inputs problems/kernels/softmax_rows.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 128  # columns per chunk of the row loops


@triton.jit
def softmax_rows_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    cols = tl.arange(0, BLOCK)
    # pass 1: running max m and running sum s of exp(x - m), rescaled whenever m grows
    m = float("-inf")
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    inv_s = 1.0 / s
    # pass 2: normalized exponentials
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - m) * inv_s
        tl.store(out_row + start + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    softmax_rows_kernel[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=BLOCK_SIZE, num_warps=4)
    return out


##################################################################################################################################################


def test_softmax_rows():
    results = {}
    x = torch.randn(64, 1000, device="cuda", dtype=torch.float16)
    results["test_case_1"] = softmax_rows(x)
    x = torch.randn(4, 7, device="cuda", dtype=torch.float16) * 10
    results["test_case_2"] = softmax_rows(x)
    return results


result_gold = test_softmax_rows()
