"""out[i, j] = sum_{k <= j} x[i, k]: the inclusive prefix sum along the last dim of a 2-D float32
tensor of shape (M, N) (spec: M = 16384, N = 4096; small M = 37, N = 333). One program per row walks
the row in chunks of BLOCK_SIZE columns: each chunk is scanned with tl.cumsum and offset by the carry,
the running total of all earlier chunks.

Honest but untuned: a small chunk of BLOCK_SIZE = 128 columns, num_warps=4, no autotune, one row per
program and the chunks scanned strictly one after another.

kforge eval --kernel problems/kernels/cumsum_rows.py --entry cumsum_rows \
    --inputs problems/kernels/cumsum_rows.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 128  # columns per chunk of the row scan


@triton.jit
def cumsum_rows_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    out_row = out_ptr + row * stride_out
    cols = tl.arange(0, BLOCK)
    carry = 0.0
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        scanned = tl.cumsum(x, axis=0) + carry
        tl.store(out_row + start + cols, scanned.to(out_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


def cumsum_rows(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    cumsum_rows_kernel[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=BLOCK_SIZE, num_warps=4)
    return out


##################################################################################################################################################


def test_cumsum_rows():
    results = {}
    x = torch.randn(64, 1000, device="cuda")
    results["test_case_1"] = cumsum_rows(x)
    x = torch.ones(2, 300, device="cuda")
    results["test_case_2"] = cumsum_rows(x)
    return results


result_gold = test_cumsum_rows()
