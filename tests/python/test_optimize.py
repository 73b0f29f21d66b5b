"""`kforge optimize` on a machine without a GPU: every way it cannot tune is a clear error with its exit
code, and the LLM proposer runs end to end against a scripted endpoint with --verify-only (every reply
verified, nothing timed). The tuning itself needs GPU timings: scripts/gpu-check optimize
(docs/optimize.md); the searches and the report are tested in C++
(ctest -R "KnobTuner|LlmSearch|LlmPrompt|OptimizeReport|TunableKnobs")."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import CANDIDATES, REPO, STARTER, run_kforge
from scripted_chat_endpoint import scripted_endpoint

ADD_MUL = REPO / "problems" / "baseline" / "02_fused_add_mul"


def optimize(*args: str) -> tuple[int, str]:
    run = run_kforge("optimize", "--device", "cpu", "--small", "--no-store", *args)
    return run.returncode, run.stdout + run.stderr


def test_an_accepted_start_on_the_cpu_is_not_tuned_and_says_why(tmp_path: Path) -> None:
    code, output = optimize(
        "-p", str(ADD_MUL / "problem.py"), "--from", str(ADD_MUL / "solution.py"), "--out-dir", str(tmp_path)
    )
    assert code == 2
    assert "tuning needs a GPU" in output
    assert "the start is accepted" in output


def test_a_rejected_start_is_not_tuned() -> None:
    problem = STARTER / "04_softmax" / "problem.py"
    code, output = optimize("-p", str(problem), "--from", str(CANDIDATES / "nan_output.py"))
    assert code == 1
    assert "the starting candidate is not accepted" in output


def test_usage_errors(tmp_path: Path) -> None:
    code, output = optimize("-p", str(ADD_MUL / "problem.py"), "--from", str(tmp_path / "missing.py"))
    assert code == 2
    assert "no starting candidate: cannot read" in output and "missing.py" in output
    # Without --from the start is the inductor teacher's rewrite, which needs a GPU (or a capture).
    code, output = optimize("-p", str(ADD_MUL / "problem.py"))
    assert code == 2
    assert "no starting candidate: the inductor teacher has none (environment:" in output, output
    start = ["-p", str(ADD_MUL / "problem.py"), "--from", str(ADD_MUL / "solution.py")]
    code, output = optimize(*start, "--proposers", "llm")
    assert code == 2
    assert "--proposers llm needs --llm-url" in output
    code, output = optimize(*start, "--proposers", "tune,magic")
    assert code == 2
    assert "unknown proposer 'magic'" in output
    code, output = optimize(*start, "--proposers", "tune,tune")
    assert code == 2
    assert "named twice" in output
    assert run_kforge("optimize", "-p", str(ADD_MUL / "problem.py")).returncode == 2  # no --from


SOLUTION = (ADD_MUL / "solution.py").read_text()
KERNEL_ONLY = SOLUTION[: SOLUTION.index("class ModelNew")]
BIGGER_BLOCK = SOLUTION.replace("BLOCK = 128", "BLOCK = 256")
NO_KERNEL = (
    KERNEL_ONLY
    + """class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return (x + y) * z
"""
)
ROUND_ONE = [
    f"Double the block.\n```python\n{BIGGER_BLOCK}```\n",
    "I would rather not.",
    f"Let PyTorch do it.\n```python\n{NO_KERNEL}```\n",
    "Fixed it:\n```python\nclass ModelNew(:\n```\n",
]


def llm_optimize(url: str, out: Path, *extra: str) -> tuple[int, str]:
    return optimize(
        "-p", str(ADD_MUL / "problem.py"), "--from", str(ADD_MUL / "solution.py"), "--out-dir", str(out),
        "--proposers", "llm", "--llm-url", url, "--model", "scripted", "--verify-only",
        "--llm-timeout", "20", *extra,
    )  # fmt: skip


def test_the_llm_proposer_verifies_every_reply_and_shows_the_verdicts_in_the_next_prompt(
    tmp_path: Path,
) -> None:
    # Round one's samples arrive in parallel, so each request is answered by its arrival index.
    with scripted_endpoint(
        lambda index, body: ROUND_ONE[index] if index < 4 else "No more ideas."
    ) as endpoint:
        code, output = llm_optimize(endpoint.url, tmp_path, "--samples-per-round", "4", "--patience", "2")
    assert code == 0, output
    assert "round 1 · llm · Double the block. → accepted" in output, "each verdict is shown as it comes"
    assert "round 1 · llm · Let PyTorch do it. → rejected at static" in output
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["proposers"] == ["llm"]
    assert report["stop_reason"] == "no improvement in 2 rounds"
    round_one = [attempt for attempt in report["attempts"] if attempt["round"] == 1]
    by_idea = {attempt["idea"]: attempt for attempt in round_one}
    assert by_idea["Double the block."]["accepted"], by_idea
    assert by_idea["Double the block."]["ms"] is None, "--verify-only times nothing"
    assert (tmp_path / by_idea["Double the block."]["file"]).read_text() == BIGGER_BLOCK
    assert "triton-kernel-launched" in by_idea["Let PyTorch do it."]["summary"]
    assert "no code taken from the reply" in by_idea["I would rather not."]["summary"]
    assert not by_idea["Fixed it:"]["accepted"]
    assert report["evaluations"] == 1 + 3, "the start and three replies with code; one had none"
    assert (tmp_path / "best.py").read_text() == SOLUTION, "without timing nothing replaces the start"

    prompts = endpoint.user_prompts()
    assert len(prompts) == 8, "four samples in each of the two rounds"
    assert "class Model(nn.Module)" in prompts[0] and "BLOCK = 128" in prompts[0]
    assert "Earlier attempts" in prompts[4]
    assert "Let PyTorch do it. -> rejected" in prompts[4] and "triton-kernel-launched" in prompts[4]
    assert "Double the block. -> accepted" in prompts[4]
    html = (tmp_path / "report.html").read_text()
    assert 'href="attempts/round-1-' in html


def test_an_llm_endpoint_that_does_not_answer_is_an_error_with_the_report_written(tmp_path: Path) -> None:
    with scripted_endpoint(lambda index, body: 401) as endpoint:
        code, output = llm_optimize(endpoint.url, tmp_path, "--samples-per-round", "2")
    assert code == 2
    assert "the LLM endpoint never answered" in output and "HTTP 401" in output
    report = json.loads((tmp_path / "report.json").read_text())
    assert "HTTP 401" in report["stop_reason"]
    assert (tmp_path / "best.py").read_text() == SOLUTION
