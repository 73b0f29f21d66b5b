"""Clients of the kforge reward service (`kforge serve`, API v1: docs/api.md in the kforge repository).

`KforgeClient` is synchronous (httpx.Client), `AsyncKforgeClient` asynchronous (httpx.AsyncClient);
both speak the same API and return the same typed results. `evaluate_samples` is the batching core
of the TRL and verl adapters: one request per problem, concurrently, results back in sample order.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import os
import random
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

DEFAULT_URL = "http://127.0.0.1:8000"
MAX_COMPLETIONS_PER_REQUEST = 1024  # the service answers 413 too-many-completions past this
RETRYABLE_503_CODES = frozenset({"shutting-down", "too-many-connections", "unavailable"})

# A formula name ("kforge", "autotriton", "tritonrl", "drkernel") or a spec object (docs/rewards.md).
RewardSpec = str | Mapping[str, Any]

# Transport failures after which re-sending cannot run an evaluation twice at once: the connection was
# refused or dropped before an answer (a read timeout is not here: the service may still be working).
_RETRYABLE_TRANSPORT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError, httpx.ReadError)

T = TypeVar("T")


class KforgeError(Exception):
    """An error answer of the service (`{"error": {"code", "message"}}`) or a failure to reach it.

    `status` is the HTTP status (None when no answer came: code "connection-failed" or "timeout"),
    `code` the service's error code (docs/api.md, "Errors"), `message` its explanation."""

    def __init__(self, status: int | None, code: str, message: str, job_id: str | None = None) -> None:
        super().__init__(f"{status if status is not None else 'no answer'} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.job_id = job_id


@dataclass(frozen=True)
class CompletionResult:
    """The verdict summary and reward of one completion (a result of the job document)."""

    index: int
    outcome: str  # "accepted", "rejected" or "error"
    failed_stage: str | None
    summary: str
    speedup: float | None
    reward: float | None  # None: an evaluation error, not the candidate's fault: skip the sample
    components: dict[str, Any]
    from_store: bool
    formula: str | None = None
    explanation: str | None = None
    seconds: float | None = None
    verdict: dict[str, Any] | None = field(default=None, repr=False)  # the full verdict (include_verdict)

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> CompletionResult:
        reward = document.get("reward") or {}
        value = reward.get("reward")
        return cls(
            index=int(document["index"]),
            outcome=str(document.get("outcome", "error")),
            failed_stage=document.get("failed_stage"),
            summary=str(document.get("summary", "")),
            speedup=_optional_float(document.get("speedup")),
            reward=_optional_float(value),
            components=dict(reward.get("components") or {}),
            from_store=bool(document.get("from_store", False)),
            formula=reward.get("formula"),
            explanation=reward.get("explanation"),
            seconds=_optional_float(document.get("seconds")),
            verdict=document.get("verdict"),
        )


@dataclass(frozen=True)
class EvaluationJob:
    """A job document: `results[i]` is None while completion i is not evaluated yet."""

    job_id: str
    status: str  # "queued", "running", "done" or "failed" (the engine failed: see error)
    done: int
    total: int
    info: dict[str, Any]
    results: list[CompletionResult | None]
    error: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed")

    @property
    def problem_id(self) -> str | None:
        return self.info.get("problem_id")

    @property
    def rewards(self) -> list[float | None]:
        """One reward per completion; None for an evaluation error or a result not there yet."""
        return [result.reward if result is not None else None for result in self.results]

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> EvaluationJob:
        results = [
            CompletionResult.from_json(result) if result is not None else None
            for result in document.get("results") or []
        ]
        return cls(
            job_id=str(document["job_id"]),
            status=str(document["status"]),
            done=int(document.get("done", 0)),
            total=int(document.get("total", len(results))),
            info=dict(document.get("info") or {}),
            results=results,
            error=document.get("error"),
            raw=dict(document),
        )


def problem_id_of(source: str) -> str:
    """The service's id of a problem source: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def resolve_url(url: str | None = None) -> str:
    return (url or os.environ.get("KFORGE_URL") or DEFAULT_URL).rstrip("/")


def resolve_token(token: str | None = None) -> str | None:
    """The token: the argument, else $KFORGE_TOKEN, else the first line of the file $KFORGE_TOKEN_FILE."""
    if token:
        return token
    if os.environ.get("KFORGE_TOKEN"):
        return os.environ["KFORGE_TOKEN"]
    path = os.environ.get("KFORGE_TOKEN_FILE")
    if path:
        with open(path, encoding="utf-8") as file:
            first = file.readline().strip()
        return first or None
    return None


def _optional_float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _error_from(response: httpx.Response) -> KforgeError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        return KforgeError(response.status_code, str(error.get("code", "")), str(error.get("message", "")))
    return KforgeError(response.status_code, f"http-{response.status_code}", response.text[:500])


def _error_code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("code"))
    return None


def _retry_delay(attempt: int, backoff_s: float, response: httpx.Response | None = None) -> float:
    """Exponential backoff with jitter, capped at 30 s; a Retry-After header (seconds) wins."""
    if response is not None:
        try:
            return min(float(response.headers.get("retry-after", "")), 30.0)
        except ValueError:
            pass
    return min(backoff_s * 2.0**attempt, 30.0) * (0.5 + random.random() / 2)


def _should_retry(response: httpx.Response) -> bool:
    # Never a 4xx: the request itself is wrong and will stay wrong.
    return response.status_code == 503 and _error_code(response) in RETRYABLE_503_CODES


def _evaluate_body(
    completions: Sequence[str],
    problem_id: str | None,
    problem_source: str | None,
    reward: RewardSpec,
    wait_s: float,
    include_verdict: bool,
) -> dict[str, Any]:
    if isinstance(completions, str):
        raise TypeError("completions must be a list of strings, not one string")
    body: dict[str, Any] = {
        "completions": list(completions),
        "reward": reward if isinstance(reward, str) else dict(reward),
        "wait_s": wait_s,
        "include_verdict": include_verdict,
    }
    if problem_id:
        body["problem_id"] = problem_id
    elif problem_source:
        body["problem_source"] = problem_source
    else:
        raise ValueError("evaluate needs problem_id (from register_problem) or problem_source")
    return body


def _is_unknown_problem(error: KforgeError) -> bool:
    return error.status == 404 and error.code == "unknown-problem"


def _timeout_error(job: EvaluationJob, wait_s: float) -> KforgeError:
    return KforgeError(
        None,
        "timeout",
        f"job {job.job_id} is still {job.status} ({job.done}/{job.total}) after {wait_s:g} s; "
        "it goes on in the service: fetch it later with job(job_id)",
        job_id=job.job_id,
    )


class _Base:
    def __init__(
        self, url: str | None, token: str | None, timeout: float, max_retries: int, backoff_s: float
    ) -> None:
        self.url = resolve_url(url)
        self.token = resolve_token(token)
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_s = backoff_s

    def _headers(self) -> dict[str, str]:
        headers = {"User-Agent": "kforge-client/0.1.0"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def _evaluate_timeout(self, wait_s: float) -> httpx.Timeout:
        # The service holds the answer up to wait_s before it answers 202: read past that.
        return httpx.Timeout(self.timeout, read=wait_s + self.timeout)


class KforgeClient(_Base):
    """Synchronous client of `kforge serve`.

    url: the service (default $KFORGE_URL or http://127.0.0.1:8000); token: the bearer token (default
    $KFORGE_TOKEN or the first line of $KFORGE_TOKEN_FILE); timeout: seconds for connecting and for
    the short calls (an evaluation waits wait_s more); max_retries, backoff_s: how often and how
    patiently to retry a refused or dropped connection and a 503 shutting-down, too-many-connections
    or unavailable (exponential backoff from backoff_s, jittered); a 4xx is never retried."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 5,
        backoff_s: float = 0.5,
    ) -> None:
        super().__init__(url, token, timeout, max_retries, backoff_s)
        self._http = httpx.Client(base_url=self.url, headers=self._headers(), timeout=timeout)

    def __enter__(self) -> KforgeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _send(
        self, method: str, path: str, body: Any = None, timeout: httpx.Timeout | float | None = None
    ) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = self._http.request(
                    method, path, json=body, timeout=timeout if timeout is not None else self.timeout
                )
            except _RETRYABLE_TRANSPORT as error:
                if attempt >= self.max_retries:
                    raise KforgeError(
                        None, "connection-failed", f"{method} {self.url}{path}: {error!r}"
                    ) from error
                time.sleep(_retry_delay(attempt, self.backoff_s))
            else:
                if not _should_retry(response) or attempt >= self.max_retries:
                    return response
                time.sleep(_retry_delay(attempt, self.backoff_s, response))
            attempt += 1

    def _json(
        self, method: str, path: str, body: Any = None, timeout: httpx.Timeout | float | None = None
    ) -> Any:
        response = self._send(method, path, body, timeout)
        if response.status_code not in (200, 202):
            raise _error_from(response)
        return response.json()

    def health(self) -> dict[str, Any]:
        """GET /v1/health (no token needed). A draining service answers 503 with status "draining":
        that document is returned too."""
        response = self._send("GET", "/v1/health")
        if response.status_code == 503 and _error_code(response) is None:
            return dict(response.json())
        if response.status_code != 200:
            raise _error_from(response)
        return dict(response.json())

    def register_problem(self, source: str) -> str:
        """POST /v1/problems: the problem's id (the same source always gets the same id)."""
        return str(self._json("POST", "/v1/problems", {"source": source})["problem_id"])

    def job(self, job_id: str) -> EvaluationJob:
        """GET /v1/jobs/ID: the job and the results finished so far."""
        return EvaluationJob.from_json(self._json("GET", f"/v1/jobs/{job_id}"))

    def wait_job(self, job_id: str, timeout_s: float = 600.0) -> EvaluationJob:
        """Polls GET /v1/jobs/ID until the job is done or failed; KforgeError "timeout" past timeout_s."""
        deadline = time.monotonic() + timeout_s
        delay = 0.2
        while True:
            job = self.job(job_id)
            if job.finished:
                return job
            if time.monotonic() >= deadline:
                raise _timeout_error(job, timeout_s)
            time.sleep(min(delay, max(deadline - time.monotonic(), 0.0)))
            delay = min(delay * 1.5, 2.0)

    def evaluate(
        self,
        completions: Sequence[str],
        problem_id: str | None = None,
        problem_source: str | None = None,
        reward: RewardSpec = "kforge",
        wait_s: float = 600.0,
        include_verdict: bool = False,
    ) -> EvaluationJob:
        """POST /v1/evaluate. By problem_id, or by problem_source (registered on the way). With both,
        the id is sent and, should the service not know it (404 unknown-problem, e.g. a new service),
        the source is registered and the request sent once more. The answer is waited for up to wait_s
        seconds (polling the job when the service answers 202 first); wait_s=0 returns the queued job
        at once. Past wait_s: KforgeError "timeout" carrying the job id (the job goes on)."""
        start = time.monotonic()
        body = _evaluate_body(completions, problem_id, problem_source, reward, wait_s, include_verdict)
        try:
            document = self._json("POST", "/v1/evaluate", body, self._evaluate_timeout(wait_s))
        except KforgeError as error:
            if not (_is_unknown_problem(error) and problem_id and problem_source):
                raise
            body["problem_id"] = self.register_problem(problem_source)
            document = self._json("POST", "/v1/evaluate", body, self._evaluate_timeout(wait_s))
        job = EvaluationJob.from_json(document)
        if job.finished or wait_s == 0:
            return job
        return self.wait_job(job.job_id, max(wait_s - (time.monotonic() - start), 0.0))

    def metrics(self) -> str:
        """GET /metrics: the Prometheus text."""
        response = self._send("GET", "/metrics")
        if response.status_code != 200:
            raise _error_from(response)
        return response.text


class AsyncKforgeClient(_Base):
    """Asynchronous client of `kforge serve`: the same methods as KforgeClient, to await.

    Use it inside one event loop (`async with AsyncKforgeClient() as client:`); its connections
    belong to that loop."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 5,
        backoff_s: float = 0.5,
        max_connections: int = 64,
    ) -> None:
        super().__init__(url, token, timeout, max_retries, backoff_s)
        self._http = httpx.AsyncClient(
            base_url=self.url,
            headers=self._headers(),
            timeout=timeout,
            limits=httpx.Limits(max_connections=max_connections),
        )

    async def __aenter__(self) -> AsyncKforgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _send(
        self, method: str, path: str, body: Any = None, timeout: httpx.Timeout | float | None = None
    ) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    method, path, json=body, timeout=timeout if timeout is not None else self.timeout
                )
            except _RETRYABLE_TRANSPORT as error:
                if attempt >= self.max_retries:
                    raise KforgeError(
                        None, "connection-failed", f"{method} {self.url}{path}: {error!r}"
                    ) from error
                await asyncio.sleep(_retry_delay(attempt, self.backoff_s))
            else:
                if not _should_retry(response) or attempt >= self.max_retries:
                    return response
                await asyncio.sleep(_retry_delay(attempt, self.backoff_s, response))
            attempt += 1

    async def _json(
        self, method: str, path: str, body: Any = None, timeout: httpx.Timeout | float | None = None
    ) -> Any:
        response = await self._send(method, path, body, timeout)
        if response.status_code not in (200, 202):
            raise _error_from(response)
        return response.json()

    async def health(self) -> dict[str, Any]:
        response = await self._send("GET", "/v1/health")
        if response.status_code == 503 and _error_code(response) is None:
            return dict(response.json())
        if response.status_code != 200:
            raise _error_from(response)
        return dict(response.json())

    async def register_problem(self, source: str) -> str:
        return str((await self._json("POST", "/v1/problems", {"source": source}))["problem_id"])

    async def job(self, job_id: str) -> EvaluationJob:
        return EvaluationJob.from_json(await self._json("GET", f"/v1/jobs/{job_id}"))

    async def wait_job(self, job_id: str, timeout_s: float = 600.0) -> EvaluationJob:
        deadline = time.monotonic() + timeout_s
        delay = 0.2
        while True:
            job = await self.job(job_id)
            if job.finished:
                return job
            if time.monotonic() >= deadline:
                raise _timeout_error(job, timeout_s)
            await asyncio.sleep(min(delay, max(deadline - time.monotonic(), 0.0)))
            delay = min(delay * 1.5, 2.0)

    async def evaluate(
        self,
        completions: Sequence[str],
        problem_id: str | None = None,
        problem_source: str | None = None,
        reward: RewardSpec = "kforge",
        wait_s: float = 600.0,
        include_verdict: bool = False,
    ) -> EvaluationJob:
        """See KforgeClient.evaluate."""
        start = time.monotonic()
        body = _evaluate_body(completions, problem_id, problem_source, reward, wait_s, include_verdict)
        try:
            document = await self._json("POST", "/v1/evaluate", body, self._evaluate_timeout(wait_s))
        except KforgeError as error:
            if not (_is_unknown_problem(error) and problem_id and problem_source):
                raise
            body["problem_id"] = await self.register_problem(problem_source)
            document = await self._json("POST", "/v1/evaluate", body, self._evaluate_timeout(wait_s))
        job = EvaluationJob.from_json(document)
        if job.finished or wait_s == 0:
            return job
        return await self.wait_job(job.job_id, max(wait_s - (time.monotonic() - start), 0.0))

    async def metrics(self) -> str:
        response = await self._send("GET", "/metrics")
        if response.status_code != 200:
            raise _error_from(response)
        return response.text


@dataclass(frozen=True)
class Sample:
    """One completion to score, with its problem (the id, the source, or both)."""

    completion: str
    problem_id: str | None = None
    problem_source: str | None = None


async def evaluate_samples(
    client: AsyncKforgeClient,
    samples: Sequence[Sample],
    reward: RewardSpec = "kforge",
    concurrency: int = 16,
    wait_s: float = 600.0,
    on_error: str = "raise",
) -> list[CompletionResult | None]:
    """Evaluates samples of mixed problems: one /v1/evaluate request per problem (split past 1024
    completions), at most `concurrency` at once; the results come back in sample order (None where
    no result came). on_error="raise": the first request error is raised once all requests have
    ended; "none": a failed request leaves its samples None, with a warning, and the others count."""
    if on_error not in ("raise", "none"):
        raise ValueError('on_error must be "raise" or "none"')
    groups: dict[str, list[int]] = {}
    for index, sample in enumerate(samples):
        key = sample.problem_id or (problem_id_of(sample.problem_source) if sample.problem_source else None)
        if key is None:
            raise ValueError(f"sample {index} has neither a problem id nor a problem source")
        groups.setdefault(key, []).append(index)
    semaphore = asyncio.Semaphore(max(concurrency, 1))
    results: list[CompletionResult | None] = [None] * len(samples)

    async def run(indices: list[int]) -> None:
        problem_id = next((samples[i].problem_id for i in indices if samples[i].problem_id), None)
        source = next((samples[i].problem_source for i in indices if samples[i].problem_source), None)
        async with semaphore:
            try:
                job = await client.evaluate(
                    [samples[i].completion for i in indices],
                    problem_id=problem_id,
                    problem_source=source,
                    reward=reward,
                    wait_s=wait_s,
                )
            except KforgeError as error:
                if on_error == "raise":
                    raise
                warnings.warn(f"kforge: {len(indices)} samples left without a reward: {error}", stacklevel=2)
                return
        for result in job.results:
            if result is not None and 0 <= result.index < len(indices):
                results[indices[result.index]] = result

    chunks = [
        indices[start : start + MAX_COMPLETIONS_PER_REQUEST]
        for indices in groups.values()
        for start in range(0, len(indices), MAX_COMPLETIONS_PER_REQUEST)
    ]
    outcomes = await asyncio.gather(*(run(chunk) for chunk in chunks), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return results


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Runs a coroutine to completion from synchronous code, also when the caller is itself inside a
    running event loop (a notebook, an async trainer): then on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_as_coroutine(make))
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(_as_coroutine(make))).result()


async def _as_coroutine(make: Callable[[], Awaitable[T]]) -> T:
    return await make()
