"""kforge rewards for TRL's GRPOTrainer (and RLOOTrainer: the same reward-function contract).

What TRL expects, from its documentation (GRPO Trainer, "Using a custom reward function":
https://github.com/huggingface/trl/blob/main/docs/source/grpo_trainer.md, rendered at
https://huggingface.co/docs/trl/grpo_trainer):

- the trainer calls `reward_func(prompts=..., completions=..., completion_ids=..., trainer_state=...,
  **columns)`: every dataset column but `prompt` arrives as a list, one value per sample (so the
  `problem_id` and `reference_source` columns of the kforge prompt dataset come for free); `**kwargs`
  is the way to accept the rest;
- completions are strings (standard format) or lists of messages (conversational format);
- it returns one float per completion, and may return None for a sample: TRL turns None into NaN
  and ignores it ("Example 4: Multi-task reward functions"), which is what an evaluation error
  (a null reward: not the candidate's fault) needs;
- reward functions may be `async def` coroutines, awaited concurrently with `asyncio.gather`
  ("Example 5: Asynchronous reward functions"; added by huggingface/trl PR #4567, December 2025).
  TRL tells them apart with `inspect.iscoroutinefunction`, so the async variant here is a real
  `async def` function, not a callable object (huggingface/trl PR #7213); a TRL release older than
  that support calls every reward function synchronously: use make_reward_function there;
- metrics are logged as `reward/{reward_func_name}/mean` (and `/std`), the name being the function's
  `__name__`;
- newer TRL (huggingface/trl PR #5233, March 2026) also passes `log_extra(column, values)` (extra
  columns of the completions table, one value per sample) and `log_metric(name, value)` (a scalar
  averaged per logging step); when they are there, the outcome and failed stage of every completion
  and the batch's mean reward components are logged through them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, cast

from kforge_client.client import (
    AsyncKforgeClient,
    CompletionResult,
    RewardSpec,
    Sample,
    evaluate_samples,
    run_sync,
)


class TrlRewardFunction(Protocol):
    """A TRL reward function; after each call, last_results and last_components hold the batch's
    results and reward components in sample order ({} where there was no result)."""

    __name__: str
    last_results: list[CompletionResult | None]
    last_components: list[dict[str, Any]]

    def __call__(
        self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
    ) -> list[float | None]: ...


class AsyncTrlRewardFunction(Protocol):
    __name__: str
    last_results: list[CompletionResult | None]
    last_components: list[dict[str, Any]]

    async def __call__(
        self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
    ) -> list[float | None]: ...


def completion_text(completion: Any) -> str:
    """The text of a completion: a string as it is; a conversational completion (a list of
    {"role", "content"} messages) gives its last assistant message (the last message if none is
    marked assistant); content given as parts ([{"type": "text", "text": ...}]) is joined."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return _content_text(completion.get("content"))
    if isinstance(completion, Sequence):
        messages = [message for message in completion if isinstance(message, Mapping)]
        if not messages:
            raise TypeError("a conversational completion must be a list of {'role', 'content'} messages")
        assistant = [message for message in messages if message.get("role") == "assistant"]
        return _content_text((assistant or messages)[-1].get("content"))
    raise TypeError(f"a completion must be a string or a list of messages, got {type(completion).__name__}")


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(
            str(part.get("text", "")) if isinstance(part, Mapping) else str(part) for part in content
        )
    return str(content)


def reward_name(reward: RewardSpec) -> str:
    """TRL logs under the function's name: "kforge" for the default formula, else "kforge_<formula>"."""
    formula = reward if isinstance(reward, str) else str(reward.get("formula", "kforge"))
    return "kforge" if formula == "kforge" else f"kforge_{formula}"


class _Scorer:
    def __init__(
        self,
        url: str | None,
        token: str | None,
        reward: RewardSpec,
        problem_column: str,
        source_column: str,
        name: str,
        concurrency: int,
        wait_s: float,
        timeout: float,
        on_error: str,
    ) -> None:
        self.url = url
        self.token = token
        self.reward = reward
        self.problem_column = problem_column
        self.source_column = source_column
        self.name = name
        self.concurrency = concurrency
        self.wait_s = wait_s
        self.timeout = timeout
        self.on_error = on_error

    def samples(self, completions: Sequence[Any], columns: Mapping[str, Any]) -> list[Sample]:
        count = len(completions)
        ids = _column(columns, self.problem_column, count)
        sources = _column(columns, self.source_column, count)
        extra_infos = _column(columns, "extra_info", count)
        reward_models = _column(columns, "reward_model", count)
        samples = []
        for index, completion in enumerate(completions):
            extra = extra_infos[index] if extra_infos and isinstance(extra_infos[index], Mapping) else {}
            model = (
                reward_models[index] if reward_models and isinstance(reward_models[index], Mapping) else {}
            )
            problem_id = (ids[index] if ids else None) or extra.get("problem_id") or model.get("ground_truth")
            source = (sources[index] if sources else None) or extra.get("reference_source")
            if not problem_id and not source:
                raise ValueError(
                    f"kforge reward: sample {index} names no problem: the dataset needs a "
                    f"'{self.problem_column}' column (the service's problem id) or a "
                    f"'{self.source_column}' column (the problem source); TRL passes every column "
                    "but 'prompt' to the reward function"
                )
            samples.append(
                Sample(completion_text(completion), str(problem_id) if problem_id else None, source or None)
            )
        return samples

    async def score(
        self, owner: object, completions: Sequence[Any], columns: Mapping[str, Any]
    ) -> list[float | None]:
        samples = self.samples(completions, columns)
        async with AsyncKforgeClient(self.url, self.token, timeout=self.timeout) as client:
            results = await evaluate_samples(
                client, samples, self.reward, self.concurrency, self.wait_s, self.on_error
            )
        vars(owner).update(
            last_results=results,
            last_components=[dict(result.components) if result else {} for result in results],
        )
        self.log(results, columns)
        return [result.reward if result is not None else None for result in results]

    def log(self, results: list[CompletionResult | None], columns: Mapping[str, Any]) -> None:
        log_extra, log_metric = columns.get("log_extra"), columns.get("log_metric")
        if callable(log_extra):
            log_extra("kforge_outcome", [result.outcome if result else "no-result" for result in results])
            log_extra(
                "kforge_failed_stage", [(result.failed_stage or "") if result else "" for result in results]
            )
        if callable(log_metric) and results:
            log_metric(
                f"{self.name}/accepted",
                sum(bool(r and r.outcome == "accepted") for r in results) / len(results),
            )
            log_metric(
                f"{self.name}/evaluation_errors",
                sum(r is None or r.reward is None for r in results) / len(results),
            )
            sums: dict[str, list[float]] = {}
            for result in results:
                for key, value in (result.components if result and result.reward is not None else {}).items():
                    numeric = isinstance(value, int | float) and not isinstance(value, bool)
                    if numeric and math.isfinite(value) and not key.endswith("_cap"):  # caps are settings
                        sums.setdefault(key, []).append(float(value))
            for key, values in sums.items():
                log_metric(f"{self.name}/{key}", sum(values) / len(values))


def _column(columns: Mapping[str, Any], name: str, count: int) -> list[Any] | None:
    values = columns.get(name)
    if values is None:
        return None
    if isinstance(values, str | Mapping):
        return [values] * count
    values = list(values)
    if len(values) != count:
        raise ValueError(f"kforge reward: column '{name}' has {len(values)} values for {count} completions")
    return values


def _scorer(
    url: str | None,
    token: str | None,
    reward: RewardSpec,
    problem_column: str,
    source_column: str,
    name: str | None,
    concurrency: int,
    wait_s: float,
    timeout: float,
    on_error: str,
) -> _Scorer:
    if on_error not in ("raise", "none"):
        raise ValueError('on_error must be "raise" or "none"')
    return _Scorer(
        url, token, reward, problem_column, source_column, name or reward_name(reward), concurrency, wait_s,
        timeout, on_error,
    )  # fmt: skip


def _dress(function: Any, name: str) -> None:
    function.__name__ = name
    function.__qualname__ = name
    vars(function).update(last_results=[], last_components=[])


def make_reward_function(
    url: str | None = None,
    token: str | None = None,
    reward: RewardSpec = "kforge",
    problem_column: str = "problem_id",
    source_column: str = "reference_source",
    name: str | None = None,
    concurrency: int = 16,
    wait_s: float = 600.0,
    timeout: float = 30.0,
    on_error: str = "raise",
) -> TrlRewardFunction:
    """A synchronous TRL reward function scoring completions with kforge.

    The problem of each sample is its `problem_column` value (the service's id; default column
    "problem_id"), its `source_column` value (the problem source, registered when the service does
    not know the id; default "reference_source"), else extra_info["problem_id"/"reference_source"]
    or reward_model["ground_truth"]: the columns of the `kforge data prompts` dataset. Samples are
    grouped by problem, one /v1/evaluate request per problem, at most `concurrency` at once, and the
    rewards come back in sample order: None for an evaluation error (TRL skips it). url/token: see
    KforgeClient ($KFORGE_URL, $KFORGE_TOKEN, $KFORGE_TOKEN_FILE). reward: a formula name or a spec
    (docs/rewards.md). name: the function's __name__, under which TRL logs (default "kforge" or
    "kforge_<formula>"). on_error="none" leaves a failed request's samples None instead of raising."""
    scorer = _scorer(
        url, token, reward, problem_column, source_column, name, concurrency, wait_s, timeout, on_error
    )

    def kforge_reward(
        prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
    ) -> list[float | None]:
        return run_sync(lambda: scorer.score(kforge_reward, completions, kwargs))

    _dress(kforge_reward, scorer.name)
    return cast(TrlRewardFunction, kforge_reward)


def make_async_reward_function(
    url: str | None = None,
    token: str | None = None,
    reward: RewardSpec = "kforge",
    problem_column: str = "problem_id",
    source_column: str = "reference_source",
    name: str | None = None,
    concurrency: int = 16,
    wait_s: float = 600.0,
    timeout: float = 30.0,
    on_error: str = "raise",
) -> AsyncTrlRewardFunction:
    """The `async def` variant of make_reward_function (same arguments and results), for a TRL that
    awaits asynchronous reward functions: the evaluations overlap with the other reward functions."""
    scorer = _scorer(
        url, token, reward, problem_column, source_column, name, concurrency, wait_s, timeout, on_error
    )

    async def kforge_reward(
        prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
    ) -> list[float | None]:
        return await scorer.score(kforge_reward, completions, kwargs)

    _dress(kforge_reward, scorer.name)
    return cast(AsyncTrlRewardFunction, kforge_reward)
