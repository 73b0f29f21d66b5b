"""out[j] = sum_i x[i, j]: the sum over dim 0 of a 2-D float32 tensor of shape (M, N)
(spec: M = 16384, N = 4096; small M = 67, N = 101). Each program owns BLOCK_COLS_SIZE columns and walks
down the rows in tiles of BLOCK_ROWS_SIZE x BLOCK_COLS_SIZE, accumulating in a float32 tile that it
reduces over the row axis at the end.

Honest but untuned: small tiles (32 rows x 64 columns), num_warps=4, no autotune, and no split over
the rows, so only N / 64 programs run.

kforge eval --kernel problems/kernels/column_sum.py --entry column_sum \
    --inputs problems/kernels/column_sum.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_ROWS_SIZE = 32  # rows per tile of the row loop
BLOCK_COLS_SIZE = 64  # columns per program


@triton.jit
def column_sum_kernel(
    x_ptr, out_ptr, n_rows, n_cols, stride_row, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    cols = tl.program_id(0).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_cols
    rows = tl.arange(0, BLOCK_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_M):
        row_idx = (start + rows).to(tl.int64)
        mask = (row_idx < n_rows)[:, None] & col_mask[None, :]
        ptrs = x_ptr + row_idx[:, None] * stride_row + cols[None, :]
        acc += tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + cols, total.to(out_ptr.dtype.element_ty), mask=col_mask)


def column_sum(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty(n_cols, device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(n_cols, BLOCK_COLS_SIZE),)
    column_sum_kernel[grid](
        x, out, n_rows, n_cols, x.stride(0), BLOCK_M=BLOCK_ROWS_SIZE, BLOCK_N=BLOCK_COLS_SIZE, num_warps=4
    )
    return out


##################################################################################################################################################


def test_column_sum():
    results = {}
    x = torch.randn(1000, 300, device="cuda")
    results["test_case_1"] = column_sum(x)
    return results


result_gold = test_column_sum()
