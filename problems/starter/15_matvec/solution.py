"""Reference Triton solution for starter/15_matvec.

Each program owns BLOCK_M rows of A and walks K in BLOCK_K chunks, keeping a (BLOCK_M, BLOCK_K)
float32 tile of partial products; one tl.sum along K at the end gives the rows' dot products.
No tl.dot (float32 problem: TF32 would miss the 1e-4 tolerance), and a matrix-vector product
has nothing to reuse anyway: it is bound by reading A once.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, stride_am, stride_ak, stride_xk, stride_ym,
                  BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    a_rows = a_ptr + offs_m[:, None].to(tl.int64) * stride_am
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        idx = start + offs_k
        mask_k = idx < K
        a = tl.load(a_rows + idx[None, :] * stride_ak, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        x = tl.load(x_ptr + idx * stride_xk, mask=mask_k, other=0.0)
        acc += a.to(tl.float32) * x.to(tl.float32)[None, :]
    y = tl.sum(acc, axis=1)
    tl.store(y_ptr + offs_m * stride_ym, y, mask=mask_m)


class ModelNew(nn.Module):
    BLOCK_M = 8
    BLOCK_K = 512

    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        m, k = a.shape
        out = torch.empty((m, 1), dtype=a.dtype, device=a.device)
        grid = (triton.cdiv(m, self.BLOCK_M),)
        matvec_kernel[grid](
            a, x, out, m, k, a.stride(0), a.stride(1), x.stride(0), out.stride(0),
            BLOCK_M=self.BLOCK_M, BLOCK_K=self.BLOCK_K, num_warps=8,
        )
        return out
