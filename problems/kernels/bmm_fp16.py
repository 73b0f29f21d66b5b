"""C[b] = A[b] @ B[b]: a batched float16 matmul with float32 accumulation.

A is [BATCH, M, K], B is [BATCH, K, N]; C is [BATCH, M, N] float16. The spec's GPU sizes are
32 x 1024 x 1024 x 1024. The grid is (tiles of one product, BATCH): axis 0 walks the output tiles in
row-major order, axis 1 is the batch. Honest but untuned: 32x32x32 tiles, num_warps=4, num_stages=1,
no autotune; every tail of M, N and K is masked, so any size is correct.

kforge eval --kernel problems/kernels/bmm_fp16.py --entry bmm_fp16 \
    --inputs problems/kernels/bmm_fp16.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_M = 32
BLOCK_N = 32
BLOCK_K = 32


@triton.jit
def bmm_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_ab,
    stride_am,
    stride_ak,
    stride_bb,
    stride_bk,
    stride_bn,
    stride_cb,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    tile = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid_m = tile // tiles_n
    pid_n = tile % tiles_n

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = (
        a_ptr
        + batch * stride_ab
        + offs_m[:, None].to(tl.int64) * stride_am
        + offs_k[None, :].to(tl.int64) * stride_ak
    )
    b_ptrs = (
        b_ptr
        + batch * stride_bb
        + offs_k[:, None].to(tl.int64) * stride_bk
        + offs_n[None, :].to(tl.int64) * stride_bn
    )

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = (
        c_ptr
        + batch * stride_cb
        + offs_m[:, None].to(tl.int64) * stride_cm
        + offs_n[None, :].to(tl.int64) * stride_cn
    )
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def bmm_fp16(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    batch, m, k = a.shape
    n = b.shape[2]
    c = torch.empty((batch, m, n), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N), batch)
    bmm_kernel[grid](
        a,
        b,
        c,
        m,
        n,
        k,
        a.stride(0),
        a.stride(1),
        a.stride(2),
        b.stride(0),
        b.stride(1),
        b.stride(2),
        c.stride(0),
        c.stride(1),
        c.stride(2),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        num_warps=4,
        num_stages=1,
    )
    return c


##################################################################################################################################################


def test_bmm_fp16():
    results = {}
    a = torch.randn(4, 128, 96, device="cuda", dtype=torch.float16)
    b = torch.randn(4, 96, 160, device="cuda", dtype=torch.float16)
    results["test_case_1"] = bmm_fp16(a, b)
    a = torch.randn(3, 37, 67, device="cuda", dtype=torch.float16)
    b = torch.randn(3, 67, 45, device="cuda", dtype=torch.float16)
    results["test_case_2"] = bmm_fp16(a, b)
    return results


result_gold = test_bmm_fp16()
