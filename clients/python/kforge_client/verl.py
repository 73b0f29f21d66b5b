"""kforge rewards for verl: a custom reward function and its batch variant.

What verl expects, from its documentation ("Implement Reward Function for Dataset", section
"Customized": https://github.com/volcengine/verl/blob/main/docs/preparation/reward_function.rst) and
its reward managers (verl/workers/reward_manager/naive.py and batch.py in the same repository):

- `custom_reward_function.path` names this file (or a file importing from it) and
  `custom_reward_function.name` the function; a function named `compute_score` needs no name;
- the default (naive) reward manager calls `compute_score(data_source=, solution_str=, ground_truth=,
  extra_info=)` once per response, `ground_truth` being the row's reward_model["ground_truth"];
- `reward_model.reward_manager=batch` calls `compute_score(data_sources=, solution_strs=,
  ground_truths=, extra_infos=, **reward_kwargs)` once per batch: use compute_score_batch there (one
  request per problem, concurrent, instead of one request per response);
- a score is a number, or a dict with the number under "score" and further fields that verl keeps as
  `reward_extra_info` (one list per key, so every dict carries the same keys, all numeric here) and
  logs; `custom_reward_function.reward_kwargs` arrive as keyword arguments.

The kforge prompt dataset (`kforge data prompts`) has reward_model.ground_truth = the problem id and
extra_info = {"problem_id", "problem", "reference_source", "index"}: the source is registered when the
service does not know the id (a new service, another store).

Configuration, by environment (read at each call) or keyword arguments (reward_kwargs) that win:
KFORGE_URL / url, KFORGE_TOKEN or KFORGE_TOKEN_FILE / token, KFORGE_REWARD / reward (a formula name or
a JSON spec, default "kforge"), concurrency (16), wait_s (600).

A null reward (an evaluation error: a broken problem, no GPU, a lost judge; not the candidate's doing)
becomes score 0.0 with eval_error 1.0: verl needs a number for every response and has no way to skip
one, and 0.0 is the reward of an empty answer under the default formula. Filter on eval_error (or
watch its mean) to tell those apart from real zeros.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from kforge_client.client import (
    AsyncKforgeClient,
    CompletionResult,
    KforgeClient,
    RewardSpec,
    Sample,
    evaluate_samples,
    resolve_token,
    resolve_url,
    run_sync,
)

SCORE_FIELDS = ("score", "accepted", "eval_error", "speedup", "from_store")

_clients: dict[tuple[str, str | None], KforgeClient] = {}
_clients_lock = threading.Lock()


def reward_from_env(reward: RewardSpec | None = None) -> RewardSpec:
    """The reward spec: the argument, else $KFORGE_REWARD (a formula name or a JSON object), else kforge."""
    if reward is not None:
        return reward
    text = os.environ.get("KFORGE_REWARD", "").strip()
    if not text:
        return "kforge"
    if text.startswith("{"):
        spec = json.loads(text)
        if not isinstance(spec, dict):
            raise ValueError("KFORGE_REWARD must be a formula name or a JSON object")
        return spec
    return text


def score_of(result: CompletionResult | None) -> dict[str, float]:
    """The dict verl gets for one result: score (the reward; 0.0 for an evaluation error), accepted,
    eval_error (1.0 when the reward is null or no result came), speedup (0.0 when not measured) and
    from_store (1.0 when the verdict came from the service's result store)."""
    if result is None or result.reward is None:
        return {
            "score": 0.0,
            "accepted": 0.0,
            "eval_error": 1.0,
            "speedup": 0.0,
            "from_store": float(bool(result and result.from_store)),
        }
    return {
        "score": float(result.reward),
        "accepted": float(result.outcome == "accepted"),
        "eval_error": 0.0,
        "speedup": float(result.speedup or 0.0),
        "from_store": float(result.from_store),
    }


def _sample(solution_str: str, ground_truth: Any, extra_info: Any) -> Sample:
    extra = extra_info if isinstance(extra_info, Mapping) else {}
    problem_id = ground_truth if isinstance(ground_truth, str) and ground_truth else extra.get("problem_id")
    source = extra.get("reference_source") or None
    if not problem_id and not source:
        raise ValueError(
            "kforge compute_score: ground_truth must be the problem id (reward_model.ground_truth), or "
            "extra_info must carry 'problem_id' or 'reference_source'"
        )
    return Sample(str(solution_str), str(problem_id) if problem_id else None, source)


def _client(url: str, token: str | None) -> KforgeClient:
    # One client per process and service, reused across calls (connections kept alive).
    with _clients_lock:
        client = _clients.get((url, token))
        if client is None:
            client = _clients[(url, token)] = KforgeClient(url, token)
        return client


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """verl's custom reward function: one response (see the module's documentation). For whole batches
    prefer compute_score_batch with `reward_model.reward_manager=batch`."""
    sample = _sample(solution_str, ground_truth, extra_info)
    client = _client(resolve_url(kwargs.get("url")), resolve_token(kwargs.get("token")))
    job = client.evaluate(
        [sample.completion],
        problem_id=sample.problem_id,
        problem_source=sample.problem_source,
        reward=reward_from_env(kwargs.get("reward")),
        wait_s=float(kwargs.get("wait_s", 600.0)),
    )
    return score_of(job.results[0] if job.results else None)


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """verl's batch reward function (`reward_model.reward_manager=batch`): the responses are grouped by
    problem, one request per problem, at most `concurrency` (16) at once; one dict per response, in order."""
    solutions = list(solution_strs)
    truths = list(ground_truths)
    extras = list(extra_infos) if extra_infos is not None else [None] * len(solutions)
    if not len(truths) == len(extras) == len(solutions):
        raise ValueError("kforge compute_score_batch: the lists differ in length")
    samples = [_sample(s, truth, extra) for s, truth, extra in zip(solutions, truths, extras, strict=True)]
    url, token = resolve_url(kwargs.get("url")), resolve_token(kwargs.get("token"))
    reward = reward_from_env(kwargs.get("reward"))

    async def score() -> list[CompletionResult | None]:
        async with AsyncKforgeClient(url, token) as client:
            return await evaluate_samples(
                client,
                samples,
                reward,
                int(kwargs.get("concurrency", 16)),
                float(kwargs.get("wait_s", 600.0)),
            )

    return [score_of(result) for result in run_sync(score)]
