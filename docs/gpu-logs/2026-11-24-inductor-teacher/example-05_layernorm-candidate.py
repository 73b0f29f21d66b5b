"""LayerNorm over the last dimension with learnable weight and bias. Float32.

The affine parameters are re-drawn from the seeded RNG in __init__ (instead of the
default ones/zeros), so a candidate must build them exactly the same way, in the same
order, to get the same values.
"""

import torch
import torch.nn as nn

BATCH = 4
SEQ = 2048
DIM = 4096
EPS = 1e-5

KFORGE_SMALL = {"BATCH": 2, "SEQ": 7, "DIM": 5000}


class Model(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)
        nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs() -> list[torch.Tensor]:
    # Non-zero mean and non-unit variance so that both statistics matter.
    return [0.5 + 2.0 * torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs() -> list[int | float]:
    return [DIM, EPS]


# ---- Triton code from torch.compile (Inductor), made standalone by kforge's inductor teacher.
# Launch configs are the ones Inductor's autotuning chose; grids are fixed for the problem's sizes.
import triton
import triton.language as tl
from triton.language import math as tl_math
from triton.language.extra import libdevice


@triton.jit
def ih_welford_reduce(value, mean, m2, weight, first_iteration):
    if first_iteration:
        new_weight = tl.full(weight.shape, 1, weight.dtype)
        new_mean = value
        new_m2 = tl.zeros_like(m2)
    else:
        delta = value - mean
        new_weight = weight + 1
        new_mean = mean + delta / new_weight
        new_m2 = m2 + delta * (value - new_mean)
    return (new_mean, new_m2, new_weight)


@triton.jit
def ih_welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    weight = weight_1 + weight_2
    share_2 = tl.where(weight == 0.0, 0.0, weight_2 / weight)
    return (mean_1 + delta * share_2, m2_1 + m2_2 + delta * delta * weight_1 * share_2, weight)


@triton.jit
def ih_welford(mean, m2, weight, dim):
    return tl.reduce((mean, m2, weight), dim, ih_welford_combine)


@triton.jit
def triton_red_fused_native_layer_norm_0(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
    xnumel = 8192
    r0_numel = 4096
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex
    tmp2_mean = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    tmp2_m2 = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    tmp2_weight = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + 4096 * x0), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp2_mean_next, tmp2_m2_next, tmp2_weight_next = ih_welford_reduce(tmp1, tmp2_mean, tmp2_m2, tmp2_weight, roffset == 0)
        tmp2_mean = tl.where(r0_mask, tmp2_mean_next, tmp2_mean)
        tmp2_m2 = tl.where(r0_mask, tmp2_m2_next, tmp2_m2)
        tmp2_weight = tl.where(r0_mask, tmp2_weight_next, tmp2_weight)
    tmp3, tmp4, tmp5 = ih_welford(tmp2_mean, tmp2_m2, tmp2_weight, 1)
    tmp2 = tmp3[:, None]
    tmp6 = tmp4[:, None]
    tmp7 = tmp5[:, None]
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp8 = tl.load(in_ptr0 + (r0_1 + 4096 * x0), r0_mask, eviction_policy='evict_first', other=0.0)
        tmp16 = tl.load(in_ptr1 + r0_1, r0_mask, eviction_policy='evict_last', other=0.0)
        tmp18 = tl.load(in_ptr2 + r0_1, r0_mask, eviction_policy='evict_last', other=0.0)
        tmp9 = tmp8 - tmp2
        tmp10 = tl.full([1, 1], 4096.0, tl.float32)
        tmp11 = tmp6 / tmp10
        tmp12 = tl.full([1, 1], 1e-05, tl.float32)
        tmp13 = tmp11 + tmp12
        tmp14 = tl.math.rsqrt(tmp13)
        tmp15 = tmp9 * tmp14
        tmp17 = tmp15 * tmp16
        tmp19 = tmp17 + tmp18
        tl.store(out_ptr2 + (r0_1 + 4096 * x0), tmp19, r0_mask)


def reinterpret_tensor(tensor, size, stride, offset):
    # A view of the same storage with another size and stride, `offset` elements further on.
    return tensor.as_strided(size, stride, tensor.storage_offset() + offset)


def assert_size_stride(tensor, size, stride):
    if tuple(tensor.shape) != tuple(size) or tuple(tensor.stride()) != tuple(stride):
        raise ValueError(
            f"the compiled kernels expect size {tuple(size)} and stride {tuple(stride)}, "
            f"got {tuple(tensor.shape)} and {tuple(tensor.stride())}"
        )


def assert_alignment(tensor, alignment):
    if tensor.data_ptr() % alignment != 0:
        raise ValueError(f"the compiled kernels expect {alignment}-byte aligned data")


def inductor_call(args, device):
    arg0_1, arg1_1, arg2_1 = args
    args.clear()
    assert_size_stride(arg0_1, (4096,), (1,))
    assert_size_stride(arg1_1, (4096,), (1,))
    assert_size_stride(arg2_1, (4, 2048, 4096), (8388608, 4096, 1))
    buf3 = torch.empty_strided((4, 2048, 4096), (8388608, 4096, 1), dtype=torch.float32, device=device)
    triton_red_fused_native_layer_norm_0[8192, 1, 1](in_ptr0=arg2_1, in_ptr1=arg0_1, in_ptr2=arg1_1, out_ptr2=buf3, xnumel=8192, r0_numel=4096, XBLOCK=1, R0_BLOCK=4096, num_warps=16, num_stages=1)
    del arg0_1
    del arg1_1
    del arg2_1
    return (buf3,)


class ModelNew(Model):
    """The problem's Model (same parameters from the same seed), run by the kernels above."""

    def forward(self, *inputs):
        device = next(value.device for value in inputs if isinstance(value, torch.Tensor))
        results = inductor_call([self.norm.weight, self.norm.bias, inputs[0]], device)
        return results[0]
