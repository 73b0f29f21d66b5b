"""The Python client (clients/python, package kforge_client) and its TRL and verl adapters against a
real `kforge serve` on the CPU interpreter, started once for the module (the starter problem's CPU
rewards under the kforge formula: correct 0.5, no code 0.0, wrong output 0.2)."""

from __future__ import annotations

import asyncio
import hashlib
import http.server
import inspect
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from conftest import STARTER
from kforge_client import (
    AsyncKforgeClient,
    KforgeClient,
    KforgeError,
    compute_score,
    compute_score_batch,
    make_async_reward_function,
    make_reward_function,
    problem_id_of,
)
from live_service import TOKEN, Service

PROBLEM = (STARTER / "01_scaled_add" / "problem.py").read_text()
SOLUTION = (STARTER / "01_scaled_add" / "solution.py").read_text()
WRONG = SOLUTION.replace("alpha * x + y", "alpha * x - y")
NO_CODE = "no code here"
GELU = (STARTER / "02_gelu_tanh" / "problem.py").read_text()
GELU_SOLUTION = (STARTER / "02_gelu_tanh" / "solution.py").read_text()
# A problem whose get_inputs raises: every verdict on it is an evaluation error (reward null).
BROKEN = PROBLEM.replace("return [torch.randn(N), torch.randn(N)]", "raise RuntimeError('broken problem')")
assert WRONG != SOLUTION and BROKEN != PROBLEM


def fenced(code: str) -> str:
    return f"Here is my kernel:\n\n```python\n{code}```\n"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    running = Service(tmp_path_factory.mktemp("serve"))
    yield running
    if running.process.poll() is None:
        running.stop()


@pytest.fixture(scope="module")
def client(service: Service) -> Iterator[KforgeClient]:
    with KforgeClient(service.url, token=TOKEN) as opened:
        yield opened


@pytest.fixture()
def service_env(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """The service named by environment only, as a trainer's workers would see it."""
    monkeypatch.setenv("KFORGE_URL", service.url)
    monkeypatch.delenv("KFORGE_TOKEN", raising=False)
    monkeypatch.setenv("KFORGE_TOKEN_FILE", str(service.folder / "token"))
    monkeypatch.delenv("KFORGE_REWARD", raising=False)


def counter(client: KforgeClient, route: str, status: int) -> int:
    match = re.search(
        rf'^kforge_http_requests_total\{{route="{route}",status="{status}"\}} (\d+)$', client.metrics(), re.M
    )
    return int(match.group(1)) if match else 0


def test_register_evaluate_poll_and_metrics(client: KforgeClient) -> None:
    health = client.health()
    assert health["status"] == "ok" and health["api"] == "v1" and health["devices"] == ["cpu"]
    problem_id = client.register_problem(PROBLEM)
    assert problem_id == hashlib.sha256(PROBLEM.encode()).hexdigest()[:16] == problem_id_of(PROBLEM)

    job = client.evaluate([SOLUTION, NO_CODE, WRONG], problem_id=problem_id)
    assert job.status == "done" and job.finished and (job.done, job.total) == (3, 3)
    assert job.problem_id == problem_id and job.info["reward"]["formula"] == "kforge"
    assert [r.index for r in job.results if r] == [0, 1, 2]
    assert [r.outcome for r in job.results if r] == ["accepted", "rejected", "rejected"]
    assert [r.failed_stage for r in job.results if r] == [None, "extract", "correctness"]
    assert job.rewards == pytest.approx([0.5, 0.0, 0.2])
    assert [r.components["correct"] for r in job.results if r] == pytest.approx([0.3, 0.0, 0.0])
    first = job.results[0]
    assert first is not None and first.formula == "kforge" and first.speedup is None and first.verdict is None
    assert first.summary.startswith("accepted") and first.explanation == "correct, not timed (no GPU)"
    assert client.job(job.job_id).results == job.results

    queued = client.evaluate([SOLUTION], problem_source=PROBLEM, reward="tritonrl", wait_s=0)
    assert queued.status in ("queued", "running", "done") and queued.problem_id == problem_id
    finished = client.wait_job(queued.job_id, timeout_s=120)
    assert finished.status == "done" and finished.rewards == [1.0]
    assert finished.results[0] is not None and finished.results[0].components["r_correct"] == 1.0

    with_verdict = client.evaluate([SOLUTION], problem_id=problem_id, include_verdict=True)
    verdict = with_verdict.results[0].verdict if with_verdict.results[0] else None
    assert verdict is not None and verdict["outcome"] == "accepted"
    assert [stage["name"] for stage in verdict["stages"]][:2] == ["extract", "static"]

    metrics = client.metrics()
    assert 'kforge_evaluations_total{outcome="accepted"' in metrics and "kforge_queue_depth 0" in metrics


def test_errors_carry_the_status_and_code_and_4xx_are_not_retried(
    service: Service, client: KforgeClient
) -> None:
    with pytest.raises(KforgeError) as unknown:
        client.evaluate([SOLUTION], problem_id="0123456789abcdef")
    assert (unknown.value.status, unknown.value.code) == (404, "unknown-problem")
    assert "POST /v1/problems" in unknown.value.message

    with pytest.raises(KforgeError) as bad_reward:
        client.evaluate([SOLUTION], problem_source=PROBLEM, reward="best")
    assert (bad_reward.value.status, bad_reward.value.code) == (400, "bad-reward")
    with pytest.raises(KforgeError) as bad_weights:
        client.evaluate(
            [SOLUTION], problem_source=PROBLEM, reward={"formula": "weighted", "weights": {"x": 1}}
        )
    assert bad_weights.value.code == "bad-reward"

    with pytest.raises(KforgeError) as unknown_job:
        client.job("no-such-job")
    assert (unknown_job.value.status, unknown_job.value.code) == (404, "unknown-job")

    before = counter(client, "unauthorised", 401)
    with KforgeClient(service.url, token="wrong-token") as intruder:
        assert intruder.health()["status"] == "ok", "health needs no token"
        with pytest.raises(KforgeError) as refused:
            intruder.register_problem(PROBLEM)
    assert (refused.value.status, refused.value.code) == (401, "unauthorised")
    assert counter(client, "unauthorised", 401) == before + 1, "a 4xx is sent once, never retried"

    with pytest.raises(ValueError, match="problem_id"):
        client.evaluate([SOLUTION])
    with pytest.raises(TypeError):
        client.evaluate(SOLUTION, problem_id="0123456789abcdef")


class FlakyHandler(http.server.BaseHTTPRequestHandler):
    """Answers like a kforge serve at its connection limit: 503 twice, then 200; 400 to POSTs."""

    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        FlakyHandler.hits.append(self.path)
        if len(FlakyHandler.hits) <= 2:
            self.answer(503, {"error": {"code": "too-many-connections", "message": "busy"}})
        else:
            self.answer(200, {"status": "ok", "service": "kforge", "api": "v1"})

    def do_POST(self) -> None:
        FlakyHandler.hits.append(self.path)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.answer(400, {"error": {"code": "bad-request", "message": "no"}})

    def answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_503_and_refused_connections_are_retried_with_a_bound() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FlakyHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        with KforgeClient(url, token="t", max_retries=3, backoff_s=0.01) as flaky:
            assert flaky.health()["status"] == "ok"
            assert FlakyHandler.hits == ["/v1/health"] * 3, "two 503 too-many-connections retried"
            with pytest.raises(KforgeError) as bad:
                flaky.register_problem("x")
            assert bad.value.code == "bad-request" and FlakyHandler.hits.count("/v1/problems") == 1
    finally:
        server.shutdown()
        server.server_close()

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    start = time.monotonic()
    nowhere = KforgeClient(f"http://127.0.0.1:{port}", max_retries=2, backoff_s=0.01)
    with nowhere, pytest.raises(KforgeError) as failed:
        nowhere.health()
    assert (failed.value.status, failed.value.code) == (None, "connection-failed")
    assert time.monotonic() - start < 10


@pytest.mark.usefixtures("service_env")
def test_the_environment_names_the_service_and_token() -> None:
    with KforgeClient() as from_env:
        assert from_env.token == TOKEN
        assert from_env.register_problem(PROBLEM) == problem_id_of(PROBLEM)


def test_an_unknown_problem_id_is_registered_from_its_source_and_sent_again(client: KforgeClient) -> None:
    variant = PROBLEM + "\n# a variant this service has not seen (test_an_unknown_problem_id...)\n"
    problems = client.health()["problems"]
    job = client.evaluate([SOLUTION, WRONG], problem_id=problem_id_of(variant), problem_source=variant)
    assert job.problem_id == problem_id_of(variant) and job.rewards == pytest.approx([0.5, 0.2])
    assert client.health()["problems"] == problems + 1

    async def again() -> list[float | None]:
        async with AsyncKforgeClient(client.url, TOKEN) as async_client:
            assert (await async_client.health())["status"] == "ok"
            return (await async_client.evaluate([NO_CODE], problem_id=problem_id_of(variant))).rewards

    assert asyncio.run(again()) == [0.0]


def grpo_batch(conversational: bool) -> tuple[list[Any], list[Any], dict[str, list[Any]], list[float | None]]:
    """A GRPO batch mixing three problems out of order, with the columns of the kforge prompt
    dataset, as GRPOTrainer passes them (one value per sample), and the rewards expected."""
    rows = [
        (GELU, GELU_SOLUTION, 0.5),
        (PROBLEM, WRONG, 0.2),
        (PROBLEM, fenced(SOLUTION), 0.5),
        (BROKEN, SOLUTION, None),  # an evaluation error: no reward, TRL skips the sample
        (GELU, NO_CODE, 0.0),
        (PROBLEM, NO_CODE, 0.0),
        (GELU, fenced(GELU_SOLUTION), 0.5),
    ]
    prompts: list[Any] = [f"Write a Triton kernel for problem {i}" for i in range(len(rows))]
    completions: list[Any] = [text for _, text, _ in rows]
    if conversational:
        prompts = [[{"role": "user", "content": prompt}] for prompt in prompts]
        completions = [[{"role": "assistant", "content": text}] for text in completions]
        completions[2] = [
            {"role": "assistant", "content": "Let me think about the tiling first."},
            {"role": "user", "content": "go on"},
            {"role": "assistant", "content": fenced(SOLUTION)},
        ]
    sources = [source for source, _, _ in rows]
    columns = {
        "problem_id": [problem_id_of(source) for source in sources],
        "problem": ["gelu" if s is GELU else "scaled_add" for s in sources],
        "data_source": ["kforge/starter"] * len(rows),
        "reference_source": sources,
        "ability": ["triton"] * len(rows),
        "completion_ids": [[101, 102, 103]] * len(rows),
    }
    return prompts, completions, columns, [expected for _, _, expected in rows]


@pytest.mark.parametrize("conversational", [False, True], ids=["standard", "conversational"])
def test_trl_reward_function_called_as_grpo_trainer_calls_it(
    service: Service, client: KforgeClient, conversational: bool
) -> None:
    reward_function = make_reward_function(url=service.url, token=TOKEN)
    assert reward_function.__name__ == "kforge", "TRL logs reward/kforge/mean"
    prompts, completions, columns, expected = grpo_batch(conversational)
    extra_columns: dict[str, list[Any]] = {}
    metrics: dict[str, float] = {}
    evaluations_before = counter(client, "evaluate", 200)

    rewards = reward_function(
        prompts=prompts,
        completions=completions,
        trainer_state=object(),
        log_extra=extra_columns.__setitem__,
        log_metric=metrics.__setitem__,
        **columns,
    )

    assert rewards[3] is None and rewards == pytest.approx(expected)
    assert counter(client, "evaluate", 200) == evaluations_before + 3, "one request per problem"
    components = reward_function.last_components
    assert [c.get("correct") for c in components] == pytest.approx([0.3, 0.0, 0.3, None, 0.0, 0.0, 0.3])
    assert [r.outcome if r else None for r in reward_function.last_results] == [
        "accepted", "rejected", "accepted", "error", "rejected", "rejected", "accepted",
    ]  # fmt: skip
    assert extra_columns["kforge_outcome"][3] == "error"
    assert extra_columns["kforge_failed_stage"] == ["", "correctness", "", "", "extract", "extract", ""]
    assert metrics["kforge/accepted"] == pytest.approx(3 / 7)
    assert metrics["kforge/evaluation_errors"] == pytest.approx(1 / 7)
    assert metrics["kforge/correct"] == pytest.approx(0.3 * 3 / 6)


def test_trl_reward_function_without_trl_logging_and_with_a_named_formula(
    service: Service, client: KforgeClient
) -> None:
    # Registered here: with pytest-xdist the test that registers it may run in another worker's service.
    client.register_problem(PROBLEM)
    reward_function = make_reward_function(
        url=service.url, token=TOKEN, reward={"formula": "weighted", "weights": {"correct": 2, "compiled": 1}}
    )
    assert reward_function.__name__ == "kforge_weighted"
    rewards = reward_function(
        [["p"]] * 3, [SOLUTION, WRONG, NO_CODE], problem_id=[problem_id_of(PROBLEM)] * 3, trainer_state=None
    )
    assert rewards == pytest.approx([3.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="problem_id"):
        reward_function(["p"], [SOLUTION], other_column=["x"])


def test_async_trl_reward_function_reads_the_prompt_dataset_extra_info(service: Service) -> None:
    reward_function = make_async_reward_function(url=service.url, token=TOKEN, reward="tritonrl")
    assert inspect.iscoroutinefunction(reward_function), "TRL awaits it only if it is a coroutine function"
    assert reward_function.__name__ == "kforge_tritonrl"
    sources = [PROBLEM, GELU, PROBLEM, BROKEN]
    extra_info = [
        {"problem_id": problem_id_of(s), "problem": "p", "reference_source": s, "index": i}
        for i, s in enumerate(sources)
    ]
    reward_model = [{"style": "rule", "ground_truth": problem_id_of(s)} for s in sources]

    rewards = asyncio.run(
        reward_function(
            prompts=["p"] * 4,
            completions=[
                [{"role": "assistant", "content": c}] for c in (SOLUTION, GELU_SOLUTION, WRONG, SOLUTION)
            ],
            extra_info=extra_info,
            reward_model=reward_model,
            trainer_state=None,
        )
    )

    assert rewards == [1.0, 1.0, 0.0, None]
    assert reward_function.last_components[0]["r_correct"] == 1.0 and reward_function.last_components[3] == {}


@pytest.mark.usefixtures("service_env")
def test_verl_compute_score(monkeypatch: pytest.MonkeyPatch) -> None:
    extra_info = {"problem_id": problem_id_of(PROBLEM), "reference_source": PROBLEM, "index": 0}
    accepted = compute_score("kforge/starter", fenced(SOLUTION), problem_id_of(PROBLEM), extra_info)
    assert set(accepted) == {"score", "accepted", "eval_error", "speedup", "from_store"}
    assert (accepted["score"], accepted["accepted"], accepted["eval_error"], accepted["speedup"]) == (
        0.5, 1.0, 0.0, 0.0,
    )  # fmt: skip
    wrong = compute_score("kforge/starter", WRONG, problem_id_of(PROBLEM), extra_info)
    assert (wrong["score"], wrong["accepted"], wrong["eval_error"]) == (pytest.approx(0.2), 0.0, 0.0)

    variant = PROBLEM + "\n# a variant only verl's extra_info knows\n"
    registered = compute_score(
        "kforge/starter", SOLUTION, problem_id_of(variant), {"reference_source": variant, "num_turns": None}
    )
    assert registered["score"] == 0.5, "the unknown id was registered from extra_info's reference_source"

    broken = compute_score("kforge/starter", SOLUTION, problem_id_of(BROKEN), {"reference_source": BROKEN})
    assert (broken["score"], broken["eval_error"], broken["accepted"]) == (0.0, 1.0, 0.0)

    monkeypatch.setenv("KFORGE_REWARD", json.dumps({"formula": "weighted", "weights": {"correct": 1}}))
    assert compute_score("kforge/starter", SOLUTION, problem_id_of(PROBLEM), extra_info)["score"] == 1.0
    monkeypatch.setenv("KFORGE_REWARD", "tritonrl")
    assert compute_score("kforge/starter", WRONG, problem_id_of(PROBLEM), extra_info)["score"] == 0.0
    with pytest.raises(ValueError, match="ground_truth"):
        compute_score("kforge/starter", SOLUTION, None, {})


@pytest.mark.usefixtures("service_env")
def test_verl_compute_score_batch_as_the_batch_reward_manager_calls_it() -> None:
    # verl's BatchRewardManager passes numpy object arrays (non_tensor_batch) and reward_kwargs.
    sources = [GELU, PROBLEM, BROKEN, PROBLEM, GELU, PROBLEM]
    solutions = [GELU_SOLUTION, NO_CODE, SOLUTION, fenced(SOLUTION), NO_CODE, WRONG]
    extra_infos = np.array(
        [{"problem_id": problem_id_of(s), "reference_source": s, "index": i} for i, s in enumerate(sources)],
        dtype=object,
    )
    scores = compute_score_batch(
        data_sources=np.array(["kforge/starter"] * len(sources), dtype=object),
        solution_strs=solutions,
        ground_truths=[problem_id_of(s) for s in sources],
        extra_infos=extra_infos,
        concurrency=2,
    )
    assert [s["score"] for s in scores] == pytest.approx([0.5, 0.0, 0.0, 0.5, 0.0, 0.2])
    assert [s["eval_error"] for s in scores] == [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    assert [s["accepted"] for s in scores] == [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    assert all(set(s) == set(scores[0]) for s in scores), "verl keeps one list per key"
    assert compute_score_batch([], [], [], []) == []


def test_the_package_is_light() -> None:
    heavy = "{'torch', 'trl', 'verl'} & set(sys.modules)"
    code = f"import sys, kforge_client.trl, kforge_client.verl\nprint({heavy})"
    imported = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert imported.stdout.strip() == "set()", "the client imports neither torch, TRL nor verl"


def test_the_example_scores_completions_against_the_service(service: Service, tmp_path: Path) -> None:
    example = STARTER.parents[1] / "clients" / "python" / "examples" / "score_completions.py"
    right = tmp_path / "right.md"
    right.write_text(fenced(SOLUTION))
    wrong = tmp_path / "wrong.py"
    wrong.write_text(WRONG)
    result = subprocess.run(
        [sys.executable, str(example), str(STARTER / "01_scaled_add" / "problem.py"), str(right), str(wrong),
         "--url", service.url],
        env={**os.environ, "KFORGE_TOKEN": TOKEN}, capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "right.md: accepted, reward 0.500",
        "wrong.py: rejected at correctness, reward 0.200",
    ], result.stdout
