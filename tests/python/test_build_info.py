"""`kforge --version`: the version, the git commit the binary was built from and the build type, written
by cmake/build_info.cmake at build time ("unknown" outside a git checkout)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, run_kforge

SCRIPT = REPO / "cmake" / "build_info.cmake"


def version_lines() -> list[str]:
    run = run_kforge("--version")
    assert run.returncode == 0, run.stderr
    return run.stdout.strip().splitlines()


def test_version_names_the_release_the_commit_and_the_build_type() -> None:
    project_version = re.search(r"project\(kforge VERSION ([0-9.]+)", (REPO / "CMakeLists.txt").read_text())
    assert project_version, "CMakeLists.txt must declare the project's version"
    lines = version_lines()
    assert lines[0] == f"kforge {project_version.group(1)}"
    assert re.fullmatch(r"commit ([0-9a-f]{12}(-dirty)?|unknown)", lines[1]), lines
    assert lines[2].startswith("build ") and len(lines[2]) > len("build "), lines


def write_header(source_dir: Path, output: Path) -> dict[str, str]:
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.fail("cmake is not on PATH: scripts/setup installs it")
    subprocess.run(
        [cmake, f"-DSOURCE_DIR={source_dir}", f"-DOUTPUT={output}", "-DVERSION=9.8.7",
         "-DBUILD_TYPE=Debug, ASan+UBSan", "-P", str(SCRIPT)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return dict(re.findall(r'constexpr std::string_view (k\w+) = "([^"]*)";', output.read_text()))


def test_a_tree_without_git_reports_an_unknown_commit(tmp_path: Path) -> None:
    exported = tmp_path / "exported-tree"  # a tarball's contents: no .git anywhere above
    exported.mkdir()
    header = write_header(exported, tmp_path / "kforge_build_info.hpp")
    assert header == {"kVersion": "9.8.7", "kGitCommit": "unknown", "kBuildType": "Debug, ASan+UBSan"}


def test_a_git_checkout_reports_its_commit_and_uncommitted_changes(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git = ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@localhost"]
    subprocess.run([*git, "init", "-q"], check=True)
    (checkout / "file.txt").write_text("one\n")
    subprocess.run([*git, "add", "file.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    head = subprocess.run(
        [*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True
    )
    commit = head.stdout.strip()
    output = tmp_path / "kforge_build_info.hpp"
    assert write_header(checkout, output)["kGitCommit"] == commit
    (checkout / "file.txt").write_text("two\n")
    assert write_header(checkout, output)["kGitCommit"] == commit + "-dirty"
