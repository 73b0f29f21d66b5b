"""Honest transpose on a 1-D grid: the program id is split into (tile_row, tile_col) in the
kernel, and @triton.heuristics drops the masks when both dimensions are multiples of the tile."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({
    "EVEN": lambda args: args["n_rows"] % args["TILE"] == 0 and args["n_cols"] % args["TILE"] == 0,
})
@triton.jit
def transpose_1d_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_x, stride_out, TILE: tl.constexpr,
                        EVEN: tl.constexpr):
    pid = tl.program_id(0)
    tiles_c = tl.cdiv(n_cols, TILE)
    tr = pid // tiles_c
    tc = pid % tiles_c
    r = tr * TILE + tl.arange(0, TILE)
    c = tc * TILE + tl.arange(0, TILE)
    src = x_ptr + r[:, None].to(tl.int64) * stride_x + c[None, :]
    dst = out_ptr + c[:, None].to(tl.int64) * stride_out + r[None, :]
    if EVEN:
        tl.store(dst, tl.trans(tl.load(src)))
    else:
        mask = (r[:, None] < n_rows) & (c[None, :] < n_cols)
        tl.store(dst, tl.trans(tl.load(src, mask=mask)), mask=tl.trans(mask))


class ModelNew(nn.Module):
    TILE = 32

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.stride(1) != 1:
            x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty((cols, rows), dtype=x.dtype, device=x.device)
        n_tiles = triton.cdiv(rows, self.TILE) * triton.cdiv(cols, self.TILE)
        transpose_1d_kernel[(n_tiles,)](x, out, rows, cols, x.stride(0), out.stride(0), TILE=self.TILE, num_warps=4)
        return out
