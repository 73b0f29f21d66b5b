"""Runs a problem's ModelNew three times on the GPU: the program that `ncu` profiles to capture a
kernel's metrics (bench/roofline/README.md)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import torch


def load(path: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"run_solution: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: run_solution.py PROBLEM.py SOLUTION.py", file=sys.stderr)
        return 2
    problem, solution = load(sys.argv[1], "problem"), load(sys.argv[2], "solution")
    torch.manual_seed(0)
    model = solution.ModelNew(*problem.get_init_inputs()).cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]
    for _ in range(3):
        model(*inputs)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
