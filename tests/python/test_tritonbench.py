"""TritonBench support (`kforge eval --tritonbench PATH --channel G|T [--samples ANSWERS]`) on the CPU, over
the self-written miniature checkout in tests/fixtures/tritonbench: TritonBench's call and execution
accuracy, kforge's verdict beside them, answer matching, and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import REPO, run_kforge

CHECKOUT = REPO / "tests" / "fixtures" / "tritonbench"
GOLD_G = CHECKOUT / "data" / "TritonBench_G_v1"


def tritonbench(*args: str) -> tuple[int, dict | None, str]:
    run = run_kforge("eval", "--device", "cpu", "--no-store", "--json", "--timeout", "120", *args)
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        report = None
    return run.returncode, report, run.stderr


def rows(report: dict) -> dict[str, dict]:
    return {item["name"]: item for item in report["items"]}


def test_channel_g_answers_get_tritonbench_metrics_and_kforge_verdicts(tmp_path: Path) -> None:
    output = tmp_path / "report.json"
    code, report, err = tritonbench(
        "--tritonbench",
        str(CHECKOUT),
        "--channel",
        "G",
        "--samples",
        str(CHECKOUT / "predictions_G.jsonl"),
        "--output",
        str(output),
    )
    assert code == 0, err
    assert report is not None and report["schema"] == "kforge.tritonbench/1"
    assert json.loads(output.read_text()) == report
    items = rows(report)
    assert set(items) == {"vector_scale_add", "row_softmax", "rms_norm_rows"}
    # The correct answer: runs, matches the gold values, accepted by kforge.
    good = items["vector_scale_add"]
    assert good["call"] and good["exec"], good
    assert good["entry"] == "vector_scale_add"
    assert good["verdict"]["outcome"] == "accepted"
    # The wrong answer runs (call) but its test values differ (exec), and kforge rejects it at correctness.
    wrong = items["row_softmax"]
    assert wrong["call"] and not wrong["exec"]
    assert "differ" in wrong["exec_reason"]
    assert wrong["verdict"]["failed_stage"] == "correctness"
    # The crashing answer fails the call with the answer's own error.
    crash = items["rms_norm_rows"]
    assert not crash["call"] and "_pick_num_warps" in crash["call_error"]
    assert crash["verdict"]["outcome"] == "rejected"
    metrics = report["tritonbench"]
    assert metrics["call_accuracy"] == 2 / 3
    assert metrics["execution_accuracy"] == 1 / 3
    assert report["kforge"]["accepted_rate"] == 1 / 3
    assert metrics["speedup"] is None  # no timing on the CPU
    assert report["unmatched"] == []


def test_channel_t_counts_a_torch_calling_answer_as_tritonbench_does_but_kforge_rejects_it() -> None:
    code, report, err = tritonbench(
        "--tritonbench", str(CHECKOUT), "--channel", "T", "--samples", str(CHECKOUT / "predictions_T.jsonl")
    )
    assert code == 0, err
    assert report is not None
    items = rows(report)
    assert items["scaled_gelu"]["exec"] and items["scaled_gelu"]["verdict"]["outcome"] == "accepted"
    cheat = items["row_l2_normalize"]
    assert cheat["call"] and cheat["exec"], "TritonBench's own checks see correct values"
    assert cheat["verdict"]["failed_stage"] == "static"
    assert "not launched" in json.dumps(cheat["verdict"]["stages"])
    assert report["tritonbench"]["execution_accuracy"] == 1.0
    assert report["kforge"]["accepted_rate"] == 0.5


def test_without_answers_the_gold_files_are_judged_as_their_own_answers() -> None:
    code, report, err = tritonbench(
        "--tritonbench", str(CHECKOUT), "--channel", "G", "--items", "row_softmax"
    )
    assert code == 0, err
    assert report is not None
    (item,) = report["items"]
    assert item["origin"] == "gold" and item["call"] and item["exec"]
    assert item["verdict"]["outcome"] == "accepted"


def test_a_folder_of_answers_and_an_answer_that_matches_no_item(tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    answers.mkdir()
    # A call-accuracy output file (answer, separator, test block): the test block in it is ignored.
    shutil.copy(GOLD_G / "vector_scale_add.py", answers / "vector_scale_add.py")
    (answers / "not_an_item.py").write_text("def f():\n    return 1\n")
    code, report, err = tritonbench(
        "--tritonbench", str(CHECKOUT), "--channel", "G", "--samples", str(answers)
    )
    assert code == 1, "an answer that matches no item is reported and fails the run"
    assert report is not None
    assert [item["name"] for item in report["items"]] == ["vector_scale_add"]
    assert report["items"][0]["exec"] and report["items"][0]["verdict"]["outcome"] == "accepted"
    assert len(report["unmatched"]) == 1 and "not_an_item" in report["unmatched"][0]
    assert "matches no item" in err


def test_hostile_answers_get_a_verdict_and_cannot_reach_the_gold(tmp_path: Path) -> None:
    gold_path = str(GOLD_G / "vector_scale_add.py")
    lines = [
        # Reads the gold file to copy its code: the sandbox keeps the checkout out of reach.
        {
            "file": "vector_scale_add.py",
            "predict": (
                "```python\nimport torch\n\ndef vector_scale_add(x, y, alpha):\n"
                f"    exec(open({gold_path!r}).read().split('#' * 146)[0], globals())\n"
                "    return globals()['vector_scale_add'](x, y, alpha)\n```"
            ),
        },
        # Exits with success (from a decorator: TritonBench-G's filter keeps functions) before the test
        # block runs: no result, so no call.
        {
            "file": "vector_scale_add.py",
            "predict": (
                "import os\nimport torch\n\ndef leave():\n    os._exit(0)\n\n"
                "@(lambda function: (leave(), function)[1])\n"
                "def vector_scale_add(x, y, alpha):\n    return x\n"
            ),
        },
        # Not Python at all.
        {"file": "vector_scale_add.py", "predict": "```python\ndef (:\n```"},
        {"file": "vector_scale_add.py", "predict": 7},
    ]
    samples = tmp_path / "hostile.jsonl"
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines) + "not json\n")
    code, report, err = tritonbench(
        "--tritonbench", str(CHECKOUT), "--channel", "G", "--samples", str(samples)
    )
    assert code == 1, err
    assert report is not None
    assert len(report["items"]) == 3 and len(report["unmatched"]) == 2
    reader, leaver, broken = report["items"]
    assert "Permission denied" in reader["call_error"], reader
    assert "no result" in leaver["call_error"], leaver
    assert "SyntaxError" in broken["call_error"], broken
    for item in report["items"]:
        assert not item["call"] and not item["exec"], item
        assert item["verdict"] is None or item["verdict"]["outcome"] != "accepted", item
    assert report["tritonbench"]["call_accuracy"] == 0.0


def test_a_gold_file_without_a_test_block_fails_the_call_instead_of_passing_it(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    shutil.copytree(CHECKOUT / "data", checkout / "data")
    gold = checkout / "data" / "TritonBench_G_v1" / "vector_scale_add.py"
    gold.write_text(gold.read_text().split("#" * 146)[0])
    code, report, err = tritonbench("--tritonbench", str(checkout), "--items", "vector_scale_add")
    assert code == 0, err
    assert report is not None
    (item,) = report["items"]
    assert not item["call"] and "no test block" in item["call_error"]
    assert item["verdict"] is None and "no test block" in item["verdict_error"]


def test_bad_usage_is_a_clear_error(tmp_path: Path) -> None:
    code, _, err = tritonbench("--channel", "T")
    assert code == 2 and "need --tritonbench PATH" in err
    code, _, err = tritonbench("--tritonbench", str(tmp_path))
    assert code == 2 and "is not a TritonBench checkout" in err
    code, _, err = tritonbench("--tritonbench", str(CHECKOUT), "--items", "nope")
    assert code == 2 and "no gold file nope.py" in err
    code, _, err = tritonbench("--tritonbench", str(CHECKOUT), "--kernel", str(GOLD_G / "row_softmax.py"))
    assert code == 2 and "without --problem" in err
