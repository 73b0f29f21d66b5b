"""Hanging candidates must cost their evaluation slots seconds, not the service (issue 34).

Starts `kforge serve` (no --timeout: the upper bound stays the default 300 s, the call limits are
derived from the reference's own time), warms the problem's judge with one evaluation, then:

  alone  N honest submissions at once (each its own request, as N trainer processes send them);
  mixed  H hanging submissions (forward never returns: tests/candidates/hangs.py) and right after
         them N other honest ones, all at once.

The honest requests of `mixed` must all finish no later than the slowest of `alone` plus one call
limit (the first-call limit the hanging verdicts report: they hang in their first forward): a hang
holds its slot for the derived limit, then its process group is killed and the slot is free. Run with
-j > H, so the honest ones keep slots while the hangs hold theirs: with -j = H they wait for a hang's
slot, which it held for its set-up (about a second: fork, import, the judge's trial) and the limit,
and the bound is missed by that second; with fewer slots the hangs also queue behind each other.

    .venv/bin/python bench/serve_load/hang_slots.py --device cpu -j 8 --json-out out/hangs-cpu.json
    python3 bench/serve_load/hang_slots.py --device cuda:0 --full-size -j 16 --time-budget 1 \\
        --json-out $OUT/hangs-gpu.json

Prints a markdown report; exit status 0 when the check passed.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from serve_load import (  # noqa: E402
    CANDIDATES,
    STARTER,
    Client,
    ServeProcess,
    _with_marker,
    default_kforge,
    default_python,
    kforge_version,
    latency_summary,
    log,
    machine_info,
    serve_config,
)

PROBLEM = "01_scaled_add"  # its hanging candidate, tests/candidates/hangs.py, is written for it


async def evaluate(
    host: str, port: int, token: str, problem_id: str, completion: str, deadline_s: float, verdict: bool
) -> tuple[float, dict[str, Any] | None, int | None]:
    """One request with one completion, waited for; its latency, result line and status."""
    client = Client(host, port, token, deadline_s)
    start = time.monotonic()
    answer = await client.call(
        "POST",
        "/v1/evaluate",
        {
            "problem_id": problem_id,
            "completions": [completion],
            "include_verdict": verdict,
            "wait_s": deadline_s,
        },
        timeout_s=deadline_s,
    )
    seconds = time.monotonic() - start
    client.close()
    document = answer.json() if answer.status == 200 else None
    result = document["results"][0] if document and document.get("status") == "done" else None
    return seconds, result, answer.status


def summary_of(results: list[tuple[float, dict[str, Any] | None, int | None]]) -> dict[str, Any]:
    outcomes: dict[str, int] = {}
    for _, result, status in results:
        label = (
            f"{result['outcome']}" + (f"@{result['failed_stage']}" if result.get("failed_stage") else "")
            if result
            else f"no result (HTTP {status})"
        )
        outcomes[label] = outcomes.get(label, 0) + 1
    latencies = [seconds for seconds, _, _ in results]
    unexpected = sorted(
        {result["summary"][:300] for _, result, _ in results if result and result["outcome"] != "accepted"}
    )
    return {
        "requests": len(results),
        "outcomes": outcomes,
        "not_accepted_summaries": unexpected,
        "latency": latency_summary(latencies),
        "slowest_s": round(max(latencies), 2) if latencies else None,
    }


async def run(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    report: dict[str, Any] = {
        "mode": "hang-slots",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine_info(),
    }
    token = f"hangs-{random.Random().getrandbits(64):016x}"
    config = serve_config(args, folder, None)
    service = ServeProcess(config, token, "serve.log")
    report["kforge"] = kforge_version(config.binary)
    report["serve_command"] = " ".join(service.command)
    host, port = service.host, service.port
    log(f"kforge serve pid {service.pid} on {host}:{port}")
    try:
        setup = Client(host, port, token, 60.0)
        registered = await setup.call(
            "POST", "/v1/problems", {"source": (STARTER / PROBLEM / "problem.py").read_text()}
        )
        setup.close()
        if registered.status != 200:
            raise RuntimeError(f"registering {PROBLEM}: {registered.status} {registered.body[:300]!r}")
        problem_id = registered.json()["problem_id"]
        solution = (STARTER / PROBLEM / "solution.py").read_text()
        hang = (CANDIDATES / "hangs.py").read_text()
        stamp = f"{time.time_ns()}"

        def honest(phase: str, count: int) -> list[Any]:
            return [
                evaluate(host, port, token, problem_id, _with_marker(solution, f"{stamp} {phase} {i}"),
                         args.deadline, False)
                for i in range(count)
            ]  # fmt: skip

        log("warm-up: one evaluation starts the judge and the zygote")
        warm = await asyncio.gather(*honest("warm-up", 1))
        report["warm_up"] = summary_of(warm)
        log(f"alone: {args.honest} honest submissions at once")
        start = time.monotonic()
        alone = await asyncio.gather(*honest("alone", args.honest))
        report["alone"] = {**summary_of(alone), "wall_s": round(time.monotonic() - start, 2)}
        log(f"mixed: {args.hangs} hanging, then {args.honest} honest submissions at once")
        start = time.monotonic()
        hanging = [
            asyncio.ensure_future(
                evaluate(
                    host,
                    port,
                    token,
                    problem_id,
                    _with_marker(hang, f"{stamp} hang {i}"),
                    args.deadline,
                    True,
                )
            )
            for i in range(args.hangs)
        ]
        await asyncio.sleep(0.2)  # the hangs reach the queue first: the worst case for the honest ones
        mixed = await asyncio.gather(*honest("mixed", args.honest))
        hung = await asyncio.gather(*hanging)
        report["mixed"] = {**summary_of(mixed), "wall_s": round(time.monotonic() - start, 2)}
        report["hanging"] = summary_of(hung)
        limits = [
            result["verdict"]["settings"]["call_limits"]
            for _, result, _ in hung
            if result and "call_limits" in result.get("verdict", {}).get("settings", {})
        ]
        report["call_limits"] = limits[0] if limits else None
        report["hang_summaries"] = sorted({result["summary"] for _, result, _ in hung if result})
        probe = Client(host, port, token, 30.0)
        health = await probe.call("GET", "/v1/health")
        probe.close()
        report["health_after"] = health.json() if health.status == 200 else {"status": health.status}
    finally:
        report["sigterm_exit"] = service.stop()
    # hangs.py hangs in its first forward (trial 0), whose limit is the first-call one (docs/verdict.md).
    limit = report["call_limits"]["first_call_s"] if report.get("call_limits") else None
    bound = None if limit is None else report["alone"]["slowest_s"] + limit
    report["check"] = {
        "limit_s": limit,
        "hang_slot_held_s": report["hanging"]["slowest_s"],
        "bound_s": None if bound is None else round(bound, 2),
        "honest_slowest_mixed_s": report["mixed"]["slowest_s"],
        "margin_s": None if bound is None else round(bound - report["mixed"]["slowest_s"], 2),
    }
    honest_ok = all(label.startswith("accepted") for label in report["mixed"]["outcomes"]) and all(
        label.startswith("accepted") for label in report["alone"]["outcomes"]
    )
    hangs_ok = report["hanging"]["outcomes"] == {"rejected@correctness": args.hangs}
    report["ok"] = bool(
        honest_ok
        and hangs_ok
        and bound is not None
        and report["mixed"]["slowest_s"] <= bound
        and report["sigterm_exit"] == 0
        and report["health_after"].get("evaluations_running") == 0
    )
    return report


def markdown(report: dict[str, Any]) -> str:
    check, machine = report["check"], report["machine"]
    limits = report.get("call_limits") or {}
    lines = [
        f"## Hanging candidates and evaluation slots ({report['date']})",
        "",
        f"Machine: {machine.get('gpus') or machine.get('cpu', '?')}, {machine.get('cores')} cores; "
        f"kforge {report.get('kforge', '?')}",
        f"`{report['serve_command']}`",
        "",
        "| phase | requests | outcomes | p50 s | slowest s | wall s |",
        "|---|---|---|---|---|---|",
    ]
    for phase in ("alone", "mixed", "hanging"):
        data = report[phase]
        p50 = data["latency"]["p50_ms"]
        outcomes = ", ".join(f"{k} {v}" for k, v in data["outcomes"].items())
        median = "-" if p50 is None else round(p50 / 1000, 2)
        lines.append(
            f"| {phase} | {data['requests']} | {outcomes} | {median} | {data['slowest_s']} | "
            f"{data.get('wall_s', '-')} |"
        )
    lines += [
        "",
        f"Call limit of the hanging verdicts' first forward: {check['limit_s']} s (later calls "
        f"{limits.get('candidate_call_s')} s; reference call {limits.get('reference_call_s')} s, "
        f"floor {limits.get('floor_s')} s, upper {limits.get('upper_s')} s).",
        f"Honest, mixed: slowest {check['honest_slowest_mixed_s']} s; bound (alone's slowest + one limit) "
        f"{check['bound_s']} s; margin {check['margin_s']} s. A hang held its slot "
        f"{check['hang_slot_held_s']} s (set-up and limit).",
        f"Hang summaries: {report.get('hang_summaries')}",
        f"SIGTERM exit {report['sigterm_exit']}. **Overall: {'PASS' if report['ok'] else 'FAIL'}**",
    ]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hang_slots.py",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--kforge", default=str(default_kforge()), help="kforge binary")
    parser.add_argument(
        "--python", default=default_python(), help="interpreter passed to kforge serve --python"
    )
    parser.add_argument("--device", default="cpu", help="kforge serve --device (default cpu)")
    parser.add_argument("--full-size", action="store_true", help="the full problem size (default --small)")
    parser.add_argument(
        "-j", "--jobs", type=int, default=None, help="kforge serve -j (default the service's)"
    )
    parser.add_argument("--time-budget", type=float, default=None, help="kforge serve --time-budget")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="kforge serve --timeout (default none: the upper bound 300 s)",
    )
    parser.add_argument("--serve-arg", action="append", default=[], help="one more kforge serve argument")
    parser.add_argument("--honest", type=int, default=16, help="honest submissions per phase (default 16)")
    parser.add_argument("--hangs", type=int, default=4, help="hanging submissions (default 4)")
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds one request may take")
    parser.add_argument("--workdir", default=None, help="folder for the store and logs (default temporary)")
    parser.add_argument("--json-out", default=None, help="write the JSON report here")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    folder = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="kforge-hang-slots-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        report = asyncio.run(run(args, folder))
    finally:
        if not args.workdir:
            shutil.rmtree(folder, ignore_errors=True)
    report["args"] = vars(args)
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(report, indent=1) + "\n")
    print(markdown(report))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
