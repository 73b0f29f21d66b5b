"""The candidate's GPU memory share (kforge.worker.device_memory): an out-of-memory failure is the
candidate's only when it wanted more than its share; when the GPU no longer had the rest of the share
free, other evaluations or processes held it, and the evaluation is an environment error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # the workers' own modules, here

from kforge.worker.cuda_driver import CudaDriverError
from kforge.worker.device_memory import DeviceMemoryCap, is_out_of_memory

GIB = 2**30


def test_torch_and_driver_out_of_memory_errors_are_recognised() -> None:
    assert is_out_of_memory(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert is_out_of_memory(CudaDriverError("cuMemAlloc failed: CUDA error 2 (out of memory)"))
    assert not is_out_of_memory(CudaDriverError("cuMemAlloc failed: CUDA error 700 (illegal address)"))
    assert not is_out_of_memory(ValueError("shapes differ"))


def capped(monkeypatch: pytest.MonkeyPatch, free: int, reserved: int) -> DeviceMemoryCap:
    cap = DeviceMemoryCap()
    cap.device, cap.limit_bytes = torch.device("cuda", 0), 8 * GIB
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (free, 80 * GIB))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device: reserved)
    return cap


def test_a_full_gpu_while_the_candidate_is_within_its_share_is_the_machines_fault(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cap = capped(monkeypatch, free=1 * GIB, reserved=2 * GIB)  # 6 GiB of the share left, 1 GiB free
    why = cap.device_was_full(torch.OutOfMemoryError("CUDA out of memory"))
    assert why is not None and "within its share (8.00 GiB)" in why and "fewer evaluations" in why


def test_wanting_more_than_the_share_is_the_candidates_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    cap = capped(monkeypatch, free=70 * GIB, reserved=2 * GIB)  # the share's rest is free: it asked for more
    assert cap.device_was_full(torch.OutOfMemoryError("CUDA out of memory")) is None
    assert cap.is_over_limit(torch.OutOfMemoryError("CUDA out of memory"))
    assert cap.device_was_full(ValueError("not memory")) is None
    assert DeviceMemoryCap().device_was_full(torch.OutOfMemoryError("no cap on the CPU")) is None


def test_the_reference_running_out_of_gpu_memory_is_the_machines_limit_not_a_problem_defect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kforge.worker.judge import JudgeState, _problem_error

    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (1 * GIB, 80 * GIB))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device: 30 * GIB)
    state = JudgeState(device=torch.device("cuda", 0))
    error = _problem_error("reference forward", torch.OutOfMemoryError("CUDA out of memory"), state)
    assert error.kind == "environment"
    assert "1.00 GiB free of 80.00 GiB; the judge holds 30.00 GiB" in error.message
    assert _problem_error("reference forward", ValueError("bad shape"), state).kind == "problem"
    # On the CPU the machine's RAM is the limit: torch's CPU allocator failing is the machine's too.
    on_cpu = JudgeState(device=torch.device("cpu"))
    try:
        torch.empty(1 << 62, dtype=torch.uint8)
    except RuntimeError as failure:
        no_room = failure
    error = _problem_error("reference forward", no_room, on_cpu)
    assert error.kind == "environment" and "the machine ran out of memory" in error.message
    assert _problem_error("reference forward", ValueError("bad shape"), on_cpu).kind == "problem"


def test_an_escaped_out_of_memory_error_on_a_full_gpu_is_the_machines_not_the_candidates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An exception that escapes the candidate worker's handlers (an allocation while decoding its
    inputs, say) is classified as the handlers classify it: out of memory on a GPU other processes
    filled is an environment error; anything else stays the candidate's forward_error."""
    from kforge.worker.candidate import escaped_exception

    class FullDevice(DeviceMemoryCap):
        def device_was_full(self, exc: BaseException) -> str | None:
            return "the GPU ran out of memory" if "out of memory" in str(exc) else None

    reply = escaped_exception(FullDevice())(RuntimeError("CUDA error: out of memory"))
    assert (
        reply["error"]["kind"] == "environment" and "CUDA error: out of memory" in reply["error"]["message"]
    )
    assert escaped_exception(FullDevice())(SystemExit(3))["error"]["kind"] == "forward_error"
    broken = capped(monkeypatch, free=1 * GIB, reserved=2 * GIB)

    def context_gone(device: torch.device) -> tuple[int, int]:
        raise RuntimeError("CUDA context is gone")

    monkeypatch.setattr(torch.cuda, "mem_get_info", context_gone)  # too broken to ask: the candidate's
    assert broken.device_was_full(torch.OutOfMemoryError("CUDA out of memory")) is None
    assert escaped_exception(broken)(RuntimeError("out of memory"))["error"]["kind"] == "forward_error"
    assert (
        escaped_exception(DeviceMemoryCap())(RuntimeError("out of memory"))["error"]["kind"]
        == "forward_error"
    )
