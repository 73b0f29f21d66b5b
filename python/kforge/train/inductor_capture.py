"""Compiles a problem's Model with torch.compile on the GPU and records what a standalone rewrite needs.

The record is plain JSON, so the rewrite (inductor_standalone.py) runs and is tested without a GPU:
- `wrapper`: the Python module Inductor generated (kernel sources and the `call` that launches them);
- `kernels`: for each Triton kernel the launch config autotuning chose, the names the wrapper's
  `.run(...)` arguments bind to, the constants baked into it and its grid as expressions;
- `inputs`: what each argument of `call` is (a parameter or buffer of the model, or a forward input);
- `outputs`: which of `call`'s results make up the forward's result, and in what structure.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from kforge.train.inductor_standalone import kernel_sources

CAPTURE_FORMAT = 1


class CaptureError(Exception):
    """torch.compile's result cannot become a standalone candidate; the message says why."""


def inductor_options() -> dict[str, Any]:
    """Matmuls and convolutions through Inductor's Triton templates (not cuBLAS/cuDNN), no CUDA graphs, and
    no decompose-k matmul choices: those are subgraphs of their own, which a standalone file lacks."""
    return {
        "max_autotune_gemm": True,
        "max_autotune_gemm_backends": "TRITON",
        "max_autotune_conv_backends": "TRITON",
        "triton.cudagraphs": False,
        "triton.num_decompose_k_splits": 0,
        "freezing": False,
    }


@contextlib.contextmanager
def recorded_graph_calls(calls: list[dict[str, Any]], launched: dict[str, Any]) -> Iterator[None]:
    """While active, records each compiled graph's inputs and outputs, and each kernel it launches
    (the CachingAutotuner object, by kernel name) as it launches it."""
    from torch._inductor.output_code import CompiledFxGraph
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    original_call = CompiledFxGraph.__call__
    original_run = CachingAutotuner.run

    def recording_call(self: Any, inputs: Sequence[Any]) -> Any:
        arguments = list(inputs)  # `call` clears the list it is given
        result = original_call(self, inputs)
        source = getattr(self, "source_code", None)  # this graph's module among autotuning's others
        calls.append({"inputs": arguments, "outputs": result, "source": source})
        return result

    def recording_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        launched[self.fn.__name__] = self  # the wrapper's name; a later launch replaces a benchmarking one
        return original_run(self, *args, **kwargs)

    CompiledFxGraph.__call__ = recording_call  # type: ignore[method-assign]
    CachingAutotuner.run = recording_run  # type: ignore[method-assign]
    try:
        yield
    finally:
        CompiledFxGraph.__call__ = original_call  # type: ignore[method-assign]
        CachingAutotuner.run = original_run  # type: ignore[method-assign]


def _same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a is b:
        return True
    return (
        a.device == b.device
        and a.dtype == b.dtype
        and a.shape == b.shape
        and a.stride() == b.stride()
        and a.numel() > 0
        and a.data_ptr() == b.data_ptr()
    )


def describe_inputs(
    arguments: list[Any], model: torch.nn.Module, forward_inputs: list[Any]
) -> list[dict[str, Any]]:
    """Maps each argument of the compiled `call` to a model parameter/buffer or a forward input."""
    named = [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]
    described: list[dict[str, Any]] = []
    for position, argument in enumerate(arguments):
        if not isinstance(argument, torch.Tensor):
            raise CaptureError(
                f"argument {position} of the compiled graph is a {type(argument).__name__}, not a tensor; "
                "only static shapes are supported (the problem's sizes are fixed)"
            )
        match = next((name for name, tensor in named if _same_tensor(argument, tensor)), None)
        if match is not None:
            described.append({"kind": "state", "name": match})
            continue
        index = next(
            (
                i
                for i, value in enumerate(forward_inputs)
                if isinstance(value, torch.Tensor) and _same_tensor(argument, value)
            ),
            None,
        )
        if index is None:
            raise CaptureError(
                f"argument {position} of the compiled graph ({tuple(argument.shape)}, {argument.dtype}) is "
                "neither "
                "a parameter or buffer of the model nor a forward input (a constant Inductor lifted?)"
            )
        described.append({"kind": "input", "index": index})
    return described


def describe_outputs(result: Any, outputs: Sequence[Any]) -> dict[str, Any]:
    """Which of `call`'s outputs the forward returns, as a tensor, a tuple or a list of them."""
    tensors = [value for value in outputs if isinstance(value, torch.Tensor)]

    def position_of(value: Any) -> int:
        if not isinstance(value, torch.Tensor):
            raise CaptureError(f"the forward returns a {type(value).__name__}; only tensors are supported")
        for index, candidate in enumerate(outputs):
            if isinstance(candidate, torch.Tensor) and _same_tensor(value, candidate):
                return index
        raise CaptureError(
            "an output of the forward is not one of the compiled graph's results (a view of an input?); "
            f"the graph returned {len(tensors)} tensor(s)"
        )

    if isinstance(result, torch.Tensor):
        return {"structure": "tensor", "indices": [position_of(result)]}
    if isinstance(result, (tuple, list)):
        return {"structure": type(result).__name__, "indices": [position_of(value) for value in result]}
    raise CaptureError(f"the forward returns a {type(result).__name__}; expected a tensor, tuple or list")


def _config_of(autotuner: Any) -> Any:
    launchers = getattr(autotuner, "launchers", None) or []
    if len(launchers) != 1:
        raise CaptureError(
            f"kernel {autotuner.fn.__name__} has {len(launchers)} launch configs after its first run; "
            "expected "
            "the one autotuning chose"
        )
    return launchers[0]


def describe_kernel(autotuner: Any) -> dict[str, Any]:
    """The launch config autotuning chose, the `.run` argument names, constants and grid of one kernel."""
    from torch._inductor.runtime.triton_heuristics import GridExpr

    launcher = _config_of(autotuner)
    config = launcher.config
    kwargs = dict(config.kwargs)
    grid = GridExpr.from_meta(autotuner.inductor_meta, config, mode="python")
    constants = {
        str(name): value
        for name, value in dict(autotuner.triton_meta.get("constants", {})).items()
        if value is None or isinstance(value, (bool, int, float, str))
    }
    arg_names = list(autotuner.fn.arg_names)
    constexpr_positions = getattr(autotuner.fn, "constexprs", [])
    return {
        "arg_names": arg_names,
        "constexprs": [arg_names[i] for i in constexpr_positions if i < len(arg_names)],
        "extra_launcher_args": list(autotuner.inductor_meta.get("extra_launcher_args", [])),
        "def_args": list(getattr(launcher, "def_args", None) or []),
        "constants": constants,
        "config": {
            "kwargs": kwargs,
            "num_warps": int(config.num_warps),
            "num_stages": int(config.num_stages),
            "maxnreg": getattr(config, "maxnreg", None),
        },
        "grid": {
            "prefix": list(grid.prefix),
            "x": str(grid.x_grid),
            "y": str(grid.y_grid),
            "z": str(grid.z_grid),
        },
        "grid_type": str(autotuner.inductor_meta.get("grid_type", "")),
    }


def graph_module(calls: list[dict[str, Any]], codes: list[str]) -> str:
    """The generated module of the one graph the forward ran. Autotuning may generate more (a matmul's
    decompose-k choices are subgraphs of their own); the graph's own source names it among them."""
    if len(calls) != 1:
        raise CaptureError(
            f"torch.compile ran {len(calls)} graph(s); expected exactly one (a model with no compiled "
            "computation, or one split by Inductor, is not supported)"
        )
    source = calls[0].get("source")
    if isinstance(source, str) and "def call(" in source:
        return source
    if len(codes) == 1:
        return codes[0]
    raise CaptureError(
        f"torch.compile produced {len(codes)} generated modules and the graph's own is not known"
    )


def do_bench_times(model: Any, compiled: Any, forward_inputs: list[Any]) -> dict[str, float]:
    """Eager and compiled forward times by triton.testing.do_bench (its own L2 flush and median): a
    measurement independent of kforge's timing, to set beside the teacher candidate's verdict."""
    from triton.testing import do_bench

    with torch.no_grad():
        eager_ms = do_bench(lambda: model(*forward_inputs), return_mode="median")
        compiled_ms = do_bench(lambda: compiled(*forward_inputs), return_mode="median")
    return {"eager_ms": float(eager_ms), "compiled_ms": float(compiled_ms)}


def capture(
    model: torch.nn.Module,
    forward_inputs: list[Any],
    options: dict[str, Any] | None = None,
    timed: bool = False,
) -> dict[str, Any]:
    """Compiles and runs the model once on its inputs (already on the GPU); the record for the rewrite.
    timed: the record also holds do_bench's eager and compiled times (`do_bench`)."""
    import torch._inductor.config
    from torch._inductor.utils import run_and_get_code
    from torch.nn.attention import SDPBackend, sdpa_kernel

    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, dynamic=False, options=options or inductor_options())
    calls: list[dict[str, Any]] = []
    launched: dict[str, Any] = {}
    # No cache: a cached graph would skip the code generation that run_and_get_code records. Attention
    # as its math (matmuls and a softmax Inductor fuses), not a fused cuDNN/flash library kernel. RNN,
    # LSTM and GRU modules traced into their matmuls and gates (Dynamo refuses them by default:
    # "Attempted to wrap RNN, GRU, or LSTM", eight KernelBench level-3 problems).
    with (
        torch.no_grad(),
        recorded_graph_calls(calls, launched),
        torch._inductor.config.patch(force_disable_caches=True),
        torch._dynamo.config.patch(allow_rnn=True),
        sdpa_kernel([SDPBackend.MATH]),
    ):
        try:
            result, codes = run_and_get_code(compiled, *forward_inputs)
        except Exception as failure:  # noqa: BLE001 - any compile failure is the teacher's answer
            first_line = str(failure).strip().splitlines()[0] if str(failure).strip() else ""
            raise CaptureError(
                f"torch.compile failed: {type(failure).__name__}: {first_line[:400]}"
            ) from None
    wrapper = graph_module(calls, codes)
    call = calls[0]
    wrapper_kernels = kernel_sources(ast.parse(wrapper))  # not the autotuning's benchmark launches
    kernels = {
        name: describe_kernel(autotuner) for name, autotuner in launched.items() if name in wrapper_kernels
    }
    record = {
        "format": CAPTURE_FORMAT,
        "torch": torch.__version__,
        "wrapper": wrapper,
        "kernels": kernels,
        "inputs": describe_inputs(call["inputs"], model, forward_inputs),
        "outputs": describe_outputs(result, call["outputs"]),
    }
    if timed:
        record["do_bench"] = do_bench_times(model, compiled, forward_inputs)
    return record
