"""Samples replies from an OpenAI-compatible chat-completions endpoint, several in parallel.

The LLM proposer of `kforge optimize` (and any other kforge stage that asks a model) runs this as
`python -m kforge.worker.chat_client --request REQ.json --out REPLIES.json`. The request holds the
endpoint (`url`: the API base such as http://127.0.0.1:8000/v1, or the full .../chat/completions),
`model`, `messages`, `n`, `temperature`, `max_tokens`, `timeout_s`, optionally `retry_backoff_s` (the
two waits before the retries) and `api_key_env`: the name of the
environment variable that holds the key (sent as a bearer token when set; never written anywhere).
Each of the n samples is one request (llama.cpp's server ignores the `n` field), sent from its own
thread; a request that fails on the network, with HTTP 429 or 5xx, is retried twice with a backoff.
The output always holds n replies, each with `text` or `error`, so one bad sample costs only itself.
Only the standard library: TLS and proxies (HTTPS_PROXY, SSL_CERT_FILE) work as Python does them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ATTEMPTS = 3
BACKOFF_S = (2.0, 8.0)
MAX_REPLY_BYTES = 16 * 2**20
MAX_SAMPLES = 64


def completions_url(url: str) -> str:
    """The chat-completions address of an API base; a full address is kept as it is."""
    url = url.strip()
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"the endpoint must be an http:// or https:// address, got {url!r}")
    if url.rstrip("/").endswith("/chat/completions"):
        return url.rstrip("/")
    return url.rstrip("/") + "/chat/completions"


def reply_text(body: bytes) -> str:
    """The first choice's message content, or a ValueError that says what the reply held instead."""
    try:
        document = json.loads(body)
    except json.JSONDecodeError as error:
        raise ValueError(f"the endpoint's reply is not JSON ({error}): {body[:200]!r}") from None
    if not isinstance(document, dict):
        raise ValueError(f"expected a JSON object with 'choices', got {type(document).__name__}")
    if "error" in document and "choices" not in document:
        raise ValueError(f"the endpoint reported an error: {json.dumps(document['error'])[:400]}")
    choices = document.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError(f"expected a non-empty 'choices' list, got {json.dumps(document)[:300]}")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise ValueError(f"the first choice has no text content: {json.dumps(choices[0])[:300]}")
    return content


def post_once(url: str, payload: bytes, headers: dict[str, str], timeout_s: float) -> bytes:
    request = urllib.request.Request(url, data=payload, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        body: bytes = response.read(MAX_REPLY_BYTES + 1)
    if len(body) > MAX_REPLY_BYTES:
        raise ValueError(f"the endpoint's reply is larger than {MAX_REPLY_BYTES} bytes")
    return body


def retryable(error: Exception) -> bool:
    if isinstance(error, urllib.error.HTTPError):
        return error.code == 429 or error.code >= 500
    return isinstance(error, (urllib.error.URLError, TimeoutError, ConnectionError))


def describe(error: Exception) -> str:
    if isinstance(error, urllib.error.HTTPError):
        detail = error.read(400).decode("utf-8", "replace") if error.fp else ""
        return f"HTTP {error.code} {error.reason}: {detail}".strip()
    if isinstance(error, urllib.error.URLError):
        return f"cannot reach the endpoint: {error.reason}"
    return str(error) or type(error).__name__


def sample(request: dict[str, Any], index: int) -> dict[str, Any]:
    """One reply: {'text': ...} or {'error': ...}."""
    url = completions_url(str(request["url"]))
    payload = json.dumps(
        {
            "model": request["model"],
            "messages": request["messages"],
            "temperature": request.get("temperature", 0.7),
            "max_tokens": request.get("max_tokens", 8192),
            "n": 1,
            "stream": False,
        }
    ).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    key = os.environ.get(str(request.get("api_key_env") or ""), "")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    timeout_s = float(request.get("timeout_s", 600))
    started = time.monotonic()
    for attempt in range(ATTEMPTS):
        try:
            text = reply_text(post_once(url, payload, headers, timeout_s))
            return {"text": text, "seconds": round(time.monotonic() - started, 3), "sample": index}
        except Exception as error:  # noqa: BLE001 - every failure becomes this sample's error
            if attempt + 1 == ATTEMPTS or not retryable(error):
                return {"error": describe(error), "sample": index}
            time.sleep(float(request.get("retry_backoff_s", BACKOFF_S)[attempt]))
    return {"error": "no attempt was made", "sample": index}


def sample_all(request: dict[str, Any]) -> list[dict[str, Any]]:
    n = int(request.get("n", 1))
    if not 1 <= n <= MAX_SAMPLES:
        raise ValueError(f"n must be between 1 and {MAX_SAMPLES}, got {n}")
    for field in ("url", "model", "messages"):
        if field not in request:
            raise ValueError(f"the request has no {field!r}")
    completions_url(str(request["url"]))  # a bad address is one error, not n
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(lambda index: sample(request, index), range(n)))


def failed_count(request: dict[str, Any]) -> int:
    """How many error replies a request that could not be sent gets: its n, within bounds."""
    n = request.get("n", 1)
    return max(1, min(n, MAX_SAMPLES)) if isinstance(n, int) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--request", type=Path, required=True, help="the request (JSON)")
    parser.add_argument("--out", type=Path, required=True, help="where the replies are written (JSON)")
    args = parser.parse_args()
    request: dict[str, Any] = {}
    try:
        loaded = json.loads(args.request.read_text())
        if not isinstance(loaded, dict):
            raise ValueError(f"expected a JSON object as the request, got {type(loaded).__name__}")
        request = loaded
        replies = sample_all(request)
    except (OSError, ValueError, TypeError) as error:
        print(f"chat_client: {error}", file=sys.stderr)
        replies = [{"error": str(error), "sample": i} for i in range(failed_count(request))]
    args.out.write_text(json.dumps({"replies": replies}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
