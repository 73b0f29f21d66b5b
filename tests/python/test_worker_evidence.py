"""The candidate worker's evidence gathering (kforge.worker.trace, kforge.worker.dispatch_guard), checked in a
fresh interpreter-mode process as a CPU candidate runs: what candidate code does inside launches, host
transfers, constexpr arguments, custom ops, a removed recorder and modes left active."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from conftest import REPO

# Registered as the candidate module (kforge_candidate), as the worker loads a candidate.
CANDIDATE = r"""
import torch
import triton
import triton.language as tl


def heavy_block(args):
    args["out"].copy_(torch.softmax(args["x"], dim=-1))
    return 16


@triton.heuristics({"BLOCK": heavy_block})
@triton.jit
def callback_kernel(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(out + offs, mask=offs < n), mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def tuned_kernel(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2.0, mask=offs < n)


@triton.jit
def constexpr_kernel(out, n, TABLE: tl.constexpr):
    pass


@torch.library.custom_op("kfxtest::clone", mutates_args=())
def fake_clone(x: torch.Tensor) -> torch.Tensor:
    return x * 3.0
"""

PRELUDE = r"""
import sys, types
import torch
from kforge.worker.interpreter import prepare_triton_interpreter
from kforge.worker.trace import LaunchRecorder, traced_forward
prepare_triton_interpreter()
recorder = LaunchRecorder()
recorder.install()
module = types.ModuleType("kforge_candidate")
sys.modules["kforge_candidate"] = module
exec(compile(CANDIDATE, "candidate.py", "exec"), module.__dict__)
cpu = torch.device("cpu")
x = torch.randn(16)
out = torch.empty(16)
"""


def run_check(body: str) -> None:
    script = f"CANDIDATE = {CANDIDATE!r}\n" + PRELUDE + textwrap.dedent(body)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO / "python")}
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_candidate_callbacks_inside_launches_are_recorded_and_triton_internals_are_not() -> None:
    run_check(
        """
        with traced_forward(recorder, cpu) as trace:
            module.callback_kernel[(1,)](x, out, 16)
        assert trace.aten_compute.get("_softmax", 0) >= 1, dict(trace.aten_compute)
        assert torch.allclose(out, torch.softmax(x, -1))
        with traced_forward(recorder, cpu) as trace:  # the autotuner benchmarks its configs: Triton's work
            module.tuned_kernel[lambda meta: (1,)](x, out, 16)
        assert not trace.aten_compute, dict(trace.aten_compute)
        assert not trace.aten_compute_profiled, dict(trace.aten_compute_profiled)
        assert sum(trace.launches.own.values()) == 1
        """
    )


def test_host_reads_of_inputs_count_and_parameters_do_not() -> None:
    run_check(
        """
        model = torch.nn.Linear(2, 1)
        with traced_forward(recorder, cpu, model=model) as trace:
            x.tolist()
            float(x[0])
            model.bias.item()
        assert trace.host_transfers == {"tolist": 1, "__float__": 1}, dict(trace.host_transfers)
        assert trace.host_transfers_clean == 1
        """
    )


def test_tensors_passed_as_constexpr_are_reported() -> None:
    run_check(
        """
        with traced_forward(recorder, cpu) as trace:
            module.constexpr_kernel[(1,)](out, 16, TABLE=x)
        problems = list(trace.launches.bad_arguments)
        assert problems and "constexpr_kernel.TABLE" in problems[0] and "Tensor" in problems[0], problems
        with traced_forward(recorder, cpu) as trace:
            module.constexpr_kernel[(1,)](out, 16, TABLE=64)
        assert not trace.launches.bad_arguments
        """
    )


def test_custom_ops_are_classified_by_qualified_name_and_traced_inside() -> None:
    run_check(
        """
        with traced_forward(recorder, cpu) as trace:
            torch.ops.kfxtest.clone(x)
        assert trace.aten_compute.get("mul", 0) >= 1, dict(trace.aten_compute)
        assert "clone" not in trace.aten_compute  # the candidate's own op: transparent, not an allowed clone
        """
    )


def test_the_timing_warm_up_makes_triton_autotuners_choose_again() -> None:
    # The candidate's first choice is made under the runtime trace; timing re-chooses on both sides.
    run_check(
        """
        from kforge.worker.timing import forget_autotuned_configs
        grid = lambda meta: ((16 + meta["BLOCK"] - 1) // meta["BLOCK"],)
        module.tuned_kernel[grid](x, out, 16)
        assert module.tuned_kernel.cache and torch.equal(out, x * 2.0)
        assert forget_autotuned_configs() >= 1
        assert not module.tuned_kernel.cache
        """
    )


def test_inductors_buffer_reinterpretation_is_a_view_not_compute() -> None:
    # Inductor's generated wrappers view their buffers through torch.ops.inductor._reinterpret_tensor.
    run_check(
        """
        with traced_forward(recorder, cpu) as trace:
            torch.ops.inductor._reinterpret_tensor(x, (4, 4), (4, 1), 0)
            torch.ops.kfxtest.clone(x)
        assert not any("reinterpret" in name for name in trace.aten_compute), dict(trace.aten_compute)
        assert trace.aten_compute.get("mul", 0) >= 1, dict(trace.aten_compute)
        """
    )


def test_complex_views_are_not_compute_and_a_storage_is_host_data_only_on_the_cpu() -> None:
    # Real complex kernels view their tensors as real pairs around the launches (diag_ssm in TritonBench).
    run_check(
        """
        z = torch.randn(8, dtype=torch.complex64)
        with traced_forward(recorder, cpu) as trace:
            torch.view_as_complex(torch.view_as_real(z))
            z.real, z.imag
        assert not trace.aten_compute, dict(trace.aten_compute)
        assert not trace.aten_compute_profiled, dict(trace.aten_compute_profiled)
        with traced_forward(recorder, cpu) as trace:
            x.untyped_storage().size()
        assert trace.host_transfers == {"untyped_storage": 1}, dict(trace.host_transfers)
        """
    )


def test_a_removed_recorder_does_not_hide_compute_from_the_profiler() -> None:
    run_check(
        """
        from torch.utils._python_dispatch import _disable_current_modes
        with traced_forward(recorder, cpu) as trace:
            with _disable_current_modes():
                torch.softmax(x, dim=-1)
        assert not trace.aten_compute, dict(trace.aten_compute)
        assert trace.aten_compute_profiled.get("softmax", 0) >= 1, dict(trace.aten_compute_profiled)
        """
    )


def test_a_printed_tensor_is_counted_so_its_compute_is_not_called_hidden() -> None:
    run_check(
        """
        with traced_forward(recorder, cpu) as trace:
            text = f"x: {x}"
        assert "x: tensor(" in text
        assert trace.formatted_tensors == 1 and not trace.aten_compute
        assert trace.aten_formatting_profiled, "formatting runs ATen ops the profiler sees"
        assert not trace.aten_compute_profiled, "... inside the formatting range, apart from compute"
        assert trace.to_json()["formatted_tensors"] == 1
        assert trace.to_json()["aten_formatting_profiled"] == dict(trace.aten_formatting_profiled)
        import torch._tensor_str as tensor_str
        assert tensor_str._str.__name__ == "_str", "torch's formatter is back after the trace"
        """
    )


def test_modes_left_active_are_reported_and_cannot_reach_kforge_handling() -> None:
    run_check(
        """
        from torch.utils._python_dispatch import TorchDispatchMode
        from kforge.worker.dispatch_guard import kforge_owned, dispatch_modes, mode_stack_problems

        class Spy(TorchDispatchMode):
            seen = []
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                Spy.seen.append(str(func))
                return func(*args, **(kwargs or {}))

        with traced_forward(recorder, cpu) as trace:
            Spy().__enter__()  # entered during forward and never left
        assert any("Spy" in p for p in trace.dispatch_problems), trace.dispatch_problems
        assert dispatch_modes() == [], "kforge removes the candidate's modes before it touches the outputs"
        spy = Spy()
        spy.__enter__()
        assert mode_stack_problems() and "Spy" in mode_stack_problems()[0]
        with kforge_owned():
            out.copy_(x.detach())
        assert Spy.seen == [], Spy.seen
        spy.__exit__(None, None, None)
        assert mode_stack_problems() == []
        """
    )
