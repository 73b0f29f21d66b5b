"""Reference Triton solution for starter/23_matmul_bias_gelu_bf16.

Tiled matmul with grouped (L2-friendly) program ordering and float32 accumulation in
tl.dot. The epilogue adds the bias and applies the exact GELU, 0.5 * y * (1 + erf(y / sqrt(2))),
to the float32 accumulator, then casts to bfloat16 once (the reference rounds twice: after
the linear and after the GELU). W is stored (N, K) as in nn.Linear; W^T tiles are read
through strides, no copy.

On the CPU (Triton interpreter) kforge's candidate worker makes the interpreter's bfloat16
tl.dot and float32 -> bfloat16 cast match the GPU's (python/kforge/worker/interpreter.py), so the
same kernel runs there unchanged.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

INV_SQRT_2 = tl.constexpr(0.7071067811865476)


@triton.jit
def linear_bias_gelu_kernel(
    a_ptr, w_ptr, bias_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_wn, stride_wk, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
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
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    # (BLOCK_K, BLOCK_N) tile of W^T.
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn
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
    y = acc + bias[None, :]
    y = 0.5 * y * (1.0 + tl.math.erf(y * INV_SQRT_2))
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, y.to(c_ptr.dtype.element_ty), mask=mask_m & mask_n)


class ModelNew(nn.Module):
    BLOCK_M = 128
    BLOCK_N = 128
    BLOCK_K = 64
    GROUP_M = 8

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
        linear_bias_gelu_kernel[grid](
            x, w, b, out, m, n, k,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), out.stride(0), out.stride(1),
            BLOCK_M=self.BLOCK_M, BLOCK_N=self.BLOCK_N, BLOCK_K=self.BLOCK_K, GROUP_M=self.GROUP_M,
            num_warps=8, num_stages=3,
        )
        return out
