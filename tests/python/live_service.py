"""A real `kforge serve` on the CPU interpreter, started for a test: its port, JSON calls, SIGTERM."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from conftest import REPO, kforge_binary

TOKEN = "test-token-123"


class Service:
    def __init__(self, folder: Path, *extra: str) -> None:
        self.folder = folder
        (folder / "token").write_text(TOKEN + "\n")
        self.log = (folder / "serve.log").open("w")
        self.process = subprocess.Popen(
            [
                str(kforge_binary()), "serve", "--port", "0", "--device", "cpu", "--small", "--timeout", "60",
                "--store", str(folder / "store.sqlite"), "--token-file", str(folder / "token"),
                "--python", str(REPO / ".venv" / "bin" / "python"), *extra,
            ],
            stderr=self.log,
        )  # fmt: skip
        self.port = self._wait_for_port()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _wait_for_port(self) -> int:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            match = re.search(
                r"listening on http://127\.0\.0\.1:(\d+)", (self.folder / "serve.log").read_text()
            )
            if match:
                return int(match.group(1))
            assert self.process.poll() is None, (self.folder / "serve.log").read_text()
            time.sleep(0.05)
        raise AssertionError("kforge serve did not start")

    def call(
        self, path: str, body: Any = None, raw: bytes | None = None, token: str | None = TOKEN
    ) -> tuple[int, Any]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=600) as response:
                payload = response.read()
                status = response.status
        except urllib.error.HTTPError as error:
            payload = error.read()
            status = error.code
        text = payload.decode()
        return status, json.loads(text) if text.startswith(("{", "[")) else text

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=120)
        self.log.close()
        return code

    def log_tail(self, characters: int = 4000) -> str:
        """The end of the service's stderr: a crash's fatal-signal report lands here."""
        return (self.folder / "serve.log").read_text()[-characters:]
