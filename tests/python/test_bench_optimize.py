"""bench/optimize's summary: the speedup a kernel at its roofline counts with, the main kernel of a
profile, and the targets read off the merged results (the GPU run itself: docs/benchmarks.md)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import REPO

SCRIPT = REPO / "bench" / "optimize" / "bench_optimize.py"


def bench() -> Any:
    if str(SCRIPT.parent) not in sys.path:
        sys.path.insert(0, str(SCRIPT.parent))
    return importlib.import_module("bench_optimize")


def report(start: float | None, best: float | None, bound: str, dram: float, stop: str) -> dict[str, Any]:
    return {
        "start_ms": start,
        "best_ms": best,
        "speedup_over_start": start / best if start and best else None,
        "stop_reason": stop,
        "evaluations": 10,
        "roofline_before": 0.5,
        "roofline_after": 0.9,
        "profile_before": {"kernels": [{"total_seconds": 1.0, "roofline": {"bound": bound}}]},
        "profile_after": {
            "kernels": [
                {"total_seconds": 0.1, "roofline": {"dram_fraction": 0.1}},
                {"total_seconds": 2.0, "roofline": {"dram_fraction": dram}},
            ]
        },
    }


def test_the_table_counts_an_untuned_kernel_at_its_roofline_as_one_and_checks_the_targets(
    tmp_path: Path,
) -> None:
    module = bench()
    at_roofline = "its kernels already run at 97% of the roofline (tuning stops at 95%)"
    runs = {
        "a_matmul": (report(4.0, 1.0, "compute-bound", 0.3, "budget"), 1.5, 1.2),
        "b_copy": (report(None, None, "memory-bound", 0.97, at_roofline), 1.0, 0.9),
        "c_norm": (report(1.0, 1.0, "memory-bound", 0.7, "no improvement"), 0.8, 0.7),
    }
    rows = [
        module.row_of(name, {"exit": 0, "seconds": 1, "report": result}, eager, compiled)
        for name, (result, eager, compiled) in runs.items()
    ]
    assert rows[0]["dram_fraction_after"] == 0.3, "the main kernel is the one with most of the time"
    assert rows[1]["speedup_over_baseline"] == 1.0
    (tmp_path / "results.json").write_text(json.dumps({"rows": rows}))
    table = subprocess.run(
        [sys.executable, str(SCRIPT), "table", str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout
    assert "| a_matmul | compute-bound | 4.0000 | 1.0000 | 4.00 | 1.50 | 1.20 |" in table
    assert "geometric mean over the baseline kernels: 1.59x (target 1.76x: not met) over 3 kernels" in table
    assert "faster than torch.compile: 1 of 3" in table
    assert "at ≥ 80% of DRAM bandwidth after tuning: 1 of 2" in table


def test_a_suite_lists_problem_folders_and_kernel_mode_files_with_their_arguments(tmp_path: Path) -> None:
    (tmp_path / "01_add").mkdir()
    (tmp_path / "01_add" / "problem.py").write_text("")
    (tmp_path / "01_add" / "solution.py").write_text("")
    (tmp_path / "scale.py").write_text("def scale(x):\n    pass\n")
    (tmp_path / "scale.inputs.json").write_text("{}")
    (tmp_path / "fill.py").write_text("# kforge-entry: fill_out\n# kforge-writes: 1,2\n")
    items = bench().suite_items(tmp_path)
    assert list(items) == ["01_add", "fill", "scale"]
    assert items["01_add"] == [
        "-p",
        str(tmp_path / "01_add" / "problem.py"),
        "--from",
        str(tmp_path / "01_add" / "solution.py"),
    ]
    assert items["scale"] == [
        "--kernel",
        str(tmp_path / "scale.py"),
        "--entry",
        "scale",
        "--inputs",
        str(tmp_path / "scale.inputs.json"),
    ]
    assert items["fill"] == ["--kernel", str(tmp_path / "fill.py"), "--entry", "fill_out", "--writes", "1,2"]
