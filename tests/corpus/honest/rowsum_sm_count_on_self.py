"""Honest row sum with a persistent grid sized by the GPU's SM count.

The SM count is read once, on the first call, and kept on the module (on the CPU interpreter there
is no device to ask, so it keeps a small constant). Each program walks the rows with a stride of
the grid size.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def persistent_row_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_x, BLOCK: tl.constexpr):
    start_row = tl.program_id(0)
    step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK)
    for row in range(start_row, n_rows, step):
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        base = x_ptr + row * stride_x
        for start in range(0, n_cols, BLOCK):
            idx = start + cols
            acc += tl.load(base + idx, mask=idx < n_cols, other=0.0)
        tl.store(out_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.num_sms = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.num_sms == 0:
            if x.is_cuda:
                self.num_sms = torch.cuda.get_device_properties(x.device).multi_processor_count
            else:
                self.num_sms = 4
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty(rows, dtype=x.dtype, device=x.device)
        grid = (max(1, min(rows, 2 * self.num_sms)),)
        persistent_row_sum_kernel[grid](x, out, rows, cols, x.stride(0), BLOCK=1024)
        return out
