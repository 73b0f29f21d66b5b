"""Usage and environment errors exit 2 with a message that says what to do; nothing is left behind."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import STARTER, run_eval, run_kforge

SOFTMAX = STARTER / "04_softmax"


def test_missing_problem_file(tmp_path: Path) -> None:
    run = run_eval(tmp_path / "nope.py", SOFTMAX / "solution.py")
    assert run.exit_code == 2
    assert run.verdict["outcome"] == "error"
    assert run.verdict["error"]["kind"] == "usage"
    assert "does not exist" in run.verdict["error"]["message"]


def test_missing_candidate_file(tmp_path: Path) -> None:
    run = run_eval(SOFTMAX / "problem.py", tmp_path / "missing_candidate.py")
    assert run.exit_code == 2
    assert "candidate file" in run.verdict["error"]["message"]


def test_a_candidate_over_16_mib_is_a_rejection_not_a_usage_error(tmp_path: Path) -> None:
    """The candidate's size is the candidate's fault: exit 1 at the extract stage, with a check id."""
    candidate = tmp_path / "huge.py"
    solution = (SOFTMAX / "solution.py").read_text()
    candidate.write_text(solution + "\n#" + "x" * (16 * 1024 * 1024) + "\n")
    run = run_eval(SOFTMAX / "problem.py", candidate)
    assert run.exit_code == 1
    assert run.verdict["outcome"] == "rejected" and run.verdict["failed_stage"] == "extract"
    assert [f["rule"] for f in run.stage("extract")["findings"]] == ["candidate-too-large"]
    assert run.verdict["error"] is None


def test_a_problem_over_16_mib_stays_a_usage_error(tmp_path: Path) -> None:
    problem = tmp_path / "huge_problem.py"
    problem.write_text((SOFTMAX / "problem.py").read_text() + "\n#" + "x" * (16 * 1024 * 1024) + "\n")
    run = run_eval(problem, SOFTMAX / "solution.py")
    assert run.exit_code == 2
    assert run.verdict["error"]["kind"] == "usage" and "16 MiB" in run.verdict["error"]["message"]


def test_problem_with_syntax_error_is_a_problem_error(tmp_path: Path) -> None:
    problem = tmp_path / "broken_problem.py"
    problem.write_text("import torch\nclass Model(:\n")
    run = run_eval(problem, SOFTMAX / "solution.py", "--no-small")
    assert run.exit_code == 2
    assert run.verdict["error"]["kind"] == "problem"
    assert "SyntaxError" in run.verdict["error"]["message"]


def test_problem_without_get_inputs(tmp_path: Path) -> None:
    problem = tmp_path / "incomplete.py"
    problem.write_text(
        "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"[:200]
    )
    run = run_eval(problem, SOFTMAX / "solution.py", "--no-small")
    assert run.exit_code == 2
    assert "get_inputs" in run.verdict["error"]["message"]


def test_unknown_size_constant() -> None:
    run = run_eval(SOFTMAX / "problem.py", SOFTMAX / "solution.py", "--size", "NO_SUCH_CONSTANT=4")
    assert run.exit_code == 2
    assert "NO_SUCH_CONSTANT" in run.verdict["error"]["message"]


def test_small_without_table(tmp_path: Path) -> None:
    problem = tmp_path / "no_small.py"
    problem.write_text((SOFTMAX / "problem.py").read_text().replace("KFORGE_SMALL", "OTHER_NAME"))
    run = run_eval(problem, SOFTMAX / "solution.py")
    assert run.exit_code == 2
    assert "KFORGE_SMALL" in run.verdict["error"]["message"]


def test_gpu_requested_without_gpu() -> None:
    run = run_eval(SOFTMAX / "problem.py", SOFTMAX / "solution.py", device="cuda:0")
    assert run.exit_code == 2
    assert run.verdict["error"]["kind"] == "environment"
    assert "--device cpu" in run.verdict["error"]["message"]


def test_bad_command_line() -> None:
    assert run_kforge("eval", "--problem", "x.py").returncode == 2
    assert run_kforge("eval", "--bogus").returncode == 2
    assert run_kforge("frobnicate").returncode == 2
    assert run_kforge("eval", "-p", "a", "-c", "b", "--size", "broken").returncode == 2


def test_help_and_version() -> None:
    assert run_kforge("--help").returncode == 0
    version = run_kforge("--version")
    assert version.returncode == 0 and version.stdout.strip()


def test_output_file_holds_the_json_verdict(tmp_path: Path) -> None:
    out = tmp_path / "verdict.json"
    result = run_kforge(
        "eval",
        "-p",
        str(SOFTMAX / "problem.py"),
        "-c",
        str(SOFTMAX / "solution.py"),
        "--device",
        "cpu",
        "--small",
        "--trials",
        "1",
        "--output",
        str(out),
    )
    assert result.returncode == 0, result.stdout
    assert "ACCEPTED" in result.stdout
    assert json.loads(out.read_text())["outcome"] == "accepted"
