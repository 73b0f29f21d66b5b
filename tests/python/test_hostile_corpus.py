"""The hostile corpus (tests/corpus) through `kforge bench`: every exploit caught on its documented
path, every honest candidate accepted. CPU interpreter, problems' small sizes; GPU-only entries are
run by scripts/gpu-check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, computed_once, run_kforge

CORPUS = REPO / "tests" / "corpus"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return computed_once(tmp_path_factory, "hostile-corpus", run_corpus)


def run_corpus(folder: Path) -> dict[str, Any]:
    """The honest candidates at the default five trials (each one more chance of a false positive), the
    exploits at two: every exploit was caught on the same path, with the same detail, as with five."""
    classes = sorted({entry["class"] for entry in manifest()} - {"honest"})
    honest = run_bench(folder / "honest.json", "--only", "honest")
    exploits = run_bench(folder / "exploits.json", "--trials", "2", *(f"--only={name}" for name in classes))
    return {
        "entries": honest["entries"] + exploits["entries"],
        "exit_code": max(honest["exit_code"], exploits["exit_code"]),
        "table": honest["table"] + exploits["table"],
    }


def run_bench(output: Path, *selection: str) -> dict[str, Any]:
    result = run_kforge(
        "bench", "--corpus", str(CORPUS), "--device", "cpu", "-j", "2", "--timeout", "60", "-o", str(output),
        *selection, timeout=1800,
    )  # fmt: skip
    assert output.exists(), f"kforge bench wrote no report (exit {result.returncode}):\n{result.stderr}"
    parsed: dict[str, Any] = json.loads(output.read_text())
    parsed["exit_code"] = result.returncode
    parsed["table"] = result.stdout
    return parsed


def manifest() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads((CORPUS / "manifest.json").read_text())
    return entries


def test_every_entry_gets_its_documented_outcome(report: dict[str, Any]) -> None:
    bad = [e for e in report["entries"] if e["result"] not in ("caught", "passed", "skipped")]
    listing = "\n".join(f"{e['result']}: {e['candidate']} ({e['profile']}): {e['detail']}" for e in bad)
    assert not bad, f"{len(bad)} corpus entries went wrong:\n{listing}\n{report['table']}"
    assert report["exit_code"] == 0


def test_every_manifest_entry_is_reported(report: dict[str, Any]) -> None:
    reported = {(e["candidate"], e["profile"]) for e in report["entries"]}
    expected = {(e["candidate"], e.get("profile", "strict")) for e in manifest()}
    assert reported == expected
    skipped = {(e["candidate"], e["profile"]) for e in report["entries"] if e["result"] == "skipped"}
    gpu_only = {(e["candidate"], e.get("profile", "strict")) for e in manifest() if e.get("gpu_only")}
    assert skipped == gpu_only, "on the CPU exactly the gpu_only entries are skipped"


def test_honest_candidates_are_accepted(report: dict[str, Any]) -> None:
    honest = [e for e in report["entries"] if e["class"] == "honest"]
    assert len(honest) >= 20
    assert all(e["result"] == "passed" for e in honest)


def test_corpus_covers_every_exploit_class_and_stage() -> None:
    entries = manifest()
    classes = {e["class"] for e in entries} - {"honest"}
    folders = {p.name for p in (CORPUS / "exploits").iterdir() if p.is_dir()}
    assert classes == folders, "each exploit folder is a class with manifest entries"
    stages = {e["expect_stage"] for e in entries if e["expect"] == "rejected"}
    assert {"static", "correctness", "runtime", "performance"} <= stages
    for entry in entries:
        assert (CORPUS / entry["candidate"]).is_file(), entry["candidate"]
        assert entry["why"], entry["candidate"]


def test_corpus_files_are_all_in_the_manifest() -> None:
    listed = {e["candidate"] for e in manifest()}
    files = {
        str(p.relative_to(CORPUS))
        for p in CORPUS.rglob("*")
        if p.suffix in (".py", ".md") and p.parts[len(CORPUS.parts)] in ("exploits", "honest")
    }
    assert files == listed, f"unlisted: {sorted(files - listed)}; missing: {sorted(listed - files)}"


def test_bench_rejects_a_missing_corpus(tmp_path: Path) -> None:
    result = run_kforge("bench", "--corpus", str(tmp_path / "nowhere"), "--device", "cpu")
    assert result.returncode == 2
    assert "manifest.json" in result.stderr
