"""Ctrl-C, SIGTERM or SIGHUP in the middle of a run stop kforge cleanly: every worker is gone, nothing of
it is left in /dev/shm or the temporary folder, it says it was interrupted and exits 128 + the signal.
What a run killed outright (SIGKILL) left behind is swept by the next kforge."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO, STARTER, kforge_binary, run_kforge

SHM = Path("/dev/shm")
SOFTMAX = STARTER / "04_softmax"


def own_entries(folder: Path, pid: int) -> list[Path]:
    return sorted(folder.glob(f"kforge-{pid}-*")) if folder.is_dir() else []


def processes_inside(folder: Path) -> list[int]:
    """Processes whose working directory is inside `folder` (kforge's workers run in their scratch)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if cwd.startswith(str(folder)):
            found.append(int(entry.name))
    return found


def start(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], Path]:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    environment = {**os.environ, "TMPDIR": str(scratch), "CUDA_VISIBLE_DEVICES": ""}
    process = subprocess.Popen(
        [str(kforge_binary()), *args],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    return process, scratch


def wait_for_workers(process: subprocess.Popen[str], scratch: Path, count: int) -> None:
    """Until `count` worker processes run inside the run's scratch folder (the run is mid-way)."""
    deadline = time.monotonic() + 120
    while len(processes_inside(scratch)) < count:
        assert process.poll() is None, f"kforge ended before it was interrupted:\n{process.communicate()}"
        assert time.monotonic() < deadline, "no workers started within 120 s"
        time.sleep(0.2)
    time.sleep(1.0)  # let them get going: the signal lands mid-call, not at start-up


def interrupt_and_check(process: subprocess.Popen[str], scratch: Path, signal_number: int) -> str:
    assert own_entries(SHM, process.pid) or own_entries(scratch, process.pid), "the run made no scratch"
    process.send_signal(signal_number)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signal_number, (process.returncode, stdout, stderr)
    assert f"interrupted by {signal.Signals(signal_number).name}" in stderr, stderr
    assert own_entries(SHM, process.pid) == [], "shared memory left in /dev/shm"
    assert list(scratch.iterdir()) == [], f"left in the temporary folder: {list(scratch.iterdir())}"
    deadline = time.monotonic() + 10
    while processes_inside(scratch) and time.monotonic() < deadline:
        time.sleep(0.1)  # SIGKILLed workers are gone at once; their reaping by init may take a moment
    assert processes_inside(scratch) == [], "a worker outlived kforge"
    return stderr


@pytest.mark.skipif(not SHM.is_dir(), reason="no /dev/shm")
def test_ctrl_c_during_a_single_eval_leaves_nothing(tmp_path: Path) -> None:
    # The full size on the interpreter: correctness takes minutes, so the signal lands inside a trial.
    process, scratch = start(
        tmp_path, "eval", "-p", str(SOFTMAX / "problem.py"), "-c", str(SOFTMAX / "solution.py"),
        "--device", "cpu", "--no-store",
    )  # fmt: skip
    wait_for_workers(process, scratch, 2)  # the judge and the candidate
    interrupt_and_check(process, scratch, signal.SIGINT)


@pytest.mark.skipif(not SHM.is_dir(), reason="no /dev/shm")
def test_sigterm_during_a_batch_leaves_nothing_and_keeps_the_finished_results(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    solution = (SOFTMAX / "solution.py").read_text()
    line = json.dumps({"problem": "04_softmax", "code": solution}) + "\n"
    samples.write_text(line * 3)
    process, scratch = start(
        tmp_path, "eval", "--suite", str(STARTER), "--samples", str(samples), "--device", "cpu",
        "--no-store", "--results", str(tmp_path / "results.jsonl"), "-j", "2",
    )  # fmt: skip
    wait_for_workers(process, scratch, 2)
    interrupt_and_check(process, scratch, signal.SIGTERM)


@pytest.mark.skipif(not SHM.is_dir(), reason="no /dev/shm")
def test_sighup_during_a_corpus_bench_leaves_nothing(tmp_path: Path) -> None:
    process, scratch = start(
        tmp_path, "bench", "--corpus", str(REPO / "tests" / "corpus"), "--only", "honest", "--device", "cpu",
        "--full-size", "-j", "2",
    )  # fmt: skip
    wait_for_workers(process, scratch, 2)
    interrupt_and_check(process, scratch, signal.SIGHUP)


def unused_pid() -> int:
    for pid in range(4_194_000, 1000, -1):
        if not Path(f"/proc/{pid}").exists():
            return pid
    raise AssertionError("no free pid found")


def test_what_a_killed_run_left_is_swept_by_the_next_one(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    dead = unused_pid()
    left = scratch / f"kforge-{dead}-AbCdEf"
    fresh = scratch / f"kforge-{dead}-GhIjKl"
    locks = scratch / "kforge-locks"
    for folder in (left, fresh, locks):
        (folder / "transfer").mkdir(parents=True)
        (folder / "transfer" / "buffer.bin").write_bytes(b"\0" * 1024)
    hour_ago = time.time() - 3600
    for folder in (left, locks):
        os.utime(folder, (hour_ago, hour_ago))
    shm_left = SHM / f"kforge-{dead}-MnOpQr"
    if SHM.is_dir():
        shm_left.mkdir()
        os.utime(shm_left, (hour_ago, hour_ago))
    solution = str(REPO / "problems" / "baseline" / "01_gelu_erf" / "solution.py")
    result = subprocess.run(
        [str(kforge_binary()), "knobs", "-c", solution],
        env={**os.environ, "TMPDIR": str(scratch)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert not left.exists() and not shm_left.exists(), "a dead kforge's scratch is swept"
    assert fresh.exists(), "a folder touched within the last minute is left alone"
    assert locks.exists(), "only kforge-<pid>-* folders are scratch"


def listening_service(tmp_path: Path) -> subprocess.Popen[str]:
    """`kforge serve` on the CPU, once it says it is listening."""
    process = subprocess.Popen(
        [str(kforge_binary()), "serve", "--port", "0", "--device", "cpu", "--no-store",
         "--problems-dir", str(tmp_path / "problems")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stderr is not None
    lines = [process.stderr.readline()]
    while lines[-1] and "listening on" not in lines[-1]:  # a note on the token file comes first
        lines.append(process.stderr.readline())
    assert "listening on" in lines[-1], lines
    return process


def test_serve_drains_on_sighup_too(tmp_path: Path) -> None:
    process = listening_service(tmp_path)
    process.send_signal(signal.SIGHUP)
    _, stderr = process.communicate(timeout=60)
    assert "SIGHUP received" in stderr and process.returncode == 0, stderr


def test_a_fault_of_kforge_itself_says_where_and_keeps_its_exit_status(tmp_path: Path) -> None:
    process = listening_service(tmp_path)
    process.send_signal(signal.SIGSEGV)  # as a fault of its own would arrive
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGSEGV, stderr
    assert "kforge: internal error: SEGV" in stderr, stderr
    frames = [text for text in stderr.splitlines() if "[0x" in text]
    assert frames and all("kforge" in frame or ".so" in frame for frame in frames[:2]), stderr


def test_an_uninterrupted_run_still_exits_with_its_verdict(tmp_path: Path) -> None:
    result = run_kforge(
        "eval", "-p", str(SOFTMAX / "problem.py"), "-c", str(SOFTMAX / "solution.py"), "--device", "cpu",
        "--small", "--trials", "1", "--no-store",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "interrupted" not in result.stderr
