"""Python client of the kforge reward service (`kforge serve`) with TRL and verl adapters.

    from kforge_client import KforgeClient
    with KforgeClient("http://127.0.0.1:8000", token="...") as client:
        job = client.evaluate(["<completion>"], problem_source=open("problem.py").read())
        print(job.rewards)

The adapters are in kforge_client.trl (make_reward_function, make_async_reward_function) and
kforge_client.verl (compute_score, compute_score_batch); neither imports TRL or verl.
"""

from kforge_client.client import (
    DEFAULT_URL,
    AsyncKforgeClient,
    CompletionResult,
    EvaluationJob,
    KforgeClient,
    KforgeError,
    RewardSpec,
    Sample,
    evaluate_samples,
    problem_id_of,
)
from kforge_client.trl import make_async_reward_function, make_reward_function
from kforge_client.verl import compute_score, compute_score_batch

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_URL",
    "AsyncKforgeClient",
    "CompletionResult",
    "EvaluationJob",
    "KforgeClient",
    "KforgeError",
    "RewardSpec",
    "Sample",
    "__version__",
    "compute_score",
    "compute_score_batch",
    "evaluate_samples",
    "make_async_reward_function",
    "make_reward_function",
    "problem_id_of",
]
