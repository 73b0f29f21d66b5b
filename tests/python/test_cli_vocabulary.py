"""One vocabulary across commands: every option in every command's --help is in docs/cli-options.json,
with the table's short name and value label, so `-o` is a file and `--samples` a set of inputs
everywhere; old spellings still work, with a warning; shared options have the same range checks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import REPO, STARTER, run_kforge

TABLE = json.loads((REPO / "docs" / "cli-options.json").read_text())
OPTION_LINE = re.compile(r"^  (?P<names>-[^\s]+)(?: (?P<value>[^\s]+))?")
POSITIONAL_LINE = re.compile(r"^  (?P<name>[a-z][^\s]*) (?P<value>[^\s]+)")


def help_options(command: str) -> tuple[dict[str, tuple[str | None, str | None]], dict[str, str | None]]:
    """The --help of `command`: {long name: (short name, value label)} and {positional: value label}."""
    result = run_kforge(*command.split(), "--help")
    assert result.returncode == 0, result.stderr
    options: dict[str, tuple[str | None, str | None]] = {}
    positionals: dict[str, str | None] = {}
    section = ""
    for line in result.stdout.splitlines():
        if line and not line.startswith(" "):
            section = line.rstrip(":")
            continue
        if section == "Positionals" and (match := POSITIONAL_LINE.match(line)):
            positionals[match["name"]] = match["value"]
        elif section == "Options" and (match := OPTION_LINE.match(line)):
            names = match["names"].split(",")
            long = next(name for name in names if name.startswith("--"))
            short = next((name for name in names if not name.startswith("--")), None)
            options[long] = (short, match["value"])
    return options, positionals


def labelled(shown: str | None, label: str | None) -> bool:
    """`shown` is the table's value label, maybe followed by "=DEFAULT"."""
    if shown is None or label is None:
        return shown == label
    return shown == label or shown.startswith(label + "=")


@pytest.mark.parametrize("command", TABLE["commands"])
def test_every_option_of_every_command_means_what_the_table_says(command: str) -> None:
    options, positionals = help_options(command)
    assert options, f"kforge {command} --help lists no options"
    for name, (short, value) in options.items():
        assert name in TABLE["options"], f"kforge {command}: {name} is not in docs/cli-options.json"
        entry = TABLE["options"][name]
        assert short == entry.get("short"), f"kforge {command}: {name} has short name {short}"
        shown = f"kforge {command}: {name} shows {value}, not {entry['value']}"
        assert labelled(value, entry["value"]), shown
    for name, value in positionals.items():
        assert labelled(value, TABLE["positionals"][name]["value"]), f"kforge {command}: positional {name}"
    for old in (item["old"] for item in TABLE["deprecated"] if item["command"] == command):
        assert old not in options, f"kforge {command}: the deprecated {old} is shown in --help"


def test_a_short_name_means_one_option_everywhere() -> None:
    shorts = [entry["short"] for entry in TABLE["options"].values() if "short" in entry]
    assert len(shorts) == len(set(shorts))
    assert TABLE["options"]["--output"]["value"] == "FILE", "-o/--output is always a file"


def test_shared_options_have_the_same_help_everywhere() -> None:
    texts: dict[str, set[str]] = {}
    for command in TABLE["commands"]:
        result = run_kforge(*command.split(), "--help")
        for line in result.stdout.splitlines():
            for name in ("--device", "--trials", "--timeout", "--python"):
                if re.match(rf"^  (-\w,)?{name} ", line):
                    texts.setdefault(name, set()).add(re.sub(r"=\S+", "", line.split(None, 2)[-1]).strip())
    for name, variants in texts.items():
        assert len(variants) == 1, f"{name} is described differently: {variants}"
    assert "cpu" in next(iter(texts["--device"]))


def test_old_spellings_still_work_with_a_warning(tmp_path: Path) -> None:
    solution = str(REPO / "problems" / "baseline" / "01_gelu_erf" / "solution.py")
    for old in ("--out", "--output", "-o"):
        out = tmp_path / f"knobs{old}.txt"
        result = run_kforge("knobs", "-c", solution, old, str(out))
        assert result.returncode == 0, result.stderr
        assert "BLOCK = 256" in out.read_text()
        warned = "--out is deprecated" in result.stderr and "use --output" in result.stderr
        assert warned == (old == "--out"), result.stderr
    prompts = tmp_path / "prompts.jsonl"
    suite = tmp_path / "suite"
    (suite / "04_softmax").mkdir(parents=True)
    (suite / "04_softmax" / "problem.py").write_text((STARTER / "04_softmax" / "problem.py").read_text())
    result = run_kforge("data", "prompts", "--suite", str(suite), "--out", str(prompts))
    assert result.returncode == 0 and prompts.exists(), result.stderr
    assert "1 prompt from" in result.stdout, "one prompt, not 1 prompts"


def test_serve_checks_its_ranges_like_eval() -> None:
    bad = (("--trials", "0"), ("--timeout", "-1"), ("--time-budget", "0"), ("--device", "gpu"))
    for option, value in bad:
        for command in ("eval", "serve", "bench"):
            result = run_kforge(command, option, value)
            assert result.returncode == 2, (command, option, result.stderr)
            assert option in result.stderr, result.stderr


def test_knobs_set_to_an_invalid_value_lists_the_valid_ones() -> None:
    solution = str(REPO / "problems" / "baseline" / "01_gelu_erf" / "solution.py")
    result = run_kforge("knobs", "-c", solution, "--set", "BLOCK=63")
    assert result.returncode == 2
    assert "valid values: 16 32 64 128 256 512" in result.stderr, result.stderr
