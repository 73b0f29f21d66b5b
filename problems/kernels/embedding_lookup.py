"""out[t, :] = weight[ids[t], :]: an embedding lookup that gathers rows of a bfloat16 table of shape
(V, D) by int64 ids of shape (T,) in [0, V) (spec: V = 65536, D = 1024, T = 16384; small V = 97,
D = 67, T = 37). The grid is one program per (id, chunk of
BLOCK_SIZE columns); each program loads its id and copies that slice of the table row.

Honest but untuned: a small chunk of BLOCK_SIZE = 128 columns, num_warps=4, no autotune, one id per
program.

kforge eval --kernel problems/kernels/embedding_lookup.py --entry embedding_lookup \
    --inputs problems/kernels/embedding_lookup.inputs.json
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 128  # columns per program


@triton.jit
def embedding_lookup_kernel(
    ids_ptr, weight_ptr, out_ptr, dim, stride_weight, stride_out, BLOCK: tl.constexpr
):
    token = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < dim
    idx = tl.load(ids_ptr + token).to(tl.int64)
    vals = tl.load(weight_ptr + idx * stride_weight + cols, mask=mask, other=0.0)
    tl.store(out_ptr + token * stride_out + cols, vals, mask=mask)


def embedding_lookup(weight: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    weight = weight.contiguous()
    ids = ids.contiguous()
    n_ids = ids.numel()
    dim = weight.shape[1]
    out = torch.empty((n_ids, dim), device=weight.device, dtype=weight.dtype)
    grid = (n_ids, triton.cdiv(dim, BLOCK_SIZE))
    embedding_lookup_kernel[grid](
        ids, weight, out, dim, weight.stride(0), out.stride(0), BLOCK=BLOCK_SIZE, num_warps=4
    )
    return out.view(*ids.shape, dim)


##################################################################################################################################################


def test_embedding_lookup():
    results = {}
    weight = torch.randn(1000, 300, device="cuda", dtype=torch.bfloat16)
    ids = torch.randint(0, 1000, (64,), device="cuda", dtype=torch.int64)
    results["test_case_1"] = embedding_lookup(weight, ids)
    ids = torch.randint(0, 1000, (4, 9), device="cuda", dtype=torch.int64)
    results["test_case_2"] = embedding_lookup(weight, ids)
    return results


result_gold = test_embedding_lookup()
