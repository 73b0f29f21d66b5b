"""`kforge knobs`: the knobs the tuner would search, and a candidate written with chosen values. The
program-order rewrite is checked here for what the C++ tests cannot run: the emitted index arithmetic
is a permutation of every grid, and a reordered matmul is accepted by the verifier on the interpreter."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from types import SimpleNamespace

from conftest import REPO, run_eval, run_kforge

MATMUL_2D = REPO / "tests" / "data" / "optimize" / "matmul_fp16_2d_grid.py"
MATMUL_PROBLEM = REPO / "problems" / "baseline" / "07_matmul_fp16" / "problem.py"


def knobs(*args: str) -> tuple[int, str, str]:
    run = run_kforge("knobs", *args)
    return run.returncode, run.stdout, run.stderr


def test_the_list_names_each_knob_with_its_kind_value_and_choices() -> None:
    code, out, err = knobs("--candidate", str(MATMUL_2D), "--json")
    assert code == 0, err
    listed = json.loads(out)
    by_name = {knob["name"]: knob for knob in listed["knobs"]}
    assert by_name["program_order"]["kind"] == "program_order"
    assert by_name["program_order"]["value"] == 0
    assert by_name["program_order"]["choices"] == [0, 1, 4, 8, 16]
    assert by_name["program_order"]["kernels"] == ["matmul_kernel"]
    assert by_name["BLOCK_M"]["value"] == 128
    assert by_name["num_stages"]["value"] == 3
    assert listed["fixed"] == []

    code, out, _ = knobs("--candidate", str(MATMUL_2D))
    assert code == 0
    assert re.search(r"program_order = 0  \(program_order; program order of matmul_kernel at \d+:\d+", out)


def _prologue(source: str) -> str:
    lines = [line.strip() for line in source.splitlines() if line.strip().startswith("_kf_")]
    assert len(lines) == 8, source
    return "\n".join(lines)


def test_the_reordered_ids_are_a_permutation_of_every_grid(tmp_path: Path) -> None:
    for group in (1, 4, 8, 16):
        out = tmp_path / f"order{group}.py"
        setting = f"program_order={group}"
        code, _, err = knobs("--candidate", str(MATMUL_2D), "--set", setting, "--output", str(out))
        assert code == 0, err
        prologue = compile(_prologue(out.read_text()), "prologue", "exec")
        for rows, columns in itertools.product(range(1, 19), range(1, 12)):
            seen = set()
            for axis0, axis1 in itertools.product(range(rows), range(columns)):
                tl = SimpleNamespace(
                    num_programs=lambda axis, r=rows, c=columns: (r, c)[axis],
                    program_id=lambda axis, a=axis0, b=axis1: (a, b)[axis],
                    minimum=min,
                )
                scope: dict[str, object] = {"tl": tl}
                exec(prologue, scope)  # the emitted integer arithmetic, on plain ints
                seen.add((scope["_kf_pid_0"], scope["_kf_pid_1"]))
            assert seen == set(itertools.product(range(rows), range(columns))), (group, rows, columns)


def test_a_reordered_matmul_is_accepted_by_the_verifier(tmp_path: Path) -> None:
    candidate = tmp_path / "reordered.py"
    code, _, err = knobs(
        "--candidate",
        str(MATMUL_2D),
        *("--set", "BLOCK_M=16", "--set", "BLOCK_N=16", "--set", "BLOCK_K=16", "--set", "program_order=4"),
        "--output",
        str(candidate),
    )
    assert code == 0, err
    assert "pid_m = _kf_pid_0" in candidate.read_text()
    # The small sizes (M 67, N 45) give a 5 x 3 grid of 16 x 16 tiles: one full group of 4 rows, one of 1.
    run = run_eval(MATMUL_PROBLEM, candidate)
    assert run.verdict["outcome"] == "accepted", run.stdout


SCALE_SHIFT = REPO / "problems" / "starter" / "33_scale_shift_constants"


def test_launch_options_left_out_are_knobs_and_the_candidate_with_them_is_accepted(tmp_path: Path) -> None:
    # Its launch gives neither num_warps nor num_stages, as most real kernels' launches do.
    code, out, err = knobs("--candidate", str(SCALE_SHIFT / "solution.py"), "--json")
    assert code == 0, err
    absent = {knob["name"]: knob for knob in json.loads(out)["knobs"] if "not given" in knob["where"]}
    assert absent["num_warps"]["value"] == 4 and absent["num_stages"]["value"] == 3, absent
    candidate = tmp_path / "with_options.py"
    settings = ("--set", f"{absent['num_warps']['index']}=2", "--set", f"{absent['num_stages']['index']}=1")
    code, _, err = knobs(
        "--candidate", str(SCALE_SHIFT / "solution.py"), *settings, "--output", str(candidate)
    )
    assert code == 0, err
    assert "BLOCK=1024, num_warps=2, num_stages=1)" in candidate.read_text()
    run = run_eval(SCALE_SHIFT / "problem.py", candidate)
    assert run.verdict["outcome"] == "accepted", run.stdout


def test_bad_settings_are_usage_errors_that_say_what_to_do(tmp_path: Path) -> None:
    cases = {
        "program_order=3": "is not one of its choices",
        "nonsense=4": "0 knobs have that name",
        "BLOCK_M": "expected KNOB=VALUE",
        "BLOCK_M=big": "the value is not an integer",
        "99=4": "the candidate has",
    }
    for setting, message in cases.items():
        code, _, err = knobs("--candidate", str(MATMUL_2D), "--set", setting)
        assert code == 2, setting
        assert message in err, (setting, err)
    broken = tmp_path / "broken.py"
    broken.write_text("def broken(:\n")
    code, _, err = knobs("--candidate", str(broken))
    assert code == 2
    assert "kforge knobs:" in err
    code, _, err = knobs("--candidate", str(tmp_path / "missing.py"))
    assert code == 2
