"""Reference Triton solution for starter/28_rotary_embedding.

One program per (batch, position): it loads that position's cos / sin rows once and walks
the heads in tiles of BLOCK_H, rotating a (BLOCK_H, HALF) tile of each half of q per step
and writing both halves of the output directly (no concatenation buffer). All strides
are passed, so q may be any strided 4-D view.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rope_kernel(q_ptr, cos_ptr, sin_ptr, out_ptr, seq_len, n_heads, half,
                stride_qb, stride_qs, stride_qh, stride_qd, stride_cs, stride_cd, stride_ss, stride_sd,
                stride_ob, stride_os, stride_oh, stride_od,
                BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    b = (pid // seq_len).to(tl.int64)
    pos = (pid % seq_len).to(tl.int64)
    d = tl.arange(0, BLOCK_D)
    d_ok = d < half
    c = tl.load(cos_ptr + pos * stride_cs + d * stride_cd, mask=d_ok, other=0.0).to(tl.float32)
    s = tl.load(sin_ptr + pos * stride_ss + d * stride_sd, mask=d_ok, other=0.0).to(tl.float32)
    q_base = q_ptr + b * stride_qb + pos * stride_qs
    o_base = out_ptr + b * stride_ob + pos * stride_os
    heads = tl.arange(0, BLOCK_H)

    for h0 in range(0, n_heads, BLOCK_H):
        h = h0 + heads
        mask = (h[:, None] < n_heads) & d_ok[None, :]
        q1_ptrs = q_base + h[:, None] * stride_qh + d[None, :] * stride_qd
        o1_ptrs = o_base + h[:, None] * stride_oh + d[None, :] * stride_od
        q1 = tl.load(q1_ptrs, mask=mask, other=0.0).to(tl.float32)
        q2 = tl.load(q1_ptrs + half * stride_qd, mask=mask, other=0.0).to(tl.float32)
        tl.store(o1_ptrs, q1 * c[None, :] - q2 * s[None, :], mask=mask)
        tl.store(o1_ptrs + half * stride_od, q2 * c[None, :] + q1 * s[None, :], mask=mask)


class ModelNew(nn.Module):
    BLOCK_H = 16

    def __init__(self) -> None:
        super().__init__()

    def forward(self, q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        batch, seq_len, n_heads, head_dim = q.shape
        half = head_dim // 2
        out = torch.empty((batch, seq_len, n_heads, head_dim), dtype=q.dtype, device=q.device)
        rope_kernel[(batch * seq_len,)](
            q, cos, sin, out, seq_len, n_heads, half,
            q.stride(0), q.stride(1), q.stride(2), q.stride(3),
            cos.stride(0), cos.stride(1), sin.stride(0), sin.stride(1),
            out.stride(0), out.stride(1), out.stride(2), out.stride(3),
            BLOCK_H=self.BLOCK_H, BLOCK_D=triton.next_power_of_2(half), num_warps=4,
        )
        return out
