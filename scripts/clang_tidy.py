"""clang-tidy over the translation units of src/ that a change touches, with a result cache.

Usage: python3 scripts/clang_tidy.py [--all] [--base REF] [--build-dir build/release] [--jobs N] [--list]

Which translation units: a .cpp under src/ is linted when it, or a project header it includes
(directly or through other project headers), differs from the base; `--all` lints every one, and so
does a change to .clang-tidy. The base is, in order: --base or $KFORGE_LINT_BASE; the merge base of
HEAD with origin/main, else with main, when that is not HEAD itself (a branch); else HEAD's first
parent (HEAD is main, as in CI's clean clone: the last commit, a merge's whole branch). Uncommitted
and untracked files count as changed.

The include graph comes from the `#include "..."` lines of the project's own files, resolved the way
the compiler resolves quoted includes here (the including file's folder, then src/): system headers
never change with a commit, and this needs neither a build (ninja's dependency log) nor a
preprocessor run per file, so a typical change is selected in well under a second.

Cache: a translation unit that passed is remembered under BUILD_DIR/clang-tidy-cache by a SHA-256 of
what decides its result: clang-tidy's version, .clang-tidy, its compile command and the text of the
.cpp and of every project header it includes. A second run over the same files is instant; a failure
is never cached. Delete the folder to start afresh (a Debian upgrade of a library header is not in
the key).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE_ROOT = REPO / "src"
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
MAIN_BRANCHES = ("origin/main", "main")


def git(*args: str) -> str | None:
    result = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=False)
    return result.stdout.strip() if result.returncode == 0 else None


def choose_base(explicit: str | None) -> tuple[str | None, str]:
    """The commit to compare with and why it was chosen; None when there is none (a root commit)."""
    if explicit:
        return explicit, "given"
    head = git("rev-parse", "HEAD")
    for branch in MAIN_BRANCHES:
        if git("rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}") is None:
            continue
        merge_base = git("merge-base", "HEAD", branch)
        if merge_base and merge_base != head:
            return merge_base, f"merge base with {branch}"
    parent = git("rev-parse", "--verify", "--quiet", "HEAD^")
    return (parent, "HEAD is main: the last commit") if parent else (None, "no parent commit")


def changed_files(base: str) -> set[Path]:
    """Files that differ from `base` in the work tree (committed, staged or not), and untracked files."""
    diff = git("diff", "--name-only", base) or ""
    untracked = git("ls-files", "--others", "--exclude-standard") or ""
    names = [line for line in (diff + "\n" + untracked).splitlines() if line]
    return {(REPO / name).resolve() for name in names}


def project_includes(path: Path) -> list[Path]:
    """The project headers `path` includes with quotes, resolved like the compiler (own folder, src/)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    found = []
    for name in INCLUDE.findall(text):
        for folder in (path.parent, SOURCE_ROOT):
            candidate = (folder / name).resolve()
            if candidate.is_file():
                found.append(candidate)
                break
    return found


def include_closure(unit: Path, memo: dict[Path, list[Path]]) -> list[Path]:
    """`unit` and every project header it reaches, sorted (a stable order for the cache key)."""
    seen = {unit}
    pending = [unit]
    while pending:
        current = pending.pop()
        if current not in memo:
            memo[current] = project_includes(current)
        for header in memo[current]:
            if header not in seen:
                seen.add(header)
                pending.append(header)
    return sorted(seen)


@dataclass
class Unit:
    path: Path
    command: list[str]
    closure: list[Path]

    def cache_key(self, tool_identity: bytes) -> str:
        digest = hashlib.sha256(tool_identity)
        # The output file and the unit's own path differ between build trees and clones, not results.
        digest.update(json.dumps([arg for arg in self.command if not arg.endswith(".o")]).encode())
        for path in self.closure:
            digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
        return digest.hexdigest()


def load_units(build_dir: Path) -> list[Unit]:
    database = build_dir / "compile_commands.json"
    if not database.exists():
        sys.exit(f"clang-tidy: {database} not found: configure first (cmake --preset release)")
    tracked = set((git("ls-files", "src/*.cpp") or "").splitlines())
    memo: dict[Path, list[Path]] = {}
    units = []
    for entry in json.loads(database.read_text()):
        path = Path(entry["file"]).resolve()
        if not path.is_relative_to(REPO) or str(path.relative_to(REPO)) not in tracked:
            continue  # only the project's tracked sources under src/
        command = entry.get("arguments") or shlex.split(entry["command"])
        relative = [arg.replace(str(REPO), "<repo>") for arg in command]
        units.append(Unit(path, relative, include_closure(path, memo)))
    return sorted(units, key=lambda unit: unit.path)


def tool_identity(tidy: str) -> bytes:
    version = subprocess.run([tidy, "--version"], capture_output=True, text=True, check=True).stdout
    return version.encode() + (REPO / ".clang-tidy").read_bytes()


def run_tidy(tidy: str, build_dir: Path, unit: Unit) -> tuple[int, str]:
    result = subprocess.run(
        [tidy, "-p", str(build_dir), "--quiet", "-extra-arg=-Wno-unknown-warning-option", str(unit.path)],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.returncode, result.stdout + result.stderr


def select_units(units: list[Unit], lint_all: bool, base_arg: str | None) -> tuple[list[Unit], str]:
    if lint_all:
        return units, "--all"
    base, why = choose_base(base_arg or os.environ.get("KFORGE_LINT_BASE"))
    if base is None:
        return units, f"every translation unit ({why})"
    changed = changed_files(base)
    label = f"changed since {base[:12]} ({why})"
    if (REPO / ".clang-tidy").resolve() in changed:
        return units, f"every translation unit (.clang-tidy {label})"
    return [unit for unit in units if changed.intersection(unit.closure)], label


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every translation unit under src/")
    parser.add_argument("--base", help="the commit to compare with (default: see the module's docstring)")
    parser.add_argument("--build-dir", type=Path, default=REPO / "build" / "release")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--clang-tidy", default="clang-tidy", help="the clang-tidy binary")
    parser.add_argument("--list", action="store_true", help="print the selected units and run nothing")
    options = parser.parse_args()

    units = load_units(options.build_dir)
    selected, label = select_units(units, options.all, options.base)
    cache = options.build_dir / "clang-tidy-cache"
    cache.mkdir(parents=True, exist_ok=True)
    identity = tool_identity(options.clang_tidy)
    keyed = [(unit, unit.cache_key(identity)) for unit in selected]
    to_run = [(unit, key) for unit, key in keyed if not (cache / key).exists()]
    if options.list:
        for unit, key in keyed:
            print(unit.path.relative_to(REPO), "(cached)" if (cache / key).exists() else "")
        return 0
    print(
        f"clang-tidy: {len(selected)} of {len(units)} translation units, {label}; "
        f"{len(selected) - len(to_run)} passed before (cached), {len(to_run)} to run",
        flush=True,
    )
    failed = 0
    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        runs = pool.map(lambda item: run_tidy(options.clang_tidy, options.build_dir, item[0]), to_run)
        for (unit, key), (code, output) in zip(to_run, runs, strict=True):
            if code == 0:  # .clang-tidy makes every warning an error, so a clean unit exits 0
                (cache / key).touch()
                continue
            failed += 1
            print(f"clang-tidy: {unit.path.relative_to(REPO)} FAILED", file=sys.stderr)
            print(output.strip() or f"(exit status {code}, no output)", file=sys.stderr)
    if failed:
        print(f"clang-tidy: {failed} unit(s) with findings (warnings are errors)", file=sys.stderr)
        return 1
    print(f"clang-tidy: clean ({len(selected)} translation units)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
