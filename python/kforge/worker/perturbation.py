"""Parameter perturbation: the reference and the candidate run with the same parameters, but not the
ones their constructors left.

Models start at their default initialisation (LayerNorm's weight 1 and bias 0, BatchNorm's running
statistics 0 and 1), so a kernel that skips a parameter can be exact on a freshly built model. Before
any trial the judge perturbs the reference model's floating-point parameters and the running statistics
of its normalisation layers, from a seed only kforge knows; the candidate worker finds the same tensors
in ModelNew and copies the perturbed values in, as `load_state_dict` would.

Matching (candidate side), for each perturbed tensor of the reference, in order:
1. a tensor of ModelNew with the same name (state-dict style: `norm.weight`), shape and dtype;
2. else the first not yet matched tensor of ModelNew (parameters, buffers, then plain tensor attributes
   of its modules) with the same shape and dtype that holds exactly the reference's default values:
   ModelNew is built after the same seed, so a parameter it keeps under another name still starts equal.
A reference tensor with no match means ModelNew keeps that parameter somewhere kforge cannot reach (a
transposed or fused copy made in __init__) or does not keep it at all (a constant baked into a
kernel); the evaluation then cannot perturb, and the verdict says which tensors (strict: rejected with
`parameter-perturbation`; lenient: a warning, and both sides keep their default values).

Buffers other than normalisation statistics are not perturbed: masks and lookup tables are part of the
problem's definition, and honest kernels may compute them (a causal mask) instead of reading them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

RELATIVE_SPREAD = 0.25  # nonzero elements are scaled by a factor in [0.75, 1.25]: signs are kept
ZERO_SPREAD = 0.1  # zero elements get N(0, 0.1^2) times the tensor's RMS (1 when all zero)


@dataclass
class PerturbedTensor:
    """One reference tensor: its name, the live tensor in the model, its default and perturbed values."""

    name: str
    tensor: torch.Tensor
    default: torch.Tensor
    perturbed: torch.Tensor


def _normalisation_statistics(model: torch.nn.Module) -> Iterator[tuple[str, torch.Tensor]]:
    for module_name, module in model.named_modules():
        if isinstance(module, torch.nn.modules.batchnorm._NormBase):
            for attribute in ("running_mean", "running_var"):
                value = getattr(module, attribute, None)
                if isinstance(value, torch.Tensor):
                    yield (f"{module_name}.{attribute}" if module_name else attribute), value


def perturbable_tensors(model: torch.nn.Module) -> list[tuple[str, torch.Tensor]]:
    """The floating-point parameters and normalisation statistics of a model, in state-dict order."""
    found = [(name, value) for name, value in model.named_parameters() if value.is_floating_point()]
    found += [(name, value) for name, value in _normalisation_statistics(model) if value.is_floating_point()]
    return found


def _perturbed_value(default: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    base = default.detach().to("cpu", torch.float32)
    nonzero = base != 0
    rms = float(base[nonzero].pow(2).mean().sqrt()) if bool(nonzero.any()) else 1.0
    factor = 1.0 + RELATIVE_SPREAD * (2.0 * torch.rand(base.shape, generator=generator) - 1.0)
    fresh = ZERO_SPREAD * rms * torch.randn(base.shape, generator=generator)
    return torch.where(nonzero, base * factor, fresh).to(default.device, default.dtype)


def perturb_model(model: torch.nn.Module, seed: int) -> list[PerturbedTensor]:
    """Perturbs the model's perturbable tensors in place from `seed`; returns them with both values."""
    generator = torch.Generator(device="cpu")
    generator.manual_seed(seed)
    entries = []
    with torch.no_grad():
        for name, tensor in perturbable_tensors(model):
            default = tensor.detach().clone()
            perturbed = _perturbed_value(default, generator)
            tensor.copy_(perturbed)
            entries.append(PerturbedTensor(name, tensor, default, perturbed))
    return entries


@contextmanager
def at_default(entries: list[PerturbedTensor]) -> Iterator[None]:
    """The model's perturbed tensors back at their defaults for the duration (lenient fallback)."""
    with torch.no_grad():
        for entry in entries:
            entry.tensor.copy_(entry.default)
    try:
        yield
    finally:
        with torch.no_grad():
            for entry in entries:
                entry.tensor.copy_(entry.perturbed)


def _candidate_tensors(model: torch.nn.Module) -> list[tuple[str, torch.Tensor]]:
    """ModelNew's floating-point tensors: parameters, buffers, then plain tensor attributes of its
    modules, each once."""
    seen: set[int] = set()
    found: list[tuple[str, torch.Tensor]] = []

    def add(name: str, value: Any) -> None:
        if isinstance(value, torch.Tensor) and value.is_floating_point() and id(value) not in seen:
            seen.add(id(value))
            found.append((name, value))

    for name, value in model.named_parameters():
        add(name, value)
    for name, value in model.named_buffers():
        add(name, value)
    for module_name, module in model.named_modules():
        for attribute, value in vars(module).items():
            add(f"{module_name}.{attribute}" if module_name else attribute, value)
    return found


@dataclass
class MatchReport:
    entries: int
    matched: dict[str, str]  # reference name -> ModelNew name
    by_value: list[str]  # reference names matched by their default values, not by name
    unmatched: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            "perturbed": len(self.matched) if not self.unmatched else 0,
            "matched": self.matched,
            "by_value": self.by_value,
            "unmatched": self.unmatched,
        }


def match_and_apply(
    model: torch.nn.Module, names: list[str], defaults: list[torch.Tensor], perturbed: list[torch.Tensor]
) -> MatchReport:
    """Finds the reference's tensors in ModelNew and, when every one is found, copies the perturbed
    values in. With any tensor unmatched nothing is changed (both sides then keep their defaults)."""
    candidates = _candidate_tensors(model)
    by_name = {name: tensor for name, tensor in candidates}
    taken: set[int] = set()
    pairs: list[tuple[torch.Tensor, torch.Tensor]] = []
    matched: dict[str, str] = {}
    by_value: list[str] = []
    unmatched: list[str] = []

    def fits(tensor: torch.Tensor, default: torch.Tensor) -> bool:
        return tensor.shape == default.shape and tensor.dtype == default.dtype and id(tensor) not in taken

    for name, default, value in zip(names, defaults, perturbed, strict=True):
        same_name = by_name.get(name)
        if same_name is not None and fits(same_name, default):
            found: tuple[str, torch.Tensor] | None = (name, same_name)
        else:
            found = next(
                (
                    (other, tensor)
                    for other, tensor in candidates
                    if fits(tensor, default) and torch.equal(tensor.detach(), default.to(tensor.device))
                ),
                None,
            )
            if found is not None:
                by_value.append(name)
        if found is None:
            unmatched.append(name)
            continue
        taken.add(id(found[1]))
        matched[name] = found[0]
        pairs.append((found[1], value))
    if not unmatched:
        with torch.no_grad():
            for tensor, value in pairs:
                tensor.copy_(value.to(tensor.device))
    return MatchReport(len(names), matched, by_value, unmatched)
