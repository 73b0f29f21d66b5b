"""Untuned baseline for baseline/08_linear_bias_relu_bf16, the starting point for kforge's tuner.

A plain tiled matmul of x with W^T (W is stored (N, K) as in nn.Linear; its transposed tiles are
read through strides, no copy): each program computes one BLOCK_M x BLOCK_N tile, walking K in
BLOCK_K steps with tl.dot on bfloat16 tiles accumulating in float32. The epilogue adds the bias and
applies the ReLU to the float32 accumulator, then casts to bfloat16 once at the store. Programs are
ordered in groups of GROUP_M tile rows (L2-friendly ordering). Every edge (M, N, K) is masked, so any
power-of-two tile of 16 or more is correct.

Knobs (deliberately modest, for the tuner to improve): the class attributes BLOCK_M = BLOCK_N =
BLOCK_K = 32 and GROUP_M = 1, and the launch's num_warps = 4, num_stages = 1.

On the CPU (Triton interpreter) kforge's candidate worker makes the interpreter's bfloat16 tl.dot
and float32 -> bfloat16 cast match the GPU's, so the same kernel runs there unchanged.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_bias_relu_kernel(
    a_ptr,
    w_ptr,
    bias_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_wn,
    stride_wk,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    # (BLOCK_K, BLOCK_N) tile of W^T.
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :].to(tl.int64) * stride_wn
    mask_m = offs_m[:, None] < M
    mask_n = offs_n[None, :] < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m & (offs_k[None, :] < k_left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_left) & mask_n, other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K * stride_ak
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    y = tl.maximum(acc + bias[None, :], 0.0)
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, y.to(c_ptr.dtype.element_ty), mask=mask_m & mask_n)


class ModelNew(nn.Module):
    BLOCK_M = 32
    BLOCK_N = 32
    BLOCK_K = 32
    GROUP_M = 1

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        # Same construction (float32 init, then bfloat16) and RNG draws as Model.
        self.linear = nn.Linear(in_features, out_features).to(torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.linear.weight
        b = self.linear.bias
        m, k = x.shape
        n = w.shape[0]
        out = torch.empty((m, n), dtype=x.dtype, device=x.device)
        grid = (triton.cdiv(m, self.BLOCK_M) * triton.cdiv(n, self.BLOCK_N),)
        linear_bias_relu_kernel[grid](
            x,
            w,
            b,
            out,
            m,
            n,
            k,
            x.stride(0),
            x.stride(1),
            w.stride(0),
            w.stride(1),
            out.stride(0),
            out.stride(1),
            BLOCK_M=self.BLOCK_M,
            BLOCK_N=self.BLOCK_N,
            BLOCK_K=self.BLOCK_K,
            GROUP_M=self.GROUP_M,
            num_warps=4,
            num_stages=1,
        )
        return out
