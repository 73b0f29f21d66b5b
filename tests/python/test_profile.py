"""`kforge profile`: what it does without a GPU, with a candidate it must not profile, and the profile
target's SASS reading. The GPU path (Nsight Compute, Triton's compiled kernels, the roofline) runs on
the device: `scripts/gpu-check profile` (docs/profile.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import CANDIDATES, REPO, STARTER, run_kforge

GELU = STARTER / "02_gelu_tanh"

# Triton's disassembler (`CompiledKernel.asm["sass"]`): control bits, a tab, the instruction.
TRITON_SASS = """Function:matmul_kernel
--:-:-:Y:4\tS2R R0, SR_CTAID.X;
01:-:0:Y:2\t@!P0 LDG.E.128 R4, desc[UR4][R2.64];
--:-:1:-:1\tLDG.E.U16 R8, desc[UR4][R10.64];
--:-:-:Y:8\tLDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR6][R4.64];
LBB0:
--:-:-:-:1\tHGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], RZ, !UPT;
--:-:-:-:1\tHGMMA.64x128x16.F32.BF16 R24, gdesc[UR12], R24;
--:-:-:Y:4\tSTG.E.64 desc[UR4][R6.64], R4;
--:-:-:Y:4\tEXIT;
"""

# cuobjdump -sass: offsets in comments.
CUOBJDUMP_SASS = """        /*0080*/                   LDG.E R4, desc[UR4][R2.64] ;
        /*0090*/              @P0 HMMA.16816.F32.BF16 R8, R12, R16, R8 ;
        /*00a0*/                   UTMALDG.2D [UR8], [UR4] ;
"""


def sass_summary(sass: str) -> dict[str, Any]:
    """kforge.worker.profiler.sass_summary, run where the worker package is importable."""
    code = (
        "import json, sys; from kforge.worker.profiler import sass_summary; "
        "print(json.dumps(sass_summary(sys.stdin.read())))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], input=sass, capture_output=True, text=True, timeout=120,
        check=True, cwd=REPO / "python",
    )  # fmt: skip
    return dict(json.loads(run.stdout))


def test_sass_summary_counts_access_widths_async_copies_and_tensor_cores() -> None:
    summary = sass_summary(TRITON_SASS)
    assert summary["instructions"] == 8
    assert summary["global_loads"] == 2
    assert summary["global_load_widths"] == {"128": 1, "32_or_less": 1}
    assert summary["global_store_widths"] == {"64": 1}
    assert summary["async_copies"] == 1
    assert summary["tensor_core"] == {"HGMMA": 2}
    other = sass_summary(CUOBJDUMP_SASS)
    assert other["global_load_widths"] == {"32_or_less": 1}
    assert other["tensor_core"] == {"HMMA": 1}
    assert other["tma_copies"] == 1
    assert sass_summary("no instructions here")["instructions"] == 0


def test_profile_on_cpu_gives_the_verdict_and_says_what_it_cannot_measure(tmp_path: Path) -> None:
    output = tmp_path / "profile.json"
    run = run_kforge(
        "profile", "-p", str(GELU / "problem.py"), "-c", str(GELU / "solution.py"),
        "--device", "cpu", "--small", "--timeout", "60", "--json", "--output", str(output),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert document == json.loads(output.read_text())
    assert document["schema"] == "kforge.profile/1"
    assert document["verdict"]["outcome"] == "accepted"
    assert document["device"]["device"] == "cpu"
    assert document["kernels"] == []
    assert document["ncu"]["used"] is False
    assert any("no GPU" in note for note in document["notes"])
    table = run_kforge(
        "profile", "-p", str(GELU / "problem.py"), "-c", str(GELU / "solution.py"),
        "--device", "cpu", "--small", "--timeout", "60",
    )  # fmt: skip
    assert table.returncode == 0
    assert table.stdout.startswith("accepted")
    assert "note: no GPU" in table.stdout


def test_a_wrong_candidate_is_not_profiled() -> None:
    run = run_kforge(
        "profile", "-p", str(STARTER / "04_softmax" / "problem.py"),
        "-c", str(CANDIDATES / "nan_output.py"), "--device", "cpu", "--small", "--timeout", "60", "--json",
    )  # fmt: skip
    assert run.returncode == 1
    assert json.loads(run.stdout)["outcome"] == "rejected"
    assert "only an accepted candidate is profiled" in run.stderr


def test_missing_files_and_bad_options_are_usage_errors(tmp_path: Path) -> None:
    missing = run_kforge("profile", "-p", str(GELU / "problem.py"), "-c", str(tmp_path / "nope.py"), "--json")
    assert missing.returncode == 2
    assert "does not exist" in json.loads(missing.stdout)["error"]["message"]
    assert run_kforge("profile", "-p", str(GELU / "problem.py")).returncode == 2  # no --candidate
    bad_size = run_kforge(
        "profile", "-p", str(GELU / "problem.py"), "-c", str(GELU / "solution.py"), "--size", "N"
    )  # fmt: skip
    assert bad_size.returncode == 2
    assert "NAME=VALUE" in bad_size.stderr


def test_the_profile_target_refuses_the_cpu_with_a_reason(tmp_path: Path) -> None:
    result = tmp_path / "result.json"
    run = subprocess.run(
        [sys.executable, "-m", "kforge.worker.profiler", "--problem", str(GELU / "problem.py"),
         "--candidate", str(GELU / "solution.py"), "--device", "cpu", "--out", str(result)],
        capture_output=True, text=True, timeout=120, check=False, cwd=REPO / "python",
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    error = json.loads(result.read_text())["error"]
    assert error["kind"] == "usage"
    assert "CUDA device" in error["message"]
