"""out[i] = max_j x[i, j]: the maximum over the last dim of a 2-D float32 tensor of shape (M, N)
(spec: M = 8192, N = 8192; small M = 37, N = 333). One program per row walks the row in chunks of
BLOCK_SIZE columns, keeping an elementwise running max, and reduces it at the end.

Honest but untuned: a small chunk of BLOCK_SIZE = 128 columns, num_warps=4, no autotune, one row per
program however short the rows are.

kforge eval --kernel problems/kernels/row_max.py --entry row_max --inputs problems/kernels/row_max.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 128  # columns per chunk of the row loop


@triton.jit
def row_max_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    row_ptr = x_ptr + row * stride_row
    cols = tl.arange(0, BLOCK)
    acc = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(row_ptr + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        acc = tl.maximum(acc, x)
    tl.store(out_ptr + row, tl.max(acc, axis=0).to(out_ptr.dtype.element_ty))


def row_max(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty(n_rows, device=x.device, dtype=x.dtype)
    row_max_kernel[(n_rows,)](x, out, n_cols, x.stride(0), BLOCK=BLOCK_SIZE, num_warps=4)
    return out


##################################################################################################################################################


def test_row_max():
    results = {}
    x = torch.randn(128, 1000, device="cuda")
    results["test_case_1"] = row_max(x)
    x = torch.randn(3, 5, device="cuda")
    results["test_case_2"] = row_max(x)
    return results


result_gold = test_row_max()
