"""C = relu(A @ B + bias): a float16 matmul with a fused bias and ReLU epilogue, float32 accumulation.

A is [M, K], B is [K, N], bias is [N]; C is [M, N] float16. The spec's GPU sizes are M = N = K = 4096.
A 1-D grid of tiles, renumbered in groups of GROUP_M tile rows (the usual L2-friendly ordering).
Honest but untuned: 32x32x32 tiles, GROUP_M = 8, num_warps=4, num_stages=1, no autotune; every tail
of M, N and K is masked, so any size is correct.

kforge eval --kernel problems/kernels/matmul_bias_relu_fp16.py --entry matmul_bias_relu_fp16 \
    --inputs problems/kernels/matmul_bias_relu_fp16.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_M = 32
BLOCK_N = 32
BLOCK_K = 32
GROUP_M = 8  # tile rows per group of the program ordering


@triton.jit
def matmul_bias_relu_kernel(
    a_ptr,
    b_ptr,
    bias_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # Grouped ordering: consecutive programs sweep GROUP_M tile rows before moving to the next column.
    in_group = GROUP_M * tiles_n
    first_m = (pid // in_group) * GROUP_M
    rows_here = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % rows_here
    pid_n = (pid % in_group) // rows_here

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :].to(tl.int64) * stride_ak
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * stride_bk + offs_n[None, :].to(tl.int64) * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    bias = tl.load(bias_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :].to(tl.int64) * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def matmul_bias_relu_fp16(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    m, k = a.shape
    n = b.shape[1]
    bias = bias.contiguous()
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N),)
    matmul_bias_relu_kernel[grid](
        a,
        b,
        bias,
        c,
        m,
        n,
        k,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        GROUP_M=GROUP_M,
        num_warps=4,
        num_stages=1,
    )
    return c


##################################################################################################################################################


def test_matmul_bias_relu_fp16():
    results = {}
    a = torch.randn(512, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(256, 384, device="cuda", dtype=torch.float16)
    bias = torch.randn(384, device="cuda", dtype=torch.float16)
    results["test_case_1"] = matmul_bias_relu_fp16(a, b, bias)
    a = torch.randn(67, 71, device="cuda", dtype=torch.float16)
    b = torch.randn(71, 45, device="cuda", dtype=torch.float16)
    bias = torch.randn(45, device="cuda", dtype=torch.float16)
    results["test_case_2"] = matmul_bias_relu_fp16(a, b, bias)
    return results


result_gold = test_matmul_bias_relu_fp16()
