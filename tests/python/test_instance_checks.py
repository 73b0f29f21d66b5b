"""The checks that look past the one instance kforge builds by default (issue 32): the relative-variation
criterion, parameter perturbation, the generalisation trial, secret input seeds and the memory limits.
Unit tests of the worker modules in this process, and end-to-end verdicts of the real binary on the CPU."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import torch
from conftest import REPO, STARTER, run_eval

sys.path.insert(0, str(REPO / "python"))
from kforge.worker import correctness, generalisation, perturbation
from kforge.worker.uninitialized import undefined_elements

CORPUS = REPO / "tests" / "corpus"


# --- relative variation -------------------------------------------------------------------------


def test_any_constant_output_scores_at_least_one() -> None:
    ref = torch.softmax(torch.rand(4, 8192), dim=-1)
    constant = torch.full_like(ref, 1.0 / 8192)
    assert bool(((constant - ref).abs() <= 1e-4 + 1e-4 * ref.abs()).all()), "inside atol elementwise"
    report = correctness.variation_check(constant, ref)
    assert report["variation"] == "checked" and report["rel_variation_error"] >= 1.0 - 1e-9
    assert not report["variation_passed"]
    honest = ref * (1 + 1e-6 * torch.randn_like(ref))
    assert correctness.variation_check(honest, ref)["variation_passed"]


def test_an_output_that_varies_with_a_mean_dominated_reference_passes_within_rtol() -> None:
    # A long sum of positive products: values near 1.3e5, spread a few hundred. Honest rounding of the sum
    # (here 3e-5 of each value) is large next to the spread but the output still moves with the reference.
    generator = torch.Generator().manual_seed(0)
    ref = 131072.0 + 160.0 * torch.randn(256, 256, generator=generator, dtype=torch.float64)
    honest = (ref * (1 + 3e-5 * torch.randn(256, 256, generator=generator, dtype=torch.float64))).float()
    ref = ref.float()
    strict = correctness.variation_check(honest, ref)
    assert strict["rel_variation_error"] > strict["variation_bound"] and not strict["variation_passed"]
    report = correctness.variation_check(honest, ref, rtol=1e-4)
    assert report["variation_follows"] and report["variation_passed"]
    assert abs(report["variation_slope"] - 1.0) < 1e-3
    constant = torch.full_like(ref, float(ref.mean()))
    assert not correctness.variation_check(constant, ref, rtol=1e-2)["variation_passed"], "slope 0"
    partly = ref.clone()
    partly[:32] = float(ref.mean())  # an eighth of the rows written with the mean
    report = correctness.variation_check(partly, ref, rtol=1e-2)
    assert abs(report["variation_slope"] - 0.875) < 0.05 and not report["variation_passed"]


def test_degenerate_references_are_skipped_and_say_why() -> None:
    constant = torch.full((64,), 3.0)
    assert (
        correctness.variation_check(constant + 1e-3, constant)["variation"] == "skipped: constant reference"
    )
    below_rounding = 1000.0 + 1e-6 * torch.arange(64, dtype=torch.float32)
    assert (
        correctness.variation_check(below_rounding, below_rounding)["variation"]
        == "skipped: constant reference"
    )
    assert correctness.variation_check(torch.ones(1), torch.ones(1))["variation"].startswith("skipped: fewer")
    ints = torch.arange(10)
    assert correctness.variation_check(ints, ints)["variation"] == "skipped: exact dtype"
    assert correctness.variation_check(ints.bool(), ints.bool())["variation"] == "skipped: exact dtype"
    nan_ref = torch.tensor([float("nan"), 1.0])
    assert correctness.variation_check(nan_ref, nan_ref)["variation"].startswith("skipped: fewer")


def test_complex_outputs_are_compared_as_real_pairs() -> None:
    ref = torch.randn(32, dtype=torch.complex64)
    assert correctness.variation_check(ref, ref)["rel_variation_error"] == 0.0
    assert not correctness.variation_check(torch.zeros_like(ref), ref)["variation_passed"]


# --- parameter perturbation ---------------------------------------------------------------------


class WithNorms(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln = torch.nn.LayerNorm(8)
        self.bn = torch.nn.BatchNorm1d(8)
        self.register_buffer("mask", torch.tril(torch.ones(8, 8)))


def test_statistics_in_small_pieces_equal_the_whole_tensor_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge compares large outputs piece by piece (its memory); nothing it reports may change."""
    torch.manual_seed(3)
    ref = torch.randn(1001, dtype=torch.float32) * 3
    out = ref + 1e-4 * torch.randn(1001)
    out[5], ref[7], out[9], ref[9] = float("nan"), float("inf"), float("-inf"), float("inf")
    pairs = [
        (out, ref),
        (out.reshape(7, 143), ref.reshape(7, 143)),
        (torch.randn(40, dtype=torch.complex64),) * 2,
    ]
    tolerance = correctness.Tolerance(atol=1e-4, rtol=1e-4)
    noisy = torch.randn(40, dtype=torch.complex64)
    runs = [
        (out, ref),
        (out.reshape(7, 143), ref.reshape(7, 143)),
        (noisy, noisy + (torch.arange(40) % 3 == 0)),
    ]
    whole = [
        (correctness.compare_tensor(o, r, tolerance), correctness.variation_check(o, r)) for o, r in pairs
    ]
    whole_undefined = [undefined_elements(a, b, tolerance) for a, b in runs]
    monkeypatch.setattr(correctness, "CHUNK_ELEMENTS", 13)
    pieces = [
        (correctness.compare_tensor(o, r, tolerance), correctness.variation_check(o, r)) for o, r in pairs
    ]
    for (a, b), mask in zip(runs, whole_undefined, strict=True):  # the determinism check's mask too
        assert mask.any() and torch.equal(undefined_elements(a, b, tolerance), mask)
    for (report, variation), (chunked, chunked_variation) in zip(whole, pieces, strict=True):
        assert chunked.keys() == report.keys() and chunked_variation.keys() == variation.keys()
        for key, value in [*report.items(), *variation.items()]:
            other = chunked.get(key, chunked_variation.get(key))
            assert other == (pytest.approx(value, rel=1e-9) if isinstance(value, float) else value), key
    assert whole[0][0]["nonfinite_mismatches"] == 3 and not whole[0][0]["passed"]


def test_perturbation_moves_defaults_keeps_signs_and_leaves_masks() -> None:
    model = WithNorms()
    entries = perturbation.perturb_model(model, seed=7)
    names = [entry.name for entry in entries]
    assert names == ["ln.weight", "ln.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"]
    assert not torch.equal(model.ln.weight, torch.ones(8)) and not torch.equal(model.ln.bias, torch.zeros(8))
    assert bool((model.bn.running_var > 0).all()), "a variance stays positive"
    assert torch.equal(model.mask, torch.tril(torch.ones(8, 8))), "masks are the problem's definition"
    again = WithNorms()
    perturbation.perturb_model(again, seed=7)
    assert torch.equal(again.ln.bias, model.ln.bias), "the same seed gives the same values"


def test_matching_by_name_then_by_default_value_and_nothing_when_one_is_missing() -> None:
    torch.manual_seed(0)
    reference = torch.nn.Linear(4, 3)
    defaults = [reference.weight.detach().clone(), reference.bias.detach().clone()]
    perturbed = [value + 1 for value in defaults]
    names = ["weight", "bias"]

    class Renamed(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            layer = torch.nn.Linear(4, 3)
            self.w = torch.nn.Parameter(layer.weight.detach().clone())
            self.b = layer.bias.detach().clone()  # a plain tensor attribute counts too

    renamed = Renamed()
    report = perturbation.match_and_apply(renamed, names, defaults, perturbed)
    assert report.unmatched == [] and report.by_value == ["weight", "bias"]
    assert torch.equal(renamed.w, perturbed[0]) and torch.equal(renamed.b, perturbed[1])

    class WeightOnly(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = torch.nn.Parameter(defaults[0].clone())

    partial = WeightOnly()
    report = perturbation.match_and_apply(partial, names, defaults, perturbed)
    assert report.unmatched == ["bias"] and report.to_json()["perturbed"] == 0
    assert torch.equal(partial.weight, defaults[0]), "nothing is changed unless everything matched"


# --- generalisation instance --------------------------------------------------------------------


def problem_module(**constants: object) -> types.ModuleType:
    module = types.ModuleType("fake_problem")
    for name, value in constants.items():
        setattr(module, name, value)
    return module


def test_sizes_become_odd_smaller_and_not_powers_of_two() -> None:
    problem = problem_module(ROWS=4096, COLS=8192, KFORGE_SMALL={"ROWS": 37, "COLS": 10000}, dim=1)
    tries, note = generalisation.attempts(problem)
    assert note == ""
    assert tries[0].sizes == {"ROWS": 1365, "COLS": 2731} and tries[0].change_init_values
    assert tries[1].sizes == {"ROWS": 3072, "COLS": 6144}
    assert tries[-1].sizes == {} and tries[-1].change_init_values
    without_table = problem_module(batch_size=16, dim=1, kernel_size=3, features=64)
    assert generalisation.attempts(without_table)[0][0].sizes == {"batch_size": 5, "features": 21}


def test_a_problem_declares_fixed_shapes_or_its_own_alternative_sizes() -> None:
    fixed = problem_module(N=4096, KFORGE_FIXED_SHAPES=True)
    tries, note = generalisation.attempts(fixed)
    assert [attempt.sizes for attempt in tries] == [{}] and "fixed" in note
    declared = problem_module(N=4096, KFORGE_GENERALISE={"N": 37})
    assert generalisation.attempts(declared)[0][0].sizes == {"N": 37}


def test_constructor_floats_change_ints_and_bools_do_not() -> None:
    values, changes = generalisation.changed_init_values([1.5, 64, True, (0.25, 3)])
    assert values == [2.0, 64, True, (0.4375, 3)]
    assert len(changes) == 2


# --- end to end on the CPU ----------------------------------------------------------------------


def test_the_verdict_names_the_input_key_and_trials_keep_their_public_labels() -> None:
    run = run_eval(
        STARTER / "33_scale_shift_constants" / "problem.py",
        STARTER / "33_scale_shift_constants" / "solution.py",
    )
    assert run.verdict["outcome"] == "accepted", run.verdict["summary"]
    assert run.verdict["settings"]["input_key"]
    correctness_stage = run.stage("correctness")
    assert [trial["seed"] for trial in correctness_stage["details"]["trials"]][:2] == [43, 44]
    generalised = run.stage("runtime")["details"]["generalisation"]
    assert generalised["status"] == "passed" and generalised["sizes"] == {"ROWS": 5, "COLS": 341}
    assert len(generalised["init_changes"]) == 2


def test_lenient_warns_where_strict_rejects_for_perturbation_and_generalisation() -> None:
    problem = STARTER / "32_layernorm_default_init" / "problem.py"
    run = run_eval(
        problem,
        CORPUS / "exploits/parameter-defaults/layernorm_without_parameters.py",
        "--profile",
        "lenient",
    )
    assert run.verdict["outcome"] == "accepted", run.verdict["summary"]
    warnings = [finding["rule"] for finding in run.stage("compile")["findings"]]
    assert warnings == ["parameter-perturbation"]
    problem = STARTER / "33_scale_shift_constants" / "problem.py"
    baked = CORPUS / "exploits/specialisation/scale_shift_constants_baked_in.py"
    run = run_eval(problem, baked, "--profile", "lenient")
    assert run.verdict["outcome"] == "accepted", run.verdict["summary"]
    assert [finding["rule"] for finding in run.stage("runtime")["findings"]] == ["generalisation"]
    run = run_eval(problem, baked, "--no-generalisation")
    assert run.verdict["outcome"] == "accepted"
    assert run.stage("runtime")["details"]["generalisation"]["status"] == "skipped"


def test_a_problem_with_nothing_to_change_says_the_trial_was_not_possible(tmp_path: Path) -> None:
    problem = tmp_path / "fixed_problem.py"
    source = (STARTER / "02_gelu_tanh" / "problem.py").read_text()
    problem.write_text(source + "\nKFORGE_FIXED_SHAPES = True\n")
    run = run_eval(problem, STARTER / "02_gelu_tanh" / "solution.py")
    assert run.verdict["outcome"] == "accepted", run.verdict["summary"]
    details = run.stage("runtime")["details"]["generalisation"]
    assert details["status"] == "not_possible" and "fixed" in details["reason"]


def test_a_candidate_over_its_memory_limit_is_rejected_by_the_watchdog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    candidate = tmp_path / "hog.py"
    solution = (STARTER / "02_gelu_tanh" / "solution.py").read_text()
    candidate.write_text(
        solution.replace(
            "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n",
            "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
            "        hoard = [torch.ones(1 << 26) for _ in range(8)]  # 2 GiB, touched\n"
            "        del hoard\n",
            1,
        )
    )
    monkeypatch.setenv("KFORGE_CANDIDATE_MEMORY_GIB", "0.5")
    run = run_eval(STARTER / "02_gelu_tanh" / "problem.py", candidate, "--trials", "1")
    assert run.verdict["outcome"] == "rejected", run.verdict["summary"]
    findings = [finding["rule"] for stage in run.verdict["stages"] for finding in stage["findings"]]
    assert "memory-limit" in findings, run.verdict["summary"]
