"""A scripted OpenAI-compatible chat endpoint on loopback, for the LLM proposer's tests.

Each POST to /v1/chat/completions takes the next reply of its script (a reply is text, or an HTTP
status to answer with); every request body and its headers are kept so a test can read the prompts.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | int  # text of the assistant's message, or an HTTP error status


class ScriptedEndpoint:
    def __init__(self, script: Callable[[int, dict[str, Any]], Reply]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.url = ""

    def answer(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self.lock:
            index = len(self.requests)
            self.requests.append(body)
            self.headers.append(headers)
        return self.script(index, body)

    def user_prompts(self) -> list[str]:
        return [str(request["messages"][-1]["content"]) for request in self.requests]


def handler_for(endpoint: ScriptedEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            if self.path != "/v1/chat/completions":
                self.send_error(404)
                return
            reply = endpoint.answer(body, {key.lower(): value for key, value in self.headers.items()})
            if isinstance(reply, int):
                self.send_error(reply, "scripted failure")
                return
            document = {
                "id": "scripted",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}}],
            }
            data = json.dumps(document).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def scripted_endpoint(script: Callable[[int, dict[str, Any]], Reply]) -> Iterator[ScriptedEndpoint]:
    endpoint = ScriptedEndpoint(script)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(endpoint))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    endpoint.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
