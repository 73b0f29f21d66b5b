"""`kforge data prompts`: the RL prompt dataset of a suite, in the JSONL and Parquet shapes TRL and
verl load, with the problem ids `kforge serve` gives the same sources."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
from conftest import STARTER, run_kforge

PROBLEMS = sorted(path.name for path in STARTER.iterdir() if (path / "problem.py").is_file())


def shown_to_a_model(source: str) -> str:
    """The problem without its KFORGE_SMALL line, the comment above it and one of the blank lines around."""
    shown = re.sub(r"(?m)^(?:#.*\n)*KFORGE_SMALL = \{[^}]*\}\n\n", "", source)
    assert shown != source and "KFORGE" not in shown
    return shown


def service_id(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def test_jsonl_rows_carry_the_prompt_the_id_and_the_columns_trl_and_verl_read(tmp_path: Path) -> None:
    out = tmp_path / "prompts.jsonl"
    result = run_kforge("data", "prompts", "--suite", str(STARTER), "--output", str(out))
    assert result.returncode == 0, result.stderr
    assert f"{len(PROBLEMS)} prompts" in result.stdout
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["problem"] for row in rows] == PROBLEMS
    for index, row in enumerate(rows):
        source = (STARTER / row["problem"] / "problem.py").read_text()
        assert row["problem_id"] == service_id(source), "the id POST /v1/problems gives this source"
        assert row["reference_source"] == source
        assert row["data_source"] == "kforge/starter" and row["ability"] == "triton-kernel"
        assert row["reward_model"] == {"style": "rule", "ground_truth": row["problem_id"]}
        assert row["extra_info"] == {
            "problem_id": row["problem_id"], "problem": row["problem"], "reference_source": source,
            "index": index,
        }  # fmt: skip
        [message] = row["prompt"]
        assert message["role"] == "user"
        assert shown_to_a_model(source) in message["content"] and "ModelNew" in message["content"]
        assert "KFORGE" not in message["content"], "kforge's own test sizes are not part of the task"
        assert "{problem_source}" not in message["content"]


def test_parquet_has_the_same_rows_and_a_custom_instruction_and_system_message(tmp_path: Path) -> None:
    instruction = tmp_path / "instruction.txt"
    instruction.write_text("Speed up {problem_name}:\n{problem_source}Answer in one python block.\n")
    system = tmp_path / "system.txt"
    system.write_text("You write Triton kernels.")
    out = tmp_path / "prompts.parquet"
    result = run_kforge(
        "data", "prompts", "--suite", str(STARTER), "--output", str(out), "--instruction", str(instruction),
        "--system", str(system), "--data-source", "mine/train",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = pq.read_table(out).to_pylist()
    assert len(rows) == len(PROBLEMS) and rows[0]["data_source"] == "mine/train"
    first = rows[0]
    source = shown_to_a_model((STARTER / first["problem"] / "problem.py").read_text())
    assert first["prompt"] == [
        {"role": "system", "content": "You write Triton kernels."},
        {"role": "user", "content": f"Speed up {first['problem']}:\n{source}Answer in one python block.\n"},
    ]
    assert not list(tmp_path.glob("*.partial")), "no staging file is left behind"


def test_bad_input_gets_a_clear_error_and_no_file(tmp_path: Path) -> None:
    out = tmp_path / "prompts.jsonl"
    missing = run_kforge("data", "prompts", "--suite", str(tmp_path / "nowhere"), "--output", str(out))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    template = tmp_path / "no-placeholder.txt"
    template.write_text("Write a kernel.\n")
    bad = run_kforge(
        "data", "prompts", "--suite", str(STARTER), "--output", str(out), "--instruction", str(template)
    )
    assert bad.returncode == 2 and "{problem_source}" in bad.stderr
    nothing = run_kforge("data", "prompts", "--output", str(out))
    assert nothing.returncode == 2 and "--suite" in nothing.stderr
    assert not out.exists()
