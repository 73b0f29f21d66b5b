"""A new user's first hour on a CPU machine (issue 30): the first command shows progress and finishes
fast, environment and input failures are errors that say so, and messages name the user's code.
Interrupts are in test_interrupts.py, the option vocabulary in test_cli_vocabulary.py."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from conftest import REPO, STARTER, kforge_binary, run_kforge

SOFTMAX = STARTER / "04_softmax"
KERNELS = REPO / "problems" / "kernels"
NO_GPU = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # --device auto lands on the CPU, as on a laptop

TINY_PROBLEM = """import torch
import torch.nn as nn

N = 96
{small}

class Model(nn.Module):
    def forward(self, x):
        return x * 2.0


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
"""
TINY_SOLUTION = """import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2.0, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        double_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
        return out
"""


def kforge(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """kforge as on a machine without a GPU."""
    return subprocess.run(
        [str(kforge_binary()), *args],
        env=NO_GPU,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def tiny(tmp_path: Path, small: bool) -> tuple[Path, Path]:
    problem = tmp_path / ("problem.py" if small else "problem_without_small.py")
    problem.write_text(TINY_PROBLEM.format(small='KFORGE_SMALL = {"N": 9}' if small else ""))
    solution = tmp_path / "solution.py"
    solution.write_text(TINY_SOLUTION)
    return problem, solution


# --- 1. the first command: small sizes on the interpreter, streamed output, progress -------------------


def test_the_readme_command_on_a_cpu_machine_runs_the_small_sizes_and_says_so() -> None:
    result = kforge("eval", "-p", str(SOFTMAX / "problem.py"), "-c", str(SOFTMAX / "solution.py"),
                    "--no-store", "--trials", "2")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("problem ") and lines[1].startswith("candidate ")
    assert "small sizes (KFORGE_SMALL)" in lines[2] and "--device cpu keeps the full size" in lines[2]
    assert "ACCEPTED" in lines[-1]


def test_auto_uses_the_small_sizes_an_explicit_cpu_keeps_the_users(tmp_path: Path) -> None:
    problem, solution = tiny(tmp_path, small=True)
    common = ["eval", "-p", str(problem), "-c", str(solution), "--no-store", "--trials", "1", "--json"]
    auto = kforge(*common)
    assert auto.returncode == 0, auto.stderr
    assert json.loads(auto.stdout)["problem"]["sizes"] == {"N": 9}
    assert "small sizes (KFORGE_SMALL)" in auto.stderr
    explicit = kforge(*common, "--device", "cpu")
    assert explicit.returncode == 0, explicit.stderr
    assert json.loads(explicit.stdout)["problem"]["sizes"] == {}, "no override: the full N = 96"
    assert "KFORGE_SMALL" not in explicit.stderr
    chosen = kforge(*common, "--size", "N=33")
    assert json.loads(chosen.stdout)["problem"]["sizes"] == {"N": "33"}, "the user's sizes win"


def test_a_problem_without_small_sizes_warns_that_the_interpreter_will_be_slow(tmp_path: Path) -> None:
    problem, solution = tiny(tmp_path, small=False)
    result = kforge("eval", "-p", str(problem), "-c", str(solution), "--no-store", "--trials", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    warning = result.stdout.splitlines()[2]
    assert warning.startswith("WARNING") and "full size" in warning and "--size NAME=VALUE" in warning


def read_until(stream: int, wanted: str, process: subprocess.Popen[bytes], limit_s: float = 180) -> str:
    """What `stream` (a file descriptor) gave until `wanted` appeared; fails if the process ended first."""
    seen = b""
    deadline = time.monotonic() + limit_s
    while wanted.encode() not in seen:
        assert process.poll() is None, f"kforge ended before printing {wanted!r}:\n{seen.decode()}"
        assert time.monotonic() < deadline, f"no {wanted!r} within {limit_s} s:\n{seen.decode()}"
        ready, _, _ = select.select([stream], [], [], 1.0)
        if ready:
            try:
                seen += os.read(stream, 4096)
            except OSError:  # a pty's reader gets EIO once the child is gone
                break
    return seen.decode(errors="replace")


def test_each_stage_is_printed_as_it_finishes_with_progress_on_a_terminal() -> None:
    # The full size on the interpreter takes minutes: everything checked here happens while it runs.
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [str(kforge_binary()), "eval", "-p", str(SOFTMAX / "problem.py"), "-c", str(SOFTMAX / "solution.py"),
         "--device", "cpu", "--no-store"],
        stdout=follower, stderr=follower, env=NO_GPU,
    )  # fmt: skip
    os.close(follower)
    try:
        text = read_until(leader, "trial 1/5", process)
        plain = re.sub(r"\x1b\[[0-9;]*m", "", text)  # without the colours
        assert "PASS static" in plain and "PASS compile" in plain, text
        assert plain.index("problem ") < plain.index("PASS extract") < plain.index("PASS compile"), text
        assert "\r\x1b[K" in text, "the progress line is redrawn in place"
        assert "correctness  trial 1/5" in text
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
        os.close(leader)
    assert process.returncode == 130


def test_without_a_terminal_the_stages_still_stream() -> None:
    process = subprocess.Popen(
        [str(kforge_binary()), "eval", "-p", str(SOFTMAX / "problem.py"), "-c", str(SOFTMAX / "solution.py"),
         "--device", "cpu", "--no-store"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=NO_GPU,
    )  # fmt: skip
    assert process.stdout is not None
    try:
        text = read_until(process.stdout.fileno(), "PASS compile", process)
        assert "\x1b[" not in text, "no colours or progress redraws into a pipe"
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)


# --- 3. environment and input failures are errors, not results ------------------------------------------


def one_problem_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(STARTER / "01_scaled_add", suite / "01_scaled_add")
    return suite


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_llm_teacher_is_an_error_not_zero_accepted(tmp_path: Path) -> None:
    result = kforge(
        "data", "sft", "--suite", str(one_problem_suite(tmp_path)), "--teacher", "llm",
        "--llm-url", f"http://127.0.0.1:{closed_port()}/v1", "--model", "m", "--samples-per-problem", "2",
        "--llm-timeout", "10", "--no-store", "--output", str(tmp_path / "sft.jsonl"),
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert "the teacher gave no sample for any of the 2" in result.stderr, result.stderr
    assert "samples accepted" not in result.stdout


def test_the_inductor_teacher_without_a_gpu_or_captures_is_an_error(tmp_path: Path) -> None:
    result = kforge(
        "data", "sft", "--suite", str(one_problem_suite(tmp_path)), "--teacher", "inductor", "--no-store",
        "--output", str(tmp_path / "sft.jsonl"),
    )  # fmt: skip
    assert result.returncode == 2
    assert "needs a GPU" in result.stderr and "--captures" in result.stderr, result.stderr


def test_unusable_sample_lines_are_input_errors_left_out_of_the_metrics(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    good = {"problem": "01_scaled_add", "code": (STARTER / "01_scaled_add" / "solution.py").read_text()}
    unknown = {"problem": "no_such_problem", "code": "x"}
    samples.write_text(json.dumps(good) + "\n" + "{not json\n" + json.dumps(unknown) + "\n")
    results = tmp_path / "results.jsonl"
    result = kforge(
        "eval", "--suite", str(STARTER), "--samples", str(samples), "--no-store", "--results", str(results),
        "--json", "--trials", "1",
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "input error: samples.jsonl line 2: the line is not valid JSON" in result.stderr
    assert "input error: samples.jsonl line 3" in result.stderr and "no_such_problem" in result.stderr
    assert "2 of 3 lines" in result.stderr and "left out of the metrics" in result.stderr
    metrics = json.loads(result.stdout)
    assert metrics["samples"] == 1 and metrics["pass_at_k"]["pass@1"] == 1.0, metrics
    assert "batch: 1 sample(s) on cpu" in result.stderr
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert sum("input_error" in line for line in lines) == 2 and len(lines) == 3


# --- 4. usage and environment errors say what is wrong, never "internal error" ---------------------------


def test_a_missing_file_is_one_line() -> None:
    result = run_kforge("eval", "-p", str(SOFTMAX / "problem.py"), "-c", "nope.py")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "kforge eval: candidate file nope.py does not exist or is not a regular file"
    ]


def test_a_missing_samples_file_and_a_missing_kernelbench_level_are_usage_errors(tmp_path: Path) -> None:
    missing = run_kforge("eval", "--suite", str(STARTER), "--samples", str(tmp_path / "none.jsonl"))
    assert missing.returncode == 2
    assert "kforge eval: cannot read the samples file" in missing.stderr and "internal" not in missing.stderr
    (tmp_path / "KernelBench" / "KernelBench" / "level1").mkdir(parents=True)
    level = run_kforge(
        "eval", "--kernelbench", str(tmp_path / "KernelBench"), "--level", "2", "--samples", str(tmp_path)
    )  # fmt: skip
    assert level.returncode == 2
    assert "no KernelBench level 2" in level.stderr and "internal" not in level.stderr, level.stderr


def test_a_device_typo_is_refused_before_anything_starts() -> None:
    result = run_kforge("eval", "-p", str(SOFTMAX / "problem.py"), "-c", str(SOFTMAX / "solution.py"),
                        "--device", "gpu")  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.startswith("--device: unknown device 'gpu'"), result.stderr
    assert "cuda:N" in result.stderr and result.stdout == ""


def test_serve_on_a_taken_port_says_so(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = kforge("serve", "--port", str(port), "--device", "cpu", "--no-store",
                        "--problems-dir", str(tmp_path), timeout=60)  # fmt: skip
    assert result.returncode == 2
    assert f"port {port}" in result.stderr and "--port 0" in result.stderr, result.stderr
    assert "internal" not in result.stderr


# --- 5. optimize --verify-only verifies every proposal and shows each verdict ---------------------------


def test_verify_only_with_the_tuner_verifies_the_first_rounds_proposals(tmp_path: Path) -> None:
    baseline = REPO / "problems" / "baseline" / "01_gelu_erf"
    result = kforge(
        "optimize", "-p", str(baseline / "problem.py"), "--from", str(baseline / "solution.py"),
        "--verify-only", "--no-store", "--budget", "4", "--out-dir", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    proposals = [attempt for attempt in report["attempts"] if attempt["round"] == 1]
    assert len(proposals) == 3, "the budget's four verdicts: the start and three proposals"
    assert all(attempt["accepted"] for attempt in proposals), proposals
    assert report["stop_reason"].startswith("verify-only: 3 of the first round's")
    shown = [line for line in result.stderr.splitlines() if line.startswith("  round 1 · tune · ")]
    assert len(shown) == 3 and all("→ accepted" in line for line in shown), result.stderr


# --- 6. messages name the user's code ------------------------------------------------------------------


def test_kernel_mode_names_the_users_wrapper(tmp_path: Path) -> None:
    source = (KERNELS / "scaled_add_relu.py").read_text()
    variant = tmp_path / "variant.py"
    [launch] = [line for line in source.splitlines() if line.startswith("    scaled_add_relu_kernel[")]
    variant.write_text(source.replace(launch, "    out = torch.relu(x + alpha * y)"))
    result = kforge(
        "eval", "--kernel", str(KERNELS / "scaled_add_relu.py"), "--entry", "scaled_add_relu",
        "--inputs", str(KERNELS / "scaled_add_relu.inputs.json"), "-c", str(variant), "--no-store",
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "not launched from scaled_add_relu" in result.stdout, result.stdout
    assert "ModelNew" not in result.stdout
    assert "the wrapper scaled_add_relu is the reference" in result.stdout.splitlines()[0]


def test_inputs_from_a_cuda_test_block_on_the_cpu_suggest_a_spec() -> None:
    result = kforge(
        "eval", "--kernel", str(KERNELS / "scaled_add_relu.py"), "--entry", "scaled_add_relu",
        "--inputs-from-test", "--no-store",
    )  # fmt: skip
    assert result.returncode == 2
    assert "needs a GPU" in result.stderr and "--inputs SPEC.json" in result.stderr, result.stderr


def test_tritonbench_names_the_device_and_the_gold_wrapper(tmp_path: Path) -> None:
    checkout = REPO / "tests" / "fixtures" / "tritonbench"
    result = kforge(
        "eval", "--tritonbench", str(checkout), "--channel", "T", "--samples",
        str(checkout / "predictions_T.jsonl"), "--no-store", "--timeout", "120",
        "--results", str(tmp_path / "results.jsonl"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("TritonBench-T on cpu:"), result.stdout
    assert "ModelNew" not in result.stdout + result.stderr


# --- 7. --only selects by class or file, and repeats add up --------------------------------------------


def tiny_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    for name in ("honest/two_pass.py", "exploits/torch-fallback/honest_looking.py"):
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SOFTMAX / "solution.py", corpus / name)
    entry = {"problem": "starter/04_softmax", "expect": "accepted", "gpu_only": True, "why": "fixture"}
    manifest = [
        {**entry, "candidate": "honest/two_pass.py", "class": "honest"},
        {**entry, "candidate": "exploits/torch-fallback/honest_looking.py", "class": "torch-fallback"},
    ]
    (corpus / "manifest.json").write_text(json.dumps(manifest))
    return corpus


def test_only_selects_a_class_not_names_that_contain_it_and_repeats_add_up(tmp_path: Path) -> None:
    corpus = tiny_corpus(tmp_path)
    base = ["bench", "--corpus", str(corpus), "--problems-root", str(REPO / "problems"), "--device", "cpu",
            "--json"]  # fmt: skip

    def selected(*only: str) -> list[str]:
        result = kforge(*base, *only)
        assert result.returncode == 0, result.stderr
        return sorted(row["candidate"] for row in json.loads(result.stdout)["entries"])

    assert selected("--only", "honest") == ["honest/two_pass.py"]
    assert len(selected("--only", "honest", "--only", "torch-fallback")) == 2
    assert selected("--only", "honest_looking.py") == ["exploits/torch-fallback/honest_looking.py"]
    unknown = kforge(*base, "--only", "hnest")
    assert unknown.returncode == 2 and "honest, torch-fallback" in unknown.stderr, unknown.stderr
