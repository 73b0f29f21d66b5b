"""Segment sums along rows: out[i, g] = sum of x[i, g*SEG : (g+1)*SEG], float32 accumulation.

x is [ROWS, COLS] float32 and SEG a Python int; out is [ROWS, cdiv(COLS, SEG)] in x's dtype (when
COLS is not a multiple of SEG the last segment sums the columns that remain). The spec's GPU sizes
are 8192 x 8192 with SEG = 8 (256 MiB read, 32 MiB written). A 2-D grid of BLOCK_R rows x BLOCK_G
segments; each program adds its SEG columns one at a time (a runtime loop, so SEG need not be a
power of two). Honest but untuned: 16 x 32 blocks, num_warps=4, no autotune, strided loads; row,
segment and column tails are masked, so any size is correct.

kforge eval --kernel problems/kernels/segment_sum_rows.py --entry segment_sum_rows \
    --inputs problems/kernels/segment_sum_rows.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_R = 16  # rows per program
BLOCK_G = 32  # segments (output columns) per program


@triton.jit
def segment_sum_kernel(
    x_ptr,
    out_ptr,
    rows,
    cols,
    groups,
    seg,
    stride_xr,
    stride_xc,
    stride_or,
    stride_og,
    BLOCK_R: tl.constexpr,
    BLOCK_G: tl.constexpr,
):
    pid_r = tl.program_id(0)
    pid_g = tl.program_id(1)
    offs_r = pid_r.to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_g = pid_g.to(tl.int64) * BLOCK_G + tl.arange(0, BLOCK_G)
    mask_r = offs_r < rows
    mask_g = offs_g < groups
    first_col = offs_g * seg
    x_rows = x_ptr + offs_r[:, None] * stride_xr

    acc = tl.zeros((BLOCK_R, BLOCK_G), dtype=tl.float32)
    for j in range(0, seg):
        col = first_col + j
        mask = mask_r[:, None] & (mask_g & (col < cols))[None, :]
        x = tl.load(x_rows + col[None, :] * stride_xc, mask=mask, other=0.0)
        acc += x.to(tl.float32)

    tl.store(
        out_ptr + offs_r[:, None] * stride_or + offs_g[None, :] * stride_og,
        acc.to(out_ptr.dtype.element_ty),
        mask=mask_r[:, None] & mask_g[None, :],
    )


def segment_sum_rows(x: torch.Tensor, seg: int) -> torch.Tensor:
    rows, cols = x.shape
    groups = triton.cdiv(cols, seg)
    out = torch.empty((rows, groups), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(rows, BLOCK_R), triton.cdiv(groups, BLOCK_G))
    segment_sum_kernel[grid](
        x,
        out,
        rows,
        cols,
        groups,
        seg,
        x.stride(0),
        x.stride(1),
        out.stride(0),
        out.stride(1),
        BLOCK_R=BLOCK_R,
        BLOCK_G=BLOCK_G,
        num_warps=4,
    )
    return out


##################################################################################################################################################


def test_segment_sum_rows():
    results = {}
    x = torch.randn(512, 1024, device="cuda", dtype=torch.float32)
    results["test_case_1"] = segment_sum_rows(x, 8)
    x = torch.randn(37, 150, device="cuda", dtype=torch.float32)
    results["test_case_2"] = segment_sum_rows(x, 7)
    return results


result_gold = test_segment_sum_rows()
