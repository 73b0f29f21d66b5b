"""Score LLM completions for one problem with a running `kforge serve`, as an RL trainer's reward step
does: register the problem's source, send the completions, print each one's reward and why.

    build/release/kforge serve --device cpu --small --port 8000 &
    python clients/python/examples/score_completions.py problems/starter/01_scaled_add/problem.py \
        problems/starter/01_scaled_add/solution.py

Each COMPLETION is a file holding an LLM's reply (or plain code). The service comes from --url, else
$KFORGE_URL, else http://127.0.0.1:8000; a token from $KFORGE_TOKEN or $KFORGE_TOKEN_FILE.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kforge_client import KforgeClient, KforgeError


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problem", type=Path, help="the reference problem file (KernelBench format)")
    parser.add_argument("completions", type=Path, nargs="+", help="files with one completion each")
    parser.add_argument("--url", help="the service (default $KFORGE_URL or http://127.0.0.1:8000)")
    parser.add_argument("--reward", default="kforge", help="kforge, autotriton, tritonrl or drkernel")
    args = parser.parse_args()
    source = args.problem.read_text()
    try:
        with KforgeClient(args.url) as client:
            problem_id = client.register_problem(source)
            job = client.evaluate(
                [path.read_text() for path in args.completions], problem_id=problem_id, reward=args.reward
            )
    except KforgeError as error:
        print(f"kforge service error ({error.code}): {error.message}", file=sys.stderr)
        return 2
    for path, result in zip(args.completions, job.results, strict=True):
        reward = "none (evaluation error)" if result.reward is None else f"{result.reward:.3f}"
        stage = f" at {result.failed_stage}" if result.failed_stage else ""
        print(f"{path.name}: {result.outcome}{stage}, reward {reward}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
