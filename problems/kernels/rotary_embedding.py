"""Rotary position embedding (RoPE, rotate-half form) of x [tokens, heads, head_dim].

cos and sin are [tokens, head_dim / 2] float32 tables; with x1 = x[..., :D/2] and x2 = x[..., D/2:],
out[..., :D/2] = x1 * cos - x2 * sin and out[..., D/2:] = x2 * cos + x1 * sin, computed in float32 and
stored in x's dtype (float16 in the spec). The spec's GPU sizes are 8192 tokens x 32 heads x 128
(64 MiB in, 64 MiB out). x is viewed as [tokens * heads, head_dim] rows; each program rotates
BLOCK_ROWS rows, the half dimension padded to a power of two and masked. Honest but untuned: 16 rows
per program, num_warps=4, no autotune; any number of rows and any even head_dim is correct.

kforge eval --kernel problems/kernels/rotary_embedding.py --entry rotary_embedding \
    --inputs problems/kernels/rotary_embedding.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_ROWS = 16  # (token, head) rows per program


@triton.jit
def rotary_kernel(
    x_ptr,
    cos_ptr,
    sin_ptr,
    out_ptr,
    rows,
    heads,
    half,
    stride_x_row,
    stride_cos_token,
    stride_sin_token,
    stride_out_row,
    HALF: tl.constexpr,
    BLOCK_ROWS: tl.constexpr,
):
    offs_r = tl.program_id(0).to(tl.int64) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    offs_c = tl.arange(0, HALF)
    mask = (offs_r < rows)[:, None] & (offs_c < half)[None, :]
    token = offs_r // heads

    x_row = x_ptr + offs_r[:, None] * stride_x_row + offs_c[None, :]
    x1 = tl.load(x_row, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_row + half, mask=mask, other=0.0).to(tl.float32)
    cos = tl.load(cos_ptr + token[:, None] * stride_cos_token + offs_c[None, :], mask=mask, other=0.0)
    sin = tl.load(sin_ptr + token[:, None] * stride_sin_token + offs_c[None, :], mask=mask, other=0.0)
    cos = cos.to(tl.float32)
    sin = sin.to(tl.float32)

    out_row = out_ptr + offs_r[:, None] * stride_out_row + offs_c[None, :]
    tl.store(out_row, (x1 * cos - x2 * sin).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(out_row + half, (x2 * cos + x1 * sin).to(out_ptr.dtype.element_ty), mask=mask)


def rotary_embedding(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    tokens, heads, head_dim = x.shape
    half = head_dim // 2
    x = x.contiguous()
    cos = cos.contiguous()
    sin = sin.contiguous()
    out = torch.empty_like(x)
    rows = tokens * heads
    x_rows = x.view(rows, head_dim)
    out_rows = out.view(rows, head_dim)
    grid = (triton.cdiv(rows, BLOCK_ROWS),)
    rotary_kernel[grid](
        x_rows,
        cos,
        sin,
        out_rows,
        rows,
        heads,
        half,
        x_rows.stride(0),
        cos.stride(0),
        sin.stride(0),
        out_rows.stride(0),
        HALF=triton.next_power_of_2(half),
        BLOCK_ROWS=BLOCK_ROWS,
        num_warps=4,
    )
    return out


##################################################################################################################################################


def test_rotary_embedding():
    results = {}
    x = torch.randn(256, 8, 64, device="cuda", dtype=torch.float16)
    cos = torch.randn(256, 32, device="cuda", dtype=torch.float32)
    sin = torch.randn(256, 32, device="cuda", dtype=torch.float32)
    results["test_case_1"] = rotary_embedding(x, cos, sin)
    x = torch.randn(37, 5, 24, device="cuda", dtype=torch.float16)
    cos = torch.randn(37, 12, device="cuda", dtype=torch.float32)
    sin = torch.randn(37, 12, device="cuda", dtype=torch.float32)
    results["test_case_2"] = rotary_embedding(x, cos, sin)
    return results


result_gold = test_rotary_embedding()
