"""Triton helpers that Inductor's kernels call as `triton_helpers.NAME`, written for kforge.

A standalone candidate may not import `torch._inductor`, so the rewrite copies the helpers a kernel
uses from this file (as `ih_NAME`, with the helpers they call in turn). Each keeps the meaning the
generated code expects: NaN wins a max/min (as in torch), ties in an arg-reduction go to the lowest
index, integer division and remainder round as Python's do, Welford statistics combine by weight.
"""

import triton
import triton.language as tl


@triton.jit
def ih_promote_to_tensor(x):
    # A scalar plus a one-element tensor is a tensor of the scalar's type.
    return x + tl.zeros((1,), tl.int1)


@triton.jit
def ih_is_floating(x):
    return ih_promote_to_tensor(x).dtype.is_floating()


@triton.jit
def ih_div_floor_integer(a, b):
    # Triton's // truncates toward zero; torch's floor division rounds toward minus infinity.
    quotient = a // b
    inexact = (a % b) != 0
    signs_differ = (a < 0) != (b < 0)
    return tl.where(inexact & signs_differ, quotient - 1, quotient)


@triton.jit
def ih_remainder_integer(a, b):
    # The remainder takes the divisor's sign, as Python's % does.
    remainder = a % b
    return tl.where((remainder != 0) & ((remainder < 0) != (b < 0)), remainder + b, remainder)


@triton.jit
def ih_multiply(a, b):
    return a * b


@triton.jit
def ih_prod(values, axis):
    return tl.reduce(values, axis, ih_multiply)


@triton.jit
def ih_minimum(a, b):
    take_a = a < b
    if ih_is_floating(a):
        take_a = take_a | (a != a)
    return tl.where(take_a, a, b)


@triton.jit
def ih_maximum(a, b):
    take_a = a > b
    if ih_is_floating(a):
        take_a = take_a | (a != a)
    return tl.where(take_a, a, b)


@triton.jit
def ih_min2(values, dim):
    return tl.reduce(values, dim, ih_minimum)


@triton.jit
def ih_max2(values, dim):
    return tl.reduce(values, dim, ih_maximum)


@triton.jit
def ih_pick_with_index(a_value, a_index, b_value, b_index, smaller: tl.constexpr):
    # torch's arg-reduction order: a NaN wins, then the smaller (larger) value, then the lower index.
    take_a = a_value < b_value if smaller else a_value > b_value
    tie = a_value == b_value
    if ih_is_floating(a_value):
        a_nan = a_value != a_value
        b_nan = b_value != b_value
        take_a = take_a | (a_nan & ~b_nan)
        tie = tie | (a_nan & b_nan)
    take_a = take_a | (tie & (a_index < b_index))
    return tl.where(take_a, a_value, b_value), tl.where(take_a, a_index, b_index)


@triton.jit
def ih_minimum_with_index(a_value, a_index, b_value, b_index):
    return ih_pick_with_index(a_value, a_index, b_value, b_index, True)


@triton.jit
def ih_maximum_with_index(a_value, a_index, b_value, b_index):
    return ih_pick_with_index(a_value, a_index, b_value, b_index, False)


@triton.jit
def ih_min_with_index(value, index, dim):
    return tl.reduce((value, index), dim, ih_minimum_with_index)


@triton.jit
def ih_max_with_index(value, index, dim):
    return tl.reduce((value, index), dim, ih_maximum_with_index)


@triton.jit
def ih_exp(x, use_fast_math: tl.constexpr):
    # tl.math.exp either way: libdevice's exp differs by an ulp or two and the CPU interpreter lacks it.
    return tl.math.exp(x)


@triton.jit
def ih_online_softmax_reduce(lhs_max, lhs_sum, dim, use_fast_math: tl.constexpr):
    # Rescales each lane's running sum to the row maximum, then adds the lanes up.
    row_max = ih_max2(lhs_max, dim)
    row_max_kept = tl.expand_dims(row_max, dim)
    shift = tl.where(row_max_kept == float("-inf"), 0, lhs_max - row_max_kept)
    row_sum = tl.sum(lhs_sum * ih_exp(shift, use_fast_math), dim)
    return row_max, row_sum


@triton.jit
def ih_online_softmax_combine(lhs_max, lhs_sum, rhs_max, use_fast_math: tl.constexpr):
    # The accumulator (lhs) meets one new element (rhs, whose own sum is exp(0) = 1).
    new_max = ih_maximum(lhs_max, rhs_max)
    all_minus_inf = new_max == float("-inf")
    lhs_scale = tl.where(all_minus_inf, 1.0, ih_exp(lhs_max - new_max, use_fast_math))
    rhs_scale = tl.where(all_minus_inf, 1.0, ih_exp(rhs_max - new_max, use_fast_math))
    return new_max, lhs_sum * lhs_scale + rhs_scale


@triton.jit
def ih_welford_reduce(value, mean, m2, weight, first_iteration):
    # One more observation per lane; the first iteration starts every lane from it.
    if first_iteration:
        new_weight = tl.full(weight.shape, 1, weight.dtype)
        new_mean = value
        new_m2 = tl.zeros_like(m2)
    else:
        delta = value - mean
        new_weight = weight + 1
        new_mean = mean + delta / new_weight
        new_m2 = m2 + delta * (value - new_mean)
    return new_mean, new_m2, new_weight


@triton.jit
def ih_welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    # Chan et al.'s pairwise update; an empty pair stays empty instead of dividing by zero.
    delta = mean_2 - mean_1
    weight = weight_1 + weight_2
    share_2 = tl.where(weight == 0.0, 0.0, weight_2 / weight)
    return mean_1 + delta * share_2, m2_1 + m2_2 + delta * delta * weight_1 * share_2, weight


@triton.jit
def ih_welford(mean, m2, weight, dim):
    return tl.reduce((mean, m2, weight), dim, ih_welford_combine)


@triton.jit
def ih_logical_or(a, b):
    return a | b


@triton.jit
def ih_any(values, dim):
    return tl.reduce(values, dim, ih_logical_or)


@triton.jit
def ih_device_assert_then(condition, message, value):
    tl.device_assert(condition, message)
    return value


@triton.jit
def ih_select_one(x, mask, dim, keep_dims=False):
    # The one element per row where mask is 1, summed as raw bits so that any dtype comes back exact.
    bits_type = tl.core.get_int_dtype(x.dtype.primitive_bitwidth, signed=False)
    bits = tl.sum(x.to(bits_type, bitcast=True) * mask, dim, keep_dims=keep_dims)
    return bits.to(x.dtype, bitcast=True)
