"""The inductor teacher: torch.compile's Triton code rewritten into standalone candidates.

Inductor generates Triton only for a GPU, so these tests rewrite captures made on the H100 (at the
problems' KFORGE_SMALL sizes: `kforge data sft --suite problems/starter --teacher inductor --small
--captures DIR` on a GPU writes one per problem) and verify the candidates on the
CPU interpreter through `kforge data sft --teacher inductor --captures`, exactly as a GPU run would
after its capture. The rewrite's refusals are checked on edited copies of the same captures."""

from __future__ import annotations

import ast
import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, STARTER, run_eval, run_kforge

sys.path.insert(0, str(REPO / "python"))  # the rewrite is plain Python: tested in this process
from kforge.train.inductor_standalone import (
    StandaloneError,
    launcher_parameters,
    standalone_candidate,
)

FIXTURES = Path(__file__).parent / "fixtures" / "inductor"
MATMUL = "06_linear_bias_relu_fp16"  # a Triton matmul template and a pointwise epilogue
CUMSUM = "08_cumsum"  # a scan: a local combine function and triton_helpers.select_one
CONVOLUTION = "21_depthwise_conv1d"  # Inductor keeps cuDNN's convolution: refused


def capture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.small.capture.json").read_text())


def problem_source(name: str) -> str:
    return (STARTER / name / "problem.py").read_text()


def imported_modules(source: str) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return modules


@pytest.mark.parametrize("name", [MATMUL, CUMSUM])
def test_the_rewrite_imports_only_torch_and_triton_and_launches_with_fixed_configs(name: str) -> None:
    record = capture(name)
    source = standalone_candidate(record, problem_source(name))
    assert all(module.split(".")[0] in {"torch", "triton"} for module in imported_modules(source)), source
    assert "_inductor" not in source and "triton_helpers" not in source and "triton_heuristics" not in source
    assert "class ModelNew(Model)" in source
    for kernel, meta in record["kernels"].items():
        launches = [line for line in source.splitlines() if line.strip().startswith(f"{kernel}[")]
        assert launches, f"{kernel} is not launched with an explicit grid"
        for launch in launches:
            assert f"num_warps={meta['config']['num_warps']}" in launch
            for knob, value in meta["config"]["kwargs"].items():
                assert f"{knob}={value}" in launch


def test_a_scan_keeps_its_combine_function_and_gets_kforges_select_one() -> None:
    source = standalone_candidate(capture(CUMSUM), problem_source(CUMSUM))
    assert "def ih_select_one(" in source
    assert "def _triton_helper_fn_add0_k0(" in source and "_triton_helper_fn_add0_k0)" in source


def test_what_is_not_triton_is_refused_with_its_name() -> None:
    with pytest.raises(StandaloneError, match=r"extern_kernels\.convolution"):
        standalone_candidate(capture(CONVOLUTION), problem_source(CONVOLUTION))

    fallback = capture(CUMSUM)
    fallback["wrapper"] = fallback["wrapper"].replace(
        "        return (", "        buf9 = torch.ops.aten.sort.default(arg0_1)\n        return (", 1
    )
    with pytest.raises(StandaloneError, match=r"ATen operator torch\.ops\.aten\.sort\.default"):
        standalone_candidate(fallback, problem_source(CUMSUM))

    unknown_helper = capture(CUMSUM)
    unknown_helper["wrapper"] = unknown_helper["wrapper"].replace(
        "triton_helpers.select_one", "triton_helpers.bucketize_binary_search"
    )
    with pytest.raises(StandaloneError, match=r"triton_helpers\.bucketize_binary_search"):
        standalone_candidate(unknown_helper, problem_source(CUMSUM))

    no_config = capture(MATMUL)
    no_config["kernels"].pop("triton_poi_fused_relu_1")
    with pytest.raises(StandaloneError, match="no launch config was captured for kernel"):
        standalone_candidate(no_config, problem_source(MATMUL))


def test_a_grid_that_depends_on_a_runtime_value_is_refused() -> None:
    record = capture(CUMSUM)
    wrapper = record["wrapper"]
    start = wrapper.index("triton_red_fused_cumsum_0.run(")
    end = wrapper.index("stream=", start)
    arguments = wrapper[start:end].split(", ")
    arguments[2] = "arg0_1.shape[0]"  # xnumel (the grid's size) no longer a literal
    record["wrapper"] = wrapper[:start] + ", ".join(arguments) + wrapper[end:]
    with pytest.raises(StandaloneError, match="not static"):
        standalone_candidate(record, problem_source(CUMSUM))


def test_launcher_parameters_follow_the_triton_version_that_made_the_call() -> None:
    meta = {
        "arg_names": ["in_ptr0", "out_ptr0", "xnumel", "XBLOCK"],
        "constexprs": ["XBLOCK"],
        "constants": {},
        "config": {"kwargs": {"XBLOCK": 128}},
        "extra_launcher_args": [],
    }
    assert launcher_parameters(meta, 3) == ["in_ptr0", "out_ptr0", "xnumel"]
    template = copy.deepcopy(meta)
    template["extra_launcher_args"] = ["_grid_0", "_grid_1", "_grid_2"]
    assert launcher_parameters(template, 6)[-3:] == ["_grid_0", "_grid_1", "_grid_2"]
    recorded = {**meta, "def_args": ["a", "b", "c"]}
    assert launcher_parameters(recorded, 3) == ["a", "b", "c"]


HELPER_CHECK = """
import torch, triton, triton.language as tl
from kforge.train.inductor_helpers import (ih_div_floor_integer, ih_remainder_integer, ih_max2, ih_min2,
    ih_max_with_index, ih_welford_reduce, ih_welford)

@triton.jit
def integers(a_ptr, b_ptr, q_ptr, r_ptr):
    i = tl.arange(0, 8)
    a = tl.load(a_ptr + i)
    b = tl.load(b_ptr + i)
    tl.store(q_ptr + i, ih_div_floor_integer(a, b))
    tl.store(r_ptr + i, ih_remainder_integer(a, b))

@triton.jit
def rows(x_ptr, max_ptr, min_ptr, arg_ptr, mean_ptr, var_ptr):
    r = tl.arange(0, 4)[:, None]
    c = tl.arange(0, 16)[None, :]
    x = tl.load(x_ptr + r * 16 + c)
    tl.store(max_ptr + tl.arange(0, 4), ih_max2(x, 1))
    tl.store(min_ptr + tl.arange(0, 4), ih_min2(x, 1))
    _, index = ih_max_with_index(x, tl.broadcast_to(c, [4, 16]), 1)
    tl.store(arg_ptr + tl.arange(0, 4), index)
    mean = tl.zeros([4, 16], tl.float32)
    m2 = tl.zeros([4, 16], tl.float32)
    weight = tl.zeros([4, 16], tl.float32)
    mean, m2, weight = ih_welford_reduce(x, mean, m2, weight, True)
    row_mean, row_m2, row_weight = ih_welford(mean, m2, weight, 1)
    tl.store(mean_ptr + tl.arange(0, 4), row_mean)
    tl.store(var_ptr + tl.arange(0, 4), row_m2 / row_weight)

a = torch.tensor([7, -7, 7, -7, 6, -6, 0, 5], dtype=torch.int32)
b = torch.tensor([2, 2, -2, -2, 3, 3, 4, -3], dtype=torch.int32)
q, r = torch.empty_like(a), torch.empty_like(a)
integers[(1,)](a, b, q, r)
assert torch.equal(q, torch.div(a, b, rounding_mode="floor")), q
assert torch.equal(r, torch.remainder(a, b)), r

x = torch.randn(4, 16)
x[1, 3] = float("nan")
x[2, 5] = x[2, 9] = 100.0  # a tie: the lower index wins
outputs = [torch.empty(4), torch.empty(4), torch.empty(4, dtype=torch.int64), torch.empty(4), torch.empty(4)]
rows[(1,)](x, *outputs)
assert torch.equal(outputs[0].isnan(), torch.tensor([False, True, False, False]))  # NaN wins, as in torch
assert torch.equal(outputs[0][[0, 2, 3]], x.max(1).values[[0, 2, 3]])
assert torch.equal(outputs[1].isnan(), outputs[0].isnan())
assert outputs[2][2].item() == 5 and outputs[2][1].item() == 3, outputs[2]
clean = x[[0, 2, 3]]
assert torch.allclose(outputs[3][[0, 2, 3]], clean.mean(1), atol=1e-5)
assert torch.allclose(outputs[4][[0, 2, 3]], clean.var(1, unbiased=False), atol=1e-4)
print("helpers ok")
"""


def test_kforges_helpers_keep_the_meaning_the_generated_kernels_expect() -> None:
    environment = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO / "python")}
    result = subprocess.run(
        [sys.executable, "-c", HELPER_CHECK], env=environment, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0 and "helpers ok" in result.stdout, result.stdout + result.stderr


def test_the_worker_answers_every_failure_with_a_stage(tmp_path: Path) -> None:
    environment = {**os.environ, "PYTHONPATH": str(REPO / "python"), "CUDA_VISIBLE_DEVICES": ""}
    out = tmp_path / "answer.json"
    base = [sys.executable, "-m", "kforge.worker.inductor_teacher", "--problem"]
    problem = str(STARTER / CUMSUM / "problem.py")
    subprocess.run([*base, problem, "--out", str(out)], env=environment, check=True, timeout=300)
    answer = json.loads(out.read_text())
    assert answer["stage"] == "environment" and "--captures" in answer["error"], answer
    missing = str(tmp_path / "missing.json")
    subprocess.run([*base, problem, "--out", str(out), "--capture-in", missing], env=environment, check=True)
    assert json.loads(out.read_text())["stage"] == "usage"


def test_generated_code_that_is_not_triton_during_the_capture_is_a_standalone_refusal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # KernelBench level 3's VanillaRNN keeps its hidden state on the CPU: Inductor compiles a C++ kernel
    # for it, which the capture finds while reading the wrapper; that is the teacher's refusal, not a crash.
    from kforge.worker import inductor_teacher

    def refuse(*_: Any, **__: Any) -> dict[str, Any]:
        raise StandaloneError("the generated code compiles cpp_pybinding code, not only Triton")

    monkeypatch.setattr(inductor_teacher, "capture_problem", refuse)
    out = tmp_path / "answer.json"
    assert inductor_teacher.main(["--problem", str(STARTER / CUMSUM / "problem.py"), "--out", str(out)]) == 0
    answer = json.loads(out.read_text())
    assert answer == {
        "error": "the generated code compiles cpp_pybinding code, not only Triton",
        "stage": "standalone",
    }


def test_the_capture_traces_recurrent_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    # Dynamo refuses nn.RNN/LSTM/GRU unless allow_rnn is on; the capture compiles with it on (it needs a
    # GPU to finish, so the compile step here only reports the setting it ran under).
    import torch
    import torch._inductor.utils
    from kforge.train.inductor_capture import CaptureError, capture

    def report_setting(*_: Any, **__: Any) -> Any:
        raise RuntimeError(f"allow_rnn={torch._dynamo.config.allow_rnn}")

    monkeypatch.setattr(torch._inductor.utils, "run_and_get_code", report_setting)
    with pytest.raises(CaptureError, match="allow_rnn=True"):
        capture(torch.nn.GRU(4, 8), [torch.randn(3, 2, 4)])
    assert torch._dynamo.config.allow_rnn is False, "the setting is the capture's only"


def test_data_sft_keeps_the_verified_rewrites_and_logs_the_refusal(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    captures = tmp_path / "captures"
    captures.mkdir()
    for name in (MATMUL, CUMSUM, CONVOLUTION):
        shutil.copytree(STARTER / name, suite / name)
        shutil.copy(FIXTURES / f"{name}.small.capture.json", captures)
    out = tmp_path / "sft.jsonl"
    result = run_kforge(
        "data", "sft", "--suite", str(suite), "--teacher", "inductor", "--captures", str(captures),
        "--device", "cpu", "--small", "--no-store", "--output", str(out),
        timeout=900,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "2 of 3 samples accepted" in output, output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(row["problem"] for row in rows) == [MATMUL, CUMSUM]
    for row in rows:
        assert "class ModelNew(Model)" in row["answer"] and row["teacher"] == "inductor"
    [refused] = [json.loads(line) for line in (tmp_path / "sft.rejected.jsonl").read_text().splitlines()]
    assert refused["problem"] == CONVOLUTION and refused["stage"] == "teacher"
    assert "extern_kernels.convolution" in refused["reason"]
    summary = json.loads((tmp_path / "sft.summary.json").read_text())
    assert summary["teacher"] == "inductor" and summary["accepted"] == 2


def test_a_capture_cannot_smuggle_code_into_the_grid_arithmetic() -> None:
    record = capture(CUMSUM)
    [meta] = record["kernels"].values()
    meta["grid"]["x"] = "__import__('os').getpid()"
    with pytest.raises(StandaloneError, match="not grid arithmetic"):
        standalone_candidate(record, problem_source(CUMSUM))
    meta["grid"]["x"] = "max(-((xnumel) // -(8)), 1)"
    assert "triton_red_fused_cumsum_0[5, 1, 1](" in standalone_candidate(record, problem_source(CUMSUM))


def test_the_graphs_own_module_is_chosen_among_the_modules_autotuning_generated() -> None:
    from kforge.train.inductor_capture import CaptureError, graph_module

    own = "def call(args):\n    pass\n"
    benchmark = "def benchmark_subgraph():\n    pass\n"
    assert graph_module([{"source": own}], [benchmark, own, benchmark]) == own
    assert graph_module([{"source": None}], [own]) == own  # an older torch names no source: the only one
    with pytest.raises(CaptureError, match="not known"):
        graph_module([{"source": None}], [own, benchmark])
    with pytest.raises(CaptureError, match="ran 2 graph"):
        graph_module([{"source": own}, {"source": own}], [own])


def test_parameters_of_numbered_children_are_read_through_get_submodule(tmp_path: Path) -> None:
    # KernelBench's level-3 models keep their layers in nn.Sequential: state names like `layers.0.weight`
    # are no attribute path (`self.layers.0` is a syntax error), so the rewrite reaches them by name.
    record = capture(MATMUL)
    for item in record["inputs"]:
        if item["kind"] == "state":
            item["name"] = item["name"].replace("linear.", "layers.0.")
    source = (
        problem_source(MATMUL)
        .replace(
            "self.linear = nn.Linear(in_features, out_features, dtype=torch.float16)",
            "self.layers = nn.Sequential(nn.Linear(in_features, out_features, dtype=torch.float16))",
        )
        .replace("self.linear(x)", "self.layers(x)")
    )
    candidate = standalone_candidate(record, source)
    assert "self.get_submodule('layers.0').weight" in candidate
    assert "self.get_submodule('layers.0').bias" in candidate
    problem = tmp_path / "problem.py"
    problem.write_text(source)
    (tmp_path / "candidate.py").write_text(candidate)
    run = run_eval(problem, tmp_path / "candidate.py", "--no-generalisation")
    assert run.verdict["outcome"] == "accepted", run.stdout[-3000:]

    record["inputs"][0]["name"] = "layers.0.we-ight"
    with pytest.raises(StandaloneError, match="not reachable as an attribute path"):
        standalone_candidate(record, source)
