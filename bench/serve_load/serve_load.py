"""Load and fault benchmark for the reward service `kforge serve` (docs/api.md).

Modes:
  load  (default) open-loop requests at a target rate: about 2/3 ordinary ones (evaluations that the
        static rules reject, health, problem registration, job polls, metrics) and 1/3 malformed or
        hostile ones (bad JSON, truncated and oversized bodies, slow-loris headers, wrong types, bad
        reward specs, unknown routes, wrong methods, missing or wrong tokens), plus a few candidates that
        pass the static rules and then hang, crash or fork (sent with wait_s=0 and polled). Every request
        must be answered with an HTTP status and a JSON body, every job must finish with a result for
        each completion, the service's resident memory is sampled every 0.5 s; then a connection flood,
        SIGTERM, a restart on the same store that must answer a finished evaluation from the store.
  grpo  one GRPO step of reward requests: --prompts prompt groups cycling over a suite's problems, each
        with --group completions derived from the problem's solution.py (correct copies, wrong results, a
        no-code answer, a statically rejected one), sent at once, one request per group as a TRL reward
        function would; wall time, completions/s, latencies, outcomes, rewards.

The service is started here (`kforge serve --port 0 ...`) unless --url names a running one. Writes a
JSON report (--json-out) and prints a markdown report. Exit status 0 when every check passed.
Commands: bench/serve_load/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import hashlib
import json
import math
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent / "throughput"))  # the checked solution edits of the throughput bench

import make_candidates  # noqa: E402

STARTER = REPO / "problems" / "starter"
CANDIDATES = REPO / "tests" / "candidates"
ENGINE_PROBLEM = "01_scaled_add"  # the problem of the hostile candidates that reach the engine
STATIC_P99_TARGET_MS = 5.0  # issue 5: static rejections answered within 5 ms (p99) at 200 req/s
MAX_BODY = 16 << 20  # the service's limits (docs/api.md)
MAX_COMPLETION = 1 << 20
MAX_COMPLETIONS = 1024
MAX_CONNECTIONS = 512
DOCUMENTED_503 = ("shutting-down", "too-many-connections", "unavailable")
IDLE_REUSE_S = 10.0  # a pooled connection idle longer than this is not reused (the server drops it at 30 s)
FORK_SLEEP = "86.4"  # `sleep 86.4`: the processes the fork candidates start, found again by their argument


def log(message: str) -> None:
    print(f"[{datetime.datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], fraction: float) -> float | None:
    """Nearest-rank percentile (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def latency_summary(seconds: list[float]) -> dict[str, float | int | None]:
    def ms(value: float | None) -> float | None:
        return None if value is None else round(value * 1000.0, 3)

    return {
        "count": len(seconds),
        "p50_ms": ms(percentile(seconds, 0.50)),
        "p90_ms": ms(percentile(seconds, 0.90)),
        "p99_ms": ms(percentile(seconds, 0.99)),
        "max_ms": ms(max(seconds) if seconds else None),
    }


def default_python() -> str:
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else (shutil.which("python3") or sys.executable)


def default_kforge() -> Path:
    configured = os.environ.get("KFORGE_BIN")
    return Path(configured) if configured else REPO / "build" / "release" / "kforge"


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "python": platform.python_version(),
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["memory_gib"] = round(int(line.split()[1]) / (1 << 20), 1)
    except OSError:
        pass
    if shutil.which("nvidia-smi"):
        query = ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            info["gpus"] = subprocess.run(query, capture_output=True, text=True, timeout=20).stdout.strip()
    return info


# ---------------------------------------------------------------------------------------------------
# The service process and its memory


@dataclass
class ServeConfig:
    binary: Path
    folder: Path
    device: str
    small: bool
    timeout_s: float | None
    python: str
    jobs: int | None
    time_budget: float | None
    extra: list[str]


class ServeProcess:
    """`kforge serve --port 0` on a store and token in `folder`; the port is read from its stderr."""

    def __init__(self, config: ServeConfig, token: str, log_name: str) -> None:
        self.config = config
        self.token = token
        self.log_path = config.folder / log_name
        (config.folder / "token").write_text(token + "\n")
        command = [
            str(config.binary),
            "serve",
            "--port",
            "0",
            "--device",
            config.device,
            "--store",
            str(config.folder / "store.sqlite"),
            "--token-file",
            str(config.folder / "token"),
            "--problems-dir",
            str(config.folder / "problems"),
            "--python",
            config.python,
        ]
        if config.small:
            command.append("--small")
        if config.timeout_s is not None:
            command += ["--timeout", str(config.timeout_s)]
        if config.jobs is not None:
            command += ["-j", str(config.jobs)]
        if config.time_budget is not None:
            command += ["--time-budget", str(config.time_budget)]
        command += config.extra
        self.command = command
        self._log: TextIO = self.log_path.open("w")
        self.process = self._spawn(command)
        self.host, self.port = self._wait_for_address()

    def _spawn(self, command: list[str], limit_s: float = 120.0) -> subprocess.Popen[bytes]:
        """Start it; while the binary is being rebuilt (not executable, or busy) try again for a while."""
        deadline = time.monotonic() + limit_s
        while True:
            try:
                return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log)
            except OSError as error:  # EACCES or ETXTBSY during a rebuild; ENOENT between unlink and rename
                if time.monotonic() > deadline:
                    raise
                log(f"cannot start {command[0]} ({error}); trying again")
                time.sleep(1.0)

    def _wait_for_address(self, limit_s: float = 120.0) -> tuple[str, int]:
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            match = re.search(r"listening on http://([^:\s]+):(\d+)", self.log_path.read_text())
            if match:
                return match.group(1), int(match.group(2))
            if self.process.poll() is not None:
                raise RuntimeError(f"kforge serve exited ({self.process.returncode}):\n{self.log_text()}")
            time.sleep(0.05)
        self.process.kill()
        raise RuntimeError(f"kforge serve did not print its address within {limit_s:.0f} s")

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, limit_s: float = 180.0) -> int | None:
        """SIGTERM, then its exit status (None: it did not exit within limit_s and was killed)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code: int | None = self.process.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            code = None
        self._log.close()
        return code


def _status_field(pid: int, name: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0  # gone, or a zombie


def _read_rss_kib(pid: int) -> int:
    return _status_field(pid, "VmRSS")


def thread_count(pid: int) -> int:
    return _status_field(pid, "Threads")


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of a process (all its threads; None: unknown)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_parents() -> dict[int, int]:
    """pid -> parent pid for every process visible in /proc."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        if len(fields) > 1:
            parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(root: int, parents: dict[int, int] | None = None) -> list[int]:
    parents = process_parents() if parents is None else parents
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def processes_with_argument(argument: str) -> list[int]:
    """Processes whose command line has `argument` as a whole argument (e.g. the fork candidates' sleeps)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                    if argument.encode() in cmdline.read().split(b"\0"):
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


@dataclass
class MemorySample:
    t: float
    service_kib: int
    children_kib: int
    children: int
    threads: int = 0  # the service's own threads (handler pool, io, engine)


class MemorySampler(threading.Thread):
    """VmRSS of the service and the sum over its descendants (judges, zygote, candidates) every period.

    A thread, so the /proc scans never delay the event loop that sends the requests. The children's sum
    counts pages they share (forked from one zygote) once per process: an upper bound."""

    def __init__(self, pid: int, period_s: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.period_s = period_s
        self.samples: list[MemorySample] = []
        self._stop_event = threading.Event()
        self._start = time.monotonic()

    def sample(self) -> MemorySample:
        kids = descendants(self.pid)
        return MemorySample(
            round(time.monotonic() - self._start, 2),
            _read_rss_kib(self.pid),
            sum(_read_rss_kib(child) for child in kids),
            len(kids),
            thread_count(self.pid),
        )

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.samples.append(self.sample())
            self._stop_event.wait(self.period_s)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=10)

    def summary(self) -> dict[str, Any]:
        if not self.samples:
            return {"samples": 0}

        def mib(values: list[int]) -> dict[str, float]:
            return {
                "start": round(values[0] / 1024, 1),
                "peak": round(max(values) / 1024, 1),
                "end": round(values[-1] / 1024, 1),
            }

        service = [s.service_kib for s in self.samples]
        children = [s.children_kib for s in self.samples]
        counts = [s.children for s in self.samples]
        return {
            "samples": len(self.samples),
            "period_s": self.period_s,
            "service_mib": mib(service),
            "children_mib": mib(children),
            "total_mib": mib([a + b for a, b in zip(service, children, strict=True)]),
            "children_processes": {"start": counts[0], "peak": max(counts), "end": counts[-1]},
            "service_threads": {
                "start": self.samples[0].threads,
                "peak": max(sample.threads for sample in self.samples),
                "end": self.samples[-1].threads,
            },
        }


# ---------------------------------------------------------------------------------------------------
# A small HTTP/1.1 client on asyncio streams: keep-alive pool for well-formed requests, raw bytes for
# the malformed ones.


@dataclass
class Answer:
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    error: str | None = None  # a transport failure: reset, timeout, closed without an answer

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return None


@dataclass
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    last_used: float


def _describe(error: BaseException) -> str:
    if isinstance(error, asyncio.TimeoutError | TimeoutError):
        return "timeout: no answer in time"
    if isinstance(error, asyncio.IncompleteReadError):
        return f"connection closed after {len(error.partial)} bytes of the answer"
    return f"{type(error).__name__}: {error}"


async def read_response(reader: asyncio.StreamReader) -> Answer:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise ValueError(f"not an HTTP status line: {lines[0][:80]!r}")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = headers.get("content-length")
    body = await reader.readexactly(int(length)) if length is not None else await reader.read()
    return Answer(int(parts[1]), headers, body)


class Client:
    def __init__(self, host: str, port: int, token: str | None, timeout_s: float) -> None:
        self.host = host
        self.port = port
        self.token = token
        self.timeout_s = timeout_s
        self.connections_opened = 0
        self.reused = 0
        self._idle: list[_Connection] = []

    async def _connect(self) -> _Connection:
        reader, writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20)
        self.connections_opened += 1
        return _Connection(reader, writer, time.monotonic())

    async def _acquire(self) -> _Connection:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if now - connection.last_used < IDLE_REUSE_S and not connection.reader.at_eof():
                self.reused += 1
                return connection
            connection.writer.close()
        return await self._connect()

    def request_bytes(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        token: bool = True,
        authorization: str | None = None,
        keep_alive: bool = True,
    ) -> bytes:
        lines = [
            f"{method} {path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            "User-Agent: kforge-serve-load",
        ]
        if authorization is not None:
            lines.append(f"Authorization: {authorization}")
        elif token and self.token:
            lines.append(f"Authorization: Bearer {self.token}")
        if body is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        if not keep_alive:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")

    async def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        token: bool = True,
        authorization: str | None = None,
        keep_alive: bool = True,
        timeout_s: float | None = None,
    ) -> Answer:
        data = self.request_bytes(
            method, path, body, token=token, authorization=authorization, keep_alive=keep_alive
        )
        connection: _Connection | None = None

        async def exchange() -> Answer:
            nonlocal connection
            connection = await (self._acquire() if keep_alive else self._connect())
            connection.writer.write(data)
            await connection.writer.drain()
            return await read_response(connection.reader)

        try:
            async with asyncio.timeout(timeout_s or self.timeout_s):  # no extra task, unlike wait_for
                answer = await exchange()
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as error:
            if connection is not None:
                connection.writer.close()
            return Answer(error=_describe(error))
        assert connection is not None
        if keep_alive and answer.headers.get("connection", "").lower() != "close":
            connection.last_used = time.monotonic()
            self._idle.append(connection)
        else:
            connection.writer.close()
        return answer

    async def raw(
        self,
        data: bytes,
        *,
        byte_delay_s: float = 0.0,
        half_close: bool = False,
        timeout_s: float | None = None,
    ) -> Answer:
        """Send bytes as they are on a fresh connection (byte by byte with a delay: slow-loris), then read
        one answer. half_close: shut the sending side afterwards, as a client that gives up mid-body."""
        writer: asyncio.StreamWriter | None = None

        async def exchange() -> Answer:
            nonlocal writer
            reader, writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20)
            self.connections_opened += 1
            if byte_delay_s > 0:
                for i in range(len(data)):
                    writer.write(data[i : i + 1])
                    await writer.drain()
                    await asyncio.sleep(byte_delay_s)
            else:
                writer.write(data)
                await writer.drain()
            if half_close:
                writer.write_eof()
            return await read_response(reader)

        try:
            return await asyncio.wait_for(exchange(), timeout_s or self.timeout_s)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as error:
            return Answer(error=_describe(error))
        finally:
            if writer is not None:
                writer.close()

    async def call(
        self, method: str, path: str, document: Any = None, timeout_s: float | None = None
    ) -> Answer:
        body = None if document is None else json.dumps(document).encode()
        return await self.request(method, path, body, timeout_s=timeout_s)

    def close(self) -> None:
        for connection in self._idle:
            connection.writer.close()
        self._idle.clear()


# ---------------------------------------------------------------------------------------------------
# Completions


def problem_id_of(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def suite_problems(suite: Path) -> list[str]:
    return sorted(
        p.name for p in suite.iterdir() if (p / "problem.py").exists() and (p / "solution.py").exists()
    )


PROSE = (
    "To make this fast I would fuse the whole computation into a single Triton kernel: each program "
    "loads one block of the input, keeps the intermediate values in registers and writes the result "
    "once, so the tensor is read and written exactly once. The block size should be a power of two "
    "and the grid should cover every element. (answer {marker})"
)


def _with_marker(code: str, marker: str) -> str:
    return code.rstrip("\n") + f"\n# sample {marker}\n"


def _markdown(code: str, marker: str) -> str:
    return (
        f"Here is an optimised version of the model (attempt {marker}).\n\n"
        f"```python\n{code.rstrip()}\n```\n\n"
        "The kernel fuses the operations, so the input is read only once."
    )


def _prepend(code: str, line: str) -> str:
    return line + "\n" + code


def static_variants(solution: str) -> dict[str, Callable[[str], str]]:
    """Completions that the static rules alone reject (docs/rules.md), each a function of a unique marker
    so that no two requests send the same text. Every one is checked to be what it claims when built."""
    insert = make_candidates._insert_in_forward
    builders: dict[str, Callable[[str], str]] = {"no-code": lambda marker: PROSE.format(marker=marker)}
    edits: dict[str, Callable[[], str]] = {
        # stage extract: markdown without a python block is prose; stage static: the rest
        "syntax-error": lambda: make_candidates.crash_syntax(solution),
        "torch-in-forward": lambda: insert(solution, "{arg} = torch.sigmoid({arg})"),
        "subprocess": lambda: _prepend(
            insert(solution, 'subprocess.run(["nvidia-smi", "-q"], check=False)'), "import subprocess"
        ),
        "ctypes": lambda: _prepend(insert(solution, '_cuda = ctypes.CDLL("libcuda.so.1")'), "import ctypes"),
        "fork-bomb": lambda: _prepend(
            insert(solution, "while os.fork() >= 0:\n            pass"), "import os"
        ),
        "thread": lambda: _prepend(
            insert(solution, "threading.Thread(target=print).start()"), "import threading"
        ),
        "exec": lambda: insert(solution, 'exec("import torch")'),
        "torch-load": lambda: insert(solution, '_expected = torch.load("/tmp/expected.pt")'),
        "no-model-new": lambda: solution.replace("class ModelNew(", "class FastModel(", 1),
    }
    for name, edit in edits.items():
        try:
            code = edit()
        except make_candidates.EditError:
            continue
        if code == solution:
            continue
        builders[name] = lambda marker, code=code: _with_marker(code, marker)
    if "torch-in-forward" in builders:
        torch_code = insert(solution, "{arg} = torch.sigmoid({arg})")
        builders["markdown-torch"] = lambda marker: _markdown(torch_code, marker)
    return builders


def _hang_in_helper(solution: str) -> str:
    """01_scaled_add's solution whose grid comes from a helper that never returns."""
    helper = (
        "def _grid_size(n: int, block: int) -> int:\n"
        "    # smallest number of programs that covers n elements\n"
        "    size = 1\n"
        "    while size * block < n or size > 0:\n"
        "        size += 1\n"
        "    return size\n\n\n"
    )
    edited = solution.replace("class ModelNew", helper + "class ModelNew", 1)
    edited = edited.replace("grid = (triton.cdiv(n, self.BLOCK),)", "grid = (_grid_size(n, self.BLOCK),)", 1)
    if "_grid_size(n, self.BLOCK)" not in edited:
        raise make_candidates.EditError("01_scaled_add's grid line changed")
    return edited


def _forks(solution: str, processes: int, wait: bool) -> str:
    """Starts `processes` shell children through pydoc.pipepager, which the static rules do not see as a
    process API (docs/rules.md lists subprocess, os.fork/system/popen/spawn*, pty, multiprocessing...).
    wait: the shell waits for them (the call hangs until the timeout); else they are left running."""
    script = f"for i in $(seq {processes}); do sleep {FORK_SLEEP} & done" + ("; wait" if wait else "")
    statement = f"pydoc.pipepager('', '{script}')  # warm the staging helpers"
    return _prepend(make_candidates._insert_in_forward(solution, statement), "import pydoc")


ENGINE_KINDS = {
    "hang": ("hang-kernel", "hang-helper"),
    "crash": ("crash-abort", "crash-os-exit", "crash-raise", "crash-huge-alloc"),
    "fork": ("fork-leave", "fork-hang"),
    "real": ("real-solution",),
}


def engine_candidate(kind: str, solution: str, fork_processes: int) -> str:
    """Candidates for 01_scaled_add that pass the static rules and reach a worker."""
    if kind == "hang-kernel":  # an endless loop inside the @triton.jit kernel
        return (CANDIDATES / "kernel_hangs.py").read_text()
    if kind == "hang-helper":
        return _hang_in_helper(solution)
    if kind == "crash-abort":
        return (CANDIDATES / "abort.py").read_text()
    if kind == "crash-os-exit":
        return (CANDIDATES / "os_exit_in_forward.py").read_text()
    if kind == "crash-raise":
        return make_candidates.crash_raise(solution)
    if kind == "crash-huge-alloc":  # 4 TiB: past RLIMIT_AS on the CPU, past any GPU's memory
        return make_candidates._insert_in_forward(
            solution, "_scratch = torch.empty((1 << 42,), dtype=torch.uint8, device={arg}.device)"
        )
    if kind == "fork-leave":
        return _forks(solution, fork_processes, wait=False)
    if kind == "fork-hang":
        return _forks(solution, fork_processes, wait=True)
    if kind == "real-solution":
        return solution
    raise ValueError(f"unknown engine candidate kind {kind}")


# ---------------------------------------------------------------------------------------------------
# The load plan


@dataclass
class Planned:
    index: int
    case: str
    share: str  # "ordinary" | "hostile"
    method: str = "GET"
    path: str = "/v1/health"
    body: bytes | None = None
    token: bool = True
    authorization: str | None = None
    keep_alive: bool = True
    raw: bytes | None = None  # sent as is on a fresh connection
    byte_delay_s: float = 0.0
    half_close: bool = False
    expect_status: tuple[int, ...] = (200,)
    expect_code: str | None = None
    expect_text: bool = False  # /metrics: Prometheus text, not JSON
    check: str = ""  # extra check of a 2xx answer: static-job, engine-job, health, register
    completions: int = 0
    problem_id: str = ""
    engine_kind: str = ""
    variants: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    planned: Planned
    scheduled: float
    sent: float
    answered: float
    answer: Answer
    verdict: str  # ok | failed | unexpected; "" until judged (after the run)
    detail: str = ""

    @property
    def latency_s(self) -> float:
        return self.answered - self.scheduled


ORDINARY_WEIGHTS: dict[str, float] = {
    "static-reject": 0.47,
    "health": 0.05,
    "register": 0.04,
    "job-poll": 0.07,
    "metrics": 0.02,
}
HOSTILE_WEIGHTS: dict[str, float] = {
    "bad-json": 0.025,
    "json-not-object": 0.015,
    "truncated-json": 0.02,
    "truncated-body": 0.02,
    "oversize-body": 0.02,
    "headers-too-large": 0.01,
    "malformed-http": 0.02,
    "slow-loris": 0.01,
    "unknown-problem": 0.025,
    "wrong-types": 0.035,
    "wrong-type-flag": 0.005,
    "bad-reward": 0.03,
    "unknown-route": 0.015,
    "wrong-method": 0.02,
    "no-token": 0.015,
    "bad-token": 0.015,
    "unknown-job": 0.015,
    "too-many-completions": 0.01,
    "completion-too-large": 0.005,
    "deep-json": 0.005,
    "invalid-utf8": 0.005,
}
REWARDS: list[Any] = [
    "kforge",
    "kforge",
    "tritonrl",
    "drkernel",
    "autotriton",
    {"formula": "weighted", "weights": {"correct": 1, "speedup": 0.5, "cheating": -1}},
    None,  # the default
]


class LoadPlanner:
    def __init__(self, args: argparse.Namespace, client: Client, problems: dict[str, str]) -> None:
        self.args = args
        self.client = client
        self.random = random.Random(args.seed)
        self.sources = problems  # name -> problem.py source
        self.ids = {name: problem_id_of(source) for name, source in problems.items()}
        self.names = sorted(problems)
        self.variants = {
            name: static_variants((STARTER / name / "solution.py").read_text()) for name in self.names
        }
        self.marker = 0
        some = self.ids[self.names[0]]
        self._deep = (
            b'{"problem_id": "'
            + some.encode()
            + b'", "completions": '
            + b"[" * 200_000
            + b"]" * 200_000
            + b"}"
        )
        self._huge_completion = json.dumps(
            {"problem_id": some, "completions": ["#" * (MAX_COMPLETION + 1)]}
        ).encode()
        self._many = json.dumps({"problem_id": some, "completions": ["x"] * (MAX_COMPLETIONS + 1)}).encode()

    def _unique(self) -> str:
        self.marker += 1
        return f"{self.args.seed}-{self.marker}"

    def _pick(self, options: list[Any]) -> Any:
        return options[self.random.randrange(len(options))]

    def plan(self) -> list[Planned]:
        engine = self._engine_slots()
        weights = {**ORDINARY_WEIGHTS, **HOSTILE_WEIGHTS}
        for name in self.args.exclude:
            weights.pop(name, None)
        if self.args.only:
            weights = {name: share for name, share in weights.items() if name in self.args.only}
        cases, shares = list(weights), list(weights.values())
        plan: list[Planned] = []
        for index in range(self.args.requests):
            if index in engine:
                plan.append(self._engine(index, engine[index]))
            else:
                case = self.random.choices(cases, shares)[0]
                plan.append(self.build(index, case))
        return plan

    def _engine_slots(self) -> dict[int, str]:
        kinds: list[str] = []
        for group, count in (
            ("real", self.args.real),
            ("hang", self.args.hangs),
            ("crash", self.args.crashes),
            ("fork", self.args.forks),
        ):
            kinds += [ENGINE_KINDS[group][i % len(ENGINE_KINDS[group])] for i in range(count)]
        if not kinds:
            return {}
        # spread over the first 80% of the run, so their jobs overlap the load
        step = max(1, int(self.args.requests * 0.8) // len(kinds))
        return {min(self.args.requests - 1, 5 + i * step): kind for i, kind in enumerate(kinds)}

    def _engine(self, index: int, kind: str) -> Planned:
        solution = (STARTER / ENGINE_PROBLEM / "solution.py").read_text()
        code = engine_candidate(kind, solution, self.args.fork_processes)
        code = _with_marker(code, f"engine {kind} {self._unique()}")
        document = {"problem_id": self.ids[ENGINE_PROBLEM], "completions": [code], "wait_s": 0}
        return Planned(
            index,
            "engine:" + kind,
            "hostile" if kind != "real-solution" else "ordinary",
            "POST",
            "/v1/evaluate",
            json.dumps(document).encode(),
            expect_status=(202,),
            check="engine-job",
            completions=1,
            problem_id=self.ids[ENGINE_PROBLEM],
            engine_kind=kind,
        )

    def _post(self, index: int, case: str, path: str, document: Any, status: int, code: str) -> Planned:
        body = document if isinstance(document, bytes) else json.dumps(document).encode()
        return Planned(index, case, "hostile", "POST", path, body, expect_status=(status,), expect_code=code)

    def _raw(
        self, index: int, case: str, data: bytes, status: int, code: str, half_close: bool = False
    ) -> Planned:
        return Planned(
            index, case, "hostile", raw=data, half_close=half_close, expect_status=(status,), expect_code=code
        )

    def build(self, index: int, case: str) -> Planned:
        name = self._pick(self.names)
        pid = self.ids[name]
        if case in ORDINARY_WEIGHTS:
            return self._ordinary(index, case, name)
        if case in ("bad-json", "json-not-object", "truncated-json", "invalid-utf8"):
            full = json.dumps({"problem_id": pid, "completions": [PROSE.format(marker=index)]}).encode()
            body = self._pick(
                {
                    "bad-json": [
                        b"{not json",
                        b'{"problem_id": "' + pid.encode() + b'", completions: []}',
                        b"",
                    ],
                    "json-not-object": [b'["x"]', b"42", b'"evaluate"', b"null", b"true"],
                    "truncated-json": [full[: self.random.randint(1, len(full) - 1)]],
                    "invalid-utf8": [
                        b'{"problem_id": "' + pid.encode() + b'", "completions": ["\xff\xfe bad"]}'
                    ],
                }[case]
            )
            path = (
                self._pick(["/v1/evaluate", "/v1/problems"]) if case == "json-not-object" else "/v1/evaluate"
            )
            return self._post(index, case, path, body, 400, "bad-json")
        if case in ("truncated-body", "oversize-body", "headers-too-large", "malformed-http", "slow-loris"):
            return self._transport(index, case, pid)
        if case == "unknown-problem":
            document = {"problem_id": f"{self.random.getrandbits(64):016x}", "completions": ["x"]}
            return self._post(index, case, "/v1/evaluate", document, 404, "unknown-problem")
        if case == "wrong-types":
            path, document = self._pick(
                [
                    ("/v1/evaluate", {"problem_id": pid, "completions": "x"}),
                    ("/v1/evaluate", {"problem_id": pid, "completions": [7]}),
                    ("/v1/evaluate", {"problem_id": pid, "completions": ["x", None]}),
                    ("/v1/evaluate", {"problem_id": 5, "completions": ["x"]}),
                    ("/v1/evaluate", {"problem_id": pid, "completions": ["x"], "wait_s": "5"}),
                    ("/v1/evaluate", {"problem_id": pid, "completions": ["x"], "wait_s": -1}),
                    ("/v1/evaluate", {"problem_id": pid, "completions": []}),
                    ("/v1/evaluate", {"problem_id": pid}),
                    ("/v1/evaluate", {"completions": ["x"]}),
                    ("/v1/problems", {"source": 5}),
                    ("/v1/problems", {"source": ""}),
                    ("/v1/problems", {"problem": "x"}),
                ]
            )
            return self._post(index, case, path, document, 400, "bad-request")
        if case == "wrong-type-flag":  # a flag of the wrong type: a 400 like every other mistyped field
            document = {
                "problem_id": pid,
                "completions": ["x"],
                "include_verdict": self._pick(["yes", 1, [True]]),
            }
            return self._post(index, case, "/v1/evaluate", document, 400, "bad-request")
        if case == "bad-reward":
            reward = self._pick(
                [
                    "best",
                    7,
                    ["kforge"],
                    {"formula": "weighted"},
                    {"formula": 3},
                    {"formula": "kforge", "cheating_penalty": "x"},
                    {"formula": "weighted", "weights": {"correct": "a"}},
                ]
            )
            document = {"problem_id": pid, "completions": ["x"], "reward": reward}
            return self._post(index, case, "/v1/evaluate", document, 400, "bad-reward")
        if case in ("unknown-route", "wrong-method"):
            routes = {
                "unknown-route": [
                    ("GET", "/v2/health"),
                    ("POST", "/v1/evaluations"),
                    ("GET", "/admin"),
                    ("GET", "/"),
                ],
                "wrong-method": [
                    ("DELETE", "/v1/health"),
                    ("GET", "/v1/evaluate"),
                    ("PUT", "/v1/problems"),
                    ("POST", "/v1/jobs/000000-0"),
                    ("POST", "/metrics"),
                    ("PATCH", "/v1/evaluate"),
                ],
            }
            method, path = self._pick(routes[case])
            body = b"{}" if method in ("POST", "PUT", "PATCH") else None
            status, code = (404, "not-found") if case == "unknown-route" else (405, "method-not-allowed")
            return Planned(
                index, case, "hostile", method, path, body, expect_status=(status,), expect_code=code
            )
        if case in ("no-token", "bad-token"):
            method, path, body = self._pick(
                [
                    ("POST", "/v1/evaluate", json.dumps({"problem_id": pid, "completions": ["x"]}).encode()),
                    ("POST", "/v1/problems", json.dumps({"source": self.sources[name]}).encode()),
                    ("GET", "/metrics", None),
                    ("GET", "/v1/jobs/000000-0", None),
                ]
            )
            token = self.client.token or ""
            # (RFC 7235 lets the scheme be in any case and followed by several spaces: those are right)
            wrong = ["Bearer wrong", f"Bearer {token}x", f"Basic {token}", f"Bearer {token[:-1]}"]
            authorization = self._pick(wrong) if case == "bad-token" else None
            return Planned(
                index, case, "hostile", method, path, body, token=False, authorization=authorization,
                expect_status=(401,), expect_code="unauthorised",
            )  # fmt: skip
        if case == "unknown-job":
            path = "/v1/jobs/" + self._pick(
                [
                    f"{self.random.randrange(10**6):06d}-{self.random.getrandbits(64):016x}",
                    "",
                    "..%2Fetc",
                    "x" * 300,
                ]
            )
            return Planned(
                index, case, "hostile", "GET", path, expect_status=(404,), expect_code="unknown-job"
            )
        if case == "too-many-completions":
            return self._post(index, case, "/v1/evaluate", self._many, 413, "too-many-completions")
        if case == "completion-too-large":  # the policy's answer: rejected at extract, not an HTTP error
            planned = self._post(index, case, "/v1/evaluate", self._huge_completion, 200, "")
            planned.expect_code = None
            planned.check, planned.completions, planned.variants = "static-job", 1, [case]
            return planned
        if case == "deep-json":  # 200,000 nested lists where a list of strings belongs
            return self._post(index, case, "/v1/evaluate", self._deep, 400, "bad-request")
        raise ValueError(f"unknown case {case}")

    def _ordinary(self, index: int, case: str, name: str) -> Planned:
        pid = self.ids[name]
        if case == "static-reject":
            builders = self.variants[name]
            chosen = [self._pick(sorted(builders)) for _ in range(self.random.randint(1, 4))]
            texts = [builders[v](self._unique()) for v in chosen]
            document: dict[str, Any] = {"completions": texts, "wait_s": 60}
            if self.random.random() < 0.1:
                document["problem_source"] = self.sources[name]
            else:
                document["problem_id"] = pid
            reward = self._pick(REWARDS)
            if reward is not None:
                document["reward"] = reward
            return Planned(
                index, case, "ordinary", "POST", "/v1/evaluate", json.dumps(document).encode(),
                keep_alive=self.random.random() > 0.1, check="static-job", completions=len(texts),
                problem_id=pid, variants=chosen,
            )  # fmt: skip
        if case == "health":
            return Planned(index, case, "ordinary", token=self.random.random() < 0.5, check="health")
        if case == "register":
            body = json.dumps({"source": self.sources[name]}).encode()
            return Planned(
                index, case, "ordinary", "POST", "/v1/problems", body, check="register", problem_id=pid
            )
        if case == "job-poll":
            return Planned(index, case, "ordinary", "GET", "<known-job>")
        if case == "metrics":
            return Planned(index, case, "ordinary", "GET", "/metrics", expect_text=True)
        raise ValueError(f"unknown case {case}")

    def _transport(self, index: int, case: str, pid: str) -> Planned:
        """Requests that are wrong at the HTTP level, sent as raw bytes on their own connection."""
        c = self.client
        if case == "truncated-body":  # the client stops mid-body and shuts its side
            full = json.dumps({"problem_id": pid, "completions": ["x"]}).encode()
            data = c.request_bytes("POST", "/v1/evaluate", full)
            data = data[: len(data) - self.random.randint(1, len(full) - 1)]
            return self._raw(index, case, data, 400, "bad-request", half_close=True)
        if case == "oversize-body":  # announced by Content-Length, refused before the body is read
            head = c.request_bytes("POST", "/v1/evaluate", b"")
            head = head.replace(b"Content-Length: 0", f"Content-Length: {MAX_BODY + (1 << 20)}".encode())
            return self._raw(index, case, head + b"{", 413, "body-too-large")
        if case == "headers-too-large":
            head = c.request_bytes("GET", "/v1/health")
            return self._raw(
                index,
                case,
                head[:-2] + b"X-Pad: " + b"a" * (70 << 10) + b"\r\n\r\n",
                431,
                "headers-too-large",
            )
        if case == "malformed-http":
            data = self._pick(
                [
                    b"HELLO\r\n\r\n",
                    b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03"
                    + bytes(range(32))
                    + b"\r\n\r\n",  # a TLS hello
                    b"POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
                    b"POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                    b"Content-Length: 6\r\n\r\nhello!",
                    b"POST /v1/evaluate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                    b"GET /v1/health HTTP/1.1\r\nHost x\r\n\r\n",
                ]
            )
            return self._raw(index, case, data, 400, "bad-request")
        if case == "slow-loris":  # headers one byte at a time, finishing well within the 30-s read limit
            data = c.request_bytes("GET", "/v1/health", token=False)
            return Planned(
                index, case, "hostile", raw=data, byte_delay_s=self.args.slowloris_byte_delay, check="health"
            )
        raise ValueError(f"unknown case {case}")


# ---------------------------------------------------------------------------------------------------
# Judging one answer


JOB_ID = re.compile(rb'"job_id":"([0-9a-zA-Z_-]+)"')


def answer_job_id(answer: Answer) -> str | None:
    """The job id of an answer, found without parsing the whole document (judge() checks it later)."""
    found = JOB_ID.search(answer.body) if answer.status in (200, 202) else None
    return found.group(1).decode() if found else None


def judge(planned: Planned, answer: Answer) -> tuple[str, str]:
    """('ok' | 'failed' | 'unexpected', detail). Failed: no proper answer at all (transport error, non-JSON
    body, an undocumented 5xx). Unexpected: a proper answer, but not the one the API documents."""
    if answer.error is not None or answer.status is None:
        return "failed", answer.error or "no status"
    if planned.expect_text and answer.status == 200:
        text = answer.body.decode(errors="replace")
        return (
            ("ok", "")
            if "kforge_http_requests_total" in text
            else ("unexpected", "metrics text lacks counters")
        )
    document = answer.json()
    if not isinstance(document, dict):
        return "failed", f"HTTP {answer.status} with a body that is not a JSON object: {answer.body[:120]!r}"
    error = document.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if answer.status >= 400 and not (isinstance(code, str) and isinstance(error.get("message"), str)):
        return "failed", f"HTTP {answer.status} without an error code and message: {answer.body[:160]!r}"
    if answer.status >= 500 and not (answer.status == 503 and code in DOCUMENTED_503):
        return "failed", f"HTTP {answer.status} {code}: {error.get('message', '')[:200]}"
    if answer.status not in planned.expect_status:
        got = f"HTTP {answer.status}" + (f" {code}" if code else "")
        return "unexpected", f"expected {planned.expect_status} {planned.expect_code or ''}, got {got}"
    if planned.expect_code is not None and code != planned.expect_code:
        return "unexpected", f"expected error {planned.expect_code}, got {code}"
    problem = check_document(planned, document)
    return ("unexpected", problem) if problem else ("ok", "")


def check_document(planned: Planned, document: dict[str, Any]) -> str:
    if planned.check == "health":
        return "" if document.get("status") == "ok" and document.get("api") == "v1" else "health not ok"
    if planned.check == "register":
        return (
            ""
            if document.get("problem_id") == planned.problem_id
            else f"problem id {document.get('problem_id')}"
        )
    if planned.check == "engine-job":
        if not isinstance(document.get("job_id"), str) or document.get("total") != planned.completions:
            return "a 202 without a job id and total"
        return ""
    if planned.check == "static-job":
        results = document.get("results")
        if document.get("status") != "done" or document.get("done") != planned.completions:
            return f"static rejection not done at once: status {document.get('status')}"
        if not isinstance(results, list) or len(results) != planned.completions or None in results:
            return "lost results"
        for result, variant in zip(results, planned.variants, strict=True):
            if result.get("outcome") != "rejected" or result.get("failed_stage") not in ("extract", "static"):
                where = f"{result.get('outcome')} at {result.get('failed_stage')}"
                return f"{variant}: {where}: {result.get('summary')}"
            reward = result.get("reward")
            if not isinstance(reward, dict) or not isinstance(reward.get("reward"), int | float):
                return f"{variant}: no reward"
    return ""


# ---------------------------------------------------------------------------------------------------
# The load run


@dataclass
class TrackedJob:
    job_id: str
    kind: str
    total: int
    completion: str
    problem_id: str
    submitted: float
    final: dict[str, Any] | None = None
    polls: int = 0
    poll_errors: list[str] = field(default_factory=list)
    finished: float | None = None


class LoadRun:
    def __init__(self, args: argparse.Namespace, client: Client, planner: LoadPlanner) -> None:
        self.args = args
        self.client = client
        self.planner = planner
        self.outcomes: list[Outcome] = []
        self.followups: list[Outcome] = []
        self.known_jobs: list[str] = []
        self.tracked: list[TrackedJob] = []
        self.pollers: list[asyncio.Task[None]] = []
        self.rng = random.Random(args.seed + 1)
        self.metrics_after: Answer | None = None

    async def execute(self, planned: Planned, scheduled: float) -> None:
        sent = time.monotonic()
        if planned.raw is not None:
            answer = await self.client.raw(
                planned.raw, byte_delay_s=planned.byte_delay_s, half_close=planned.half_close
            )
        else:
            path = planned.path
            if path == "<known-job>":
                path = "/v1/jobs/" + self.rng.choice(self.known_jobs)
            answer = await self.client.request(
                planned.method,
                path,
                planned.body,
                token=planned.token,
                authorization=planned.authorization,
                keep_alive=planned.keep_alive,
            )
        answered = time.monotonic()
        outcome = Outcome(planned, scheduled, sent, answered, answer, "")
        self.outcomes.append(outcome)
        if planned.check != "engine-job":
            # Judged after the run (judge_all): parsing every answer here would hold the event loop
            # and delay the sends and reads of the requests in flight, inflating their latencies.
            if (job_id := answer_job_id(answer)) is not None:
                self.known_jobs.append(job_id)
            return
        outcome.verdict, outcome.detail = judge(planned, answer)
        document = answer.json() if outcome.verdict == "ok" else None
        if not (isinstance(document, dict) and isinstance(document.get("job_id"), str)):
            return
        self.known_jobs.append(document["job_id"])
        body = json.loads(planned.body or b"{}")
        job = TrackedJob(
            document["job_id"],
            planned.engine_kind,
            planned.completions,
            body["completions"][0],
            planned.problem_id,
            answered,
        )
        self.tracked.append(job)
        self.pollers.append(asyncio.create_task(self.poll(job)))

    def judge_all(self) -> None:
        for outcome in self.outcomes:
            if not outcome.verdict:
                outcome.verdict, outcome.detail = judge(outcome.planned, outcome.answer)

    async def poll(self, job: TrackedJob) -> None:
        """GET /v1/jobs/ID every 0.5 s until it is done (or failed), each poll judged like any request."""
        deadline = time.monotonic() + self.args.jobs_deadline
        planned = Planned(-1, "job-follow-up", "ordinary", "GET", "/v1/jobs/" + job.job_id)
        while time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            start = time.monotonic()
            answer = await self.client.request("GET", planned.path)
            verdict, detail = judge(planned, answer)
            self.followups.append(Outcome(planned, start, start, time.monotonic(), answer, verdict, detail))
            job.polls += 1
            document = answer.json()
            if verdict != "ok" or not isinstance(document, dict):
                job.poll_errors.append(detail or "no document")
                continue
            if document.get("status") in ("done", "failed"):
                job.final = document
                job.finished = time.monotonic()
                return

    async def run(self, plan: list[Planned]) -> dict[str, Any]:
        rate = self.args.rate
        loop = asyncio.get_running_loop()
        tasks: list[asyncio.Task[None]] = []
        start = time.monotonic() + 0.2
        schedule: list[float] = []
        at = start
        for _ in plan:
            schedule.append(at)
            at += self.rng.expovariate(rate) if self.args.arrivals == "poisson" else 1.0 / rate
        lag: list[float] = []
        all_sent: asyncio.Future[float] = loop.create_future()

        def launch(planned: Planned, at: float) -> None:
            lag.append(max(0.0, time.monotonic() - at))
            tasks.append(asyncio.create_task(self.execute(planned, at)))

        def pace() -> None:
            # A thread paces the sends: the event loop's timers wake on whole milliseconds (epoll), which
            # would add about 0.7 ms of the generator's own lag to every latency measured from the schedule.
            for planned, at in zip(plan, schedule, strict=True):
                delay = at - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                loop.call_soon_threadsafe(launch, planned, at)
            loop.call_soon_threadsafe(all_sent.set_result, time.monotonic())

        pacer = threading.Thread(target=pace, name="pacer", daemon=True)
        pacer.start()
        last_send = await all_sent
        pacer.join()
        await asyncio.gather(*tasks)
        all_answered = time.monotonic()
        self.metrics_after = await self.client.request("GET", "/metrics")
        log(
            f"{len(plan)} requests answered in {all_answered - start:.1f} s; "
            f"waiting for {len(self.pollers)} jobs"
        )
        await asyncio.gather(*self.pollers)
        self.judge_all()
        return {
            "send_span_s": round(last_send - start, 3),
            "achieved_rate": round((len(plan) - 1) / max(1e-9, last_send - start), 1),
            "answered_span_s": round(all_answered - start, 3),
            "jobs_done_s": round(time.monotonic() - start, 3),
            "send_lag_ms": latency_summary(lag),
        }


def server_histogram(before: Answer, after: Answer | None, route: str) -> dict[str, Any]:
    """The service's own latency histogram for a route, over the run (the difference of two scrapes of
    /metrics): handler time, without the client's or the network's share."""

    def buckets(answer: Answer | None) -> dict[str, float]:
        if answer is None or answer.status != 200:
            return {}
        pattern = rf'^kforge_http_request_seconds_bucket{{route="{route}",le="([^"]+)"}} (\S+)$'
        return {le: float(v) for le, v in re.findall(pattern, answer.body.decode(errors="replace"), re.M)}

    start, end = buckets(before), buckets(after)
    total = end.get("+Inf", 0.0) - start.get("+Inf", 0.0)
    if not end or total <= 0:
        return {"count": 0}
    shares: dict[str, float] = {}
    p99: str | None = None
    for le in end:
        if le == "+Inf":
            continue
        share = (end[le] - start.get(le, 0.0)) / total
        shares[f"{float(le) * 1000:g}"] = round(share, 4)
        if p99 is None and share >= 0.99:
            p99 = f"{float(le) * 1000:g}"
    return {
        "count": int(total),
        "share_within_ms": shares,
        "p99_bucket_ms": p99 or "more than the last bucket",
    }


def category_rows(outcomes: list[Outcome]) -> dict[str, dict[str, Any]]:
    by_case: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_case.setdefault(outcome.planned.case, []).append(outcome)
    rows = {}
    for case in sorted(by_case, key=lambda c: (by_case[c][0].planned.share, c)):
        items = by_case[case]
        rows[case] = summarise(items)
    return rows


def summarise(items: list[Outcome]) -> dict[str, Any]:
    statuses = Counter(str(o.answer.status) if o.answer.status is not None else "none" for o in items)
    return {
        "share": items[0].planned.share if items else "",
        "sent": len(items),
        "answered": sum(1 for o in items if o.answer.status is not None),
        "failed": sum(1 for o in items if o.verdict == "failed"),
        "unexpected": sum(1 for o in items if o.verdict == "unexpected"),
        "statuses": dict(sorted(statuses.items())),
        "latency": latency_summary([o.latency_s for o in items]),
    }


def job_report(tracked: list[TrackedJob], fork_leftovers: list[int]) -> dict[str, Any]:
    rows, lost = [], []
    for job in tracked:
        final = job.final or {}
        results = final.get("results") or []
        first = results[0] if results and isinstance(results[0], dict) else {}
        complete = (
            final.get("status") == "done"
            and len(results) == job.total
            and all(isinstance(r, dict) and r.get("outcome") for r in results)
        )
        row = {
            "kind": job.kind,
            "job_id": job.job_id,
            "status": final.get("status", "not finished"),
            "outcome": first.get("outcome"),
            "failed_stage": first.get("failed_stage"),
            "summary": (first.get("summary") or final.get("error") or "")[:200],
            "seconds_to_done": None if job.finished is None else round(job.finished - job.submitted, 2),
            "polls": job.polls,
        }
        rows.append(row)
        if not complete:
            lost.append({**row, "poll_errors": job.poll_errors[:5]})
    return {
        "submitted": len(tracked),
        "done": len(tracked) - len(lost),
        "lost": len(lost),
        "lost_details": lost,
        "candidates": rows,
        "fork_processes_left": len(fork_leftovers),
    }


async def connection_flood(client: Client, count: int) -> dict[str, Any]:
    """Hold `count` idle connections (past the service's 512); the ones past the limit must get a 503
    too-many-connections JSON answer at once; after they are closed, health must answer 200 again."""
    writers: list[asyncio.StreamWriter] = []
    readers: list[asyncio.StreamReader] = []
    opened_errors = 0
    for _ in range(count):
        try:
            reader, writer = await asyncio.open_connection(client.host, client.port)
        except OSError:
            opened_errors += 1
            continue
        readers.append(reader)
        writers.append(writer)
    refused, other, silent = 0, Counter(), 0

    async def answer_of(reader: asyncio.StreamReader) -> Answer | None:
        try:
            return await asyncio.wait_for(read_response(reader), 1.0)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError):
            return None

    answers = await asyncio.gather(*(answer_of(reader) for reader in readers))
    for answer in answers:
        if answer is None:
            silent += 1
            continue
        code = (answer.json() or {}).get("error", {}).get("code")
        if answer.status == 503 and code == "too-many-connections":
            refused += 1
        else:
            other[f"{answer.status} {code}"] += 1
    for writer in writers:
        writer.close()
    recovered_s = None
    start = time.monotonic()
    while time.monotonic() - start < 15:
        health = await client.request("GET", "/v1/health", keep_alive=False, timeout_s=5)
        if health.status == 200:
            recovered_s = round(time.monotonic() - start, 3)
            break
        await asyncio.sleep(0.1)
    return {
        "connections": count,
        "connect_errors": opened_errors,
        "refused_503": refused,
        "held_open": silent,
        "other_answers": dict(other),
        "health_200_after_s": recovered_s,
        "ok": refused >= max(0, count - MAX_CONNECTIONS) and not other and recovered_s is not None,
    }


async def sync_hang_probe(client: Client, problem_id: str, count: int) -> dict[str, Any]:
    """`count` hanging candidates sent the way a synchronous client sends them (the default wait_s), then,
    while they wait, a health request and a statically rejected evaluation: how long do those take?"""
    solution = (STARTER / ENGINE_PROBLEM / "solution.py").read_text()
    code = _hang_in_helper(solution)
    started = time.monotonic()
    waiting = [
        asyncio.create_task(
            client.request(
                "POST",
                "/v1/evaluate",
                json.dumps(
                    {"problem_id": problem_id, "completions": [_with_marker(code, f"sync {i} {started}")]}
                ).encode(),
                keep_alive=False,
                timeout_s=900,
            )
        )
        for i in range(count)
    ]
    await asyncio.sleep(1.0)
    t = time.monotonic()
    health = await client.request("GET", "/v1/health", keep_alive=False, timeout_s=900)
    health_s = time.monotonic() - t
    t = time.monotonic()
    static_body = json.dumps({"problem_id": problem_id, "completions": [PROSE.format(marker=f"sync {t}")]})
    static = await client.request(
        "POST", "/v1/evaluate", static_body.encode(), keep_alive=False, timeout_s=900
    )
    static_s = time.monotonic() - t
    answers = await asyncio.gather(*waiting)
    return {
        "hanging_sync_requests": count,
        "health_status": health.status,
        "health_latency_s": round(health_s, 3),
        "static_status": static.status,
        "static_latency_s": round(static_s, 3),
        "hanging_statuses": dict(Counter(str(a.status) for a in answers)),
        "all_done_s": round(time.monotonic() - started, 1),
    }


async def store_check(client: Client, tracked: list[TrackedJob]) -> dict[str, Any]:
    """After the restart: re-send finished real evaluations (the solution first); report from_store."""
    finished = [j for j in tracked if j.final and j.final.get("status") == "done"]
    finished.sort(key=lambda j: (j.kind != "real-solution", j.kind))
    checked = []
    for job in finished[:3]:
        document = {"problem_id": job.problem_id, "completions": [job.completion], "wait_s": 120}
        answer = await client.call("POST", "/v1/evaluate", document, timeout_s=180)
        body = answer.json() or {}
        results = body.get("results") or [{}]
        first = results[0] if isinstance(results[0], dict) else {}
        checked.append(
            {
                "kind": job.kind,
                "status": answer.status,
                "from_store": first.get("from_store"),
                "outcome": first.get("outcome"),
                "seconds": first.get("seconds"),
            }
        )
    if not checked:  # nothing reached the engine (--real 0 and no hostile candidates): nothing to check
        return {"checked": [], "ok": None}
    return {"checked": checked, "ok": any(c["status"] == 200 and c["from_store"] is True for c in checked)}


def _address(args: argparse.Namespace) -> tuple[str, int]:
    parsed = urllib.parse.urlsplit(args.url)
    return parsed.hostname or "127.0.0.1", parsed.port or 80


def _token(args: argparse.Namespace) -> str | None:
    if args.token:
        return str(args.token)
    if args.token_file:
        return Path(args.token_file).read_text().splitlines()[0].strip()
    return None


def serve_config(args: argparse.Namespace, folder: Path, timeout_default: float | None) -> ServeConfig:
    return ServeConfig(
        binary=Path(args.kforge),
        folder=folder,
        device=args.device,
        small=not args.full_size,
        timeout_s=args.timeout if args.timeout is not None else timeout_default,
        python=args.python,
        jobs=args.jobs,
        time_budget=args.time_budget,
        extra=list(args.serve_arg),
    )


def kforge_version(binary: Path) -> str:
    try:
        result = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
        return result.stdout.strip() or result.stderr.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


async def run_load(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    report: dict[str, Any] = {
        "mode": "load",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    report["machine"] = machine_info()
    service: ServeProcess | None = None
    if args.url:
        host, port = _address(args)
        token = _token(args)
        pid = args.pid
    else:
        token = args.token or f"load-{random.Random().getrandbits(64):016x}"
        config = serve_config(args, folder, 5.0)
        service = ServeProcess(config, token, "serve.log")
        host, port, pid = service.host, service.port, service.pid
        report["kforge"] = kforge_version(config.binary)
        report["serve_command"] = " ".join(service.command)
        log(f"kforge serve pid {pid} on {host}:{port}")
    sampler = MemorySampler(pid) if pid else None
    if sampler:
        sampler.start()
    client = Client(host, port, token, args.request_timeout)
    names = suite_problems(STARTER)[: args.problems_count]
    if ENGINE_PROBLEM not in names:
        names.append(ENGINE_PROBLEM)
    sources = {name: (STARTER / name / "problem.py").read_text() for name in names}
    setup: dict[str, Any] = {}
    for name, source in sources.items():
        answer = await client.call("POST", "/v1/problems", {"source": source})
        setup[name] = answer.status
        if answer.status != 200:
            raise RuntimeError(f"registering {name}: {answer.status} {answer.body[:200]!r} {answer.error}")
    planner = LoadPlanner(args, client, sources)
    seed = await client.call(
        "POST",
        "/v1/evaluate",
        {"problem_id": planner.ids[names[0]], "completions": [PROSE.format(marker="seed")]},
    )
    if seed.status != 200:
        raise RuntimeError(f"the first evaluation failed: {seed.status} {seed.body[:300]!r} {seed.error}")
    run = LoadRun(args, client, planner)
    run.known_jobs.append(seed.json()["job_id"])
    plan = planner.plan()
    log(f"{len(plan)} requests at {args.rate}/s ({args.arrivals}), {len(planner.names)} problems")
    metrics_before = await client.request("GET", "/metrics")
    cpu_before = (time.process_time(), cpu_seconds(pid), time.monotonic())
    timing = await run.run(plan)
    cpu_after = (time.process_time(), cpu_seconds(pid), time.monotonic())
    leftovers = processes_with_argument(FORK_SLEEP) if args.forks else []
    outcomes = run.outcomes
    static = [o for o in outcomes if o.planned.case == "static-reject"]
    ordinary = [o for o in outcomes if o.planned.share == "ordinary"]
    hostile = [o for o in outcomes if o.planned.share == "hostile"]
    report["requests"] = {
        "scheduled": len(plan),
        "rate_target": args.rate,
        "arrivals": args.arrivals,
        **timing,
        "all": summarise(outcomes),
        "ordinary": summarise(ordinary),
        "hostile": summarise(hostile),
        "follow_up_polls": summarise(run.followups) if run.followups else {"sent": 0},
        "connections_opened": client.connections_opened,
        "connections_reused": client.reused,
        "cpu_cores_used": {  # over the whole run (load and jobs): how much of the machine each side took
            "client": round((cpu_after[0] - cpu_before[0]) / (cpu_after[2] - cpu_before[2]), 3),
            "service": None
            if cpu_before[1] is None or cpu_after[1] is None
            else round((cpu_after[1] - cpu_before[1]) / (cpu_after[2] - cpu_before[2]), 3),
        },
    }
    report["categories"] = category_rows(outcomes)
    report["static_rejections"] = {
        "requests": len(static),
        "completions": sum(o.planned.completions for o in static),
        "latency": latency_summary([o.latency_s for o in static]),
        "latency_from_send": latency_summary([o.answered - o.sent for o in static]),
        "target_p99_ms": STATIC_P99_TARGET_MS,
        "variants": dict(sorted(Counter(v for o in static for v in o.planned.variants).items())),
        "by_completions": {
            str(n): latency_summary([o.latency_s for o in static if o.planned.completions == n])
            for n in sorted({o.planned.completions for o in static})
        },
        "server_side_evaluate": server_histogram(metrics_before, run.metrics_after, "evaluate"),
    }
    p99 = report["static_rejections"]["latency"]["p99_ms"]
    report["static_rejections"]["target_met"] = p99 is not None and p99 < STATIC_P99_TARGET_MS
    report["jobs"] = job_report(run.tracked, leftovers)
    problems = [o for o in outcomes + run.followups if o.verdict != "ok"]
    report["not_ok"] = [
        {
            "case": o.planned.case,
            "verdict": o.verdict,
            "detail": o.detail,
            "status": o.answer.status,
            "request": (o.planned.raw or o.planned.body or b"")[:200].decode(errors="replace"),
            "answer": o.answer.body[:300].decode(errors="replace"),
        }
        for o in problems[:40]
    ]
    if args.idle_s > 0 and sampler:
        log(f"idle for {args.idle_s:.0f} s: does the service give its memory back?")
        at_end = sampler.sample()
        await asyncio.sleep(args.idle_s)
        idle = sampler.sample()
        report["memory_after_idle"] = {
            "idle_s": args.idle_s,
            "service_mib_at_load_end": round(at_end.service_kib / 1024, 1),
            "service_mib_after_idle": round(idle.service_kib / 1024, 1),
            "service_threads_at_load_end": at_end.threads,
            "service_threads_after_idle": idle.threads,
        }
    if args.sync_hangs:
        log(f"probe: {args.sync_hangs} hanging candidates with the default wait_s")
        report["sync_hang_probe"] = await sync_hang_probe(
            client, planner.ids[ENGINE_PROBLEM], args.sync_hangs
        )
    if args.flood:
        client.close()
        log(f"connection flood: {args.flood} idle connections")
        report["flood"] = await connection_flood(client, args.flood)
    health = await client.request("GET", "/v1/health", keep_alive=False, timeout_s=10)
    report["service"] = {"health_at_end": health.status, "stayed_up": health.status == 200}
    client.close()
    if sampler:
        sampler.stop()
        report["memory"] = sampler.summary()
    if service is not None:
        report["service"]["alive_before_sigterm"] = service.alive()
        report["service"]["sigterm_exit"] = service.stop()
        report["service"]["stayed_up"] &= report["service"]["alive_before_sigterm"]
        log("restarting on the same store")
        second = ServeProcess(service.config, service.token, "serve-restart.log")
        again = Client(second.host, second.port, service.token, args.request_timeout)
        report["restart"] = await store_check(again, run.tracked)
        again.close()
        report["restart"]["sigterm_exit"] = second.stop()
        if not report["service"]["stayed_up"] or report["service"]["sigterm_exit"] != 0:
            report["service"]["log_tail"] = service.log_text()[-3000:]
    report["ok"] = load_ok(report, args)
    return report


def load_ok(report: dict[str, Any], args: argparse.Namespace) -> bool:
    everything = report["requests"]["all"]
    followups = report["requests"]["follow_up_polls"]
    checks = [
        everything["failed"] == 0,
        everything["unexpected"] == 0,
        followups.get("failed", 0) == 0,
        report["jobs"]["lost"] == 0,
        report["jobs"]["fork_processes_left"] == 0,
        report["service"]["stayed_up"],
    ]
    if "memory" in report and report["memory"].get("samples"):
        checks.append(report["memory"]["service_mib"]["peak"] < args.rss_limit_mib)
    if "flood" in report:
        checks.append(report["flood"]["ok"])
    if "sync_hang_probe" in report:  # waiting clients must not keep a health request waiting
        checks.append(report["sync_hang_probe"]["health_latency_s"] < 1.0)
    if "restart" in report:
        checks += [
            report["service"]["sigterm_exit"] == 0,
            report["restart"]["ok"] is not False,
            report["restart"]["sigterm_exit"] == 0,
        ]
    return all(checks)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}" if value < 100 else f"{value:.0f}"
    return str(value)


def load_markdown(report: dict[str, Any]) -> str:
    r = report["requests"]
    lines = [
        f"## kforge serve load run ({report['date']})",
        "",
        f"Machine: {report['machine'].get('cpu', '?')}, {report['machine'].get('cores')} cores"
        + (f", {report['machine']['gpus']}" if report["machine"].get("gpus") else "")
        + (f"; kforge {report['kforge']}" if report.get("kforge") else ""),
        f"Target {r['rate_target']} req/s ({r['arrivals']}), achieved {r['achieved_rate']} req/s; "
        f"{r['scheduled']} requests sent over {r['send_span_s']} s, "
        f"all answered after {r['answered_span_s']} s, "
        f"jobs done after {r['jobs_done_s']} s; {r['connections_opened']} connections opened, "
        f"{r['connections_reused']} reuses. Latency from the scheduled send time. CPU cores used: "
        f"this client {r['cpu_cores_used']['client']}, kforge serve {r['cpu_cores_used']['service']} "
        "(its own threads, not its workers).",
        "",
        "| category | share | sent | answered | failed | unexpected | statuses "
        "| p50 ms | p90 ms | p99 ms | max ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def row(name: str, data: dict[str, Any], bold: bool = False) -> str:
        lat = data["latency"]
        statuses = " ".join(f"{k}x{v}" for k, v in data["statuses"].items())
        cells = [
            name,
            data.get("share", ""),
            data["sent"],
            data["answered"],
            data["failed"],
            data["unexpected"],
            statuses,
            lat["p50_ms"],
            lat["p90_ms"],
            lat["p99_ms"],
            lat["max_ms"],
        ]
        text = [_fmt(c) for c in cells]
        if bold:
            text[0] = f"**{text[0]}**"
        return "| " + " | ".join(text) + " |"

    for name, data in report["categories"].items():
        lines.append(row(name, data))
    lines.append(row("ordinary", {**r["ordinary"], "share": "ordinary"}, True))
    lines.append(row("hostile", {**r["hostile"], "share": "hostile"}, True))
    lines.append(row("all", {**r["all"], "share": ""}, True))
    if r["follow_up_polls"].get("sent"):
        lines.append(row("job polls (follow-up, not scheduled)", {**r["follow_up_polls"], "share": ""}))
    s = report["static_rejections"]
    lat = s["latency"]
    lines += [
        "",
        f"**Rejected by static rules alone**: {s['requests']} requests ({s['completions']} completions), "
        f"p50 {lat['p50_ms']} ms, p90 {lat['p90_ms']} ms, p99 {lat['p99_ms']} ms, max {lat['max_ms']} ms "
        f"(from the actual send: p99 {s['latency_from_send']['p99_ms']} ms); "
        f"target p99 < {s['target_p99_ms']} ms: "
        f"**{'met' if s['target_met'] else 'NOT met'}**. Send lag p99 {r['send_lag_ms']['p99_ms']} ms. By "
        "completions per request: "
        + "; ".join(
            f"{n}: {v['count']} requests, p50 {v['p50_ms']} / p99 {v['p99_ms']} ms"
            for n, v in s["by_completions"].items()
        )
        + ".",
    ]
    server = s["server_side_evaluate"]
    if server.get("count"):
        shares = ", ".join(f"≤ {le} ms {share:.1%}" for le, share in server["share_within_ms"].items())
        lines.append(
            f"Server side (kforge_http_request_seconds, route evaluate, every /v1/evaluate answer: "
            f"{server['count']}): {shares}; 99% within {server['p99_bucket_ms']} ms."
        )
    mem = report.get("memory")
    if mem and mem.get("samples"):
        sm, cm, cp = mem["service_mib"], mem["children_mib"], mem["children_processes"]
        lines.append(
            f"**Memory** ({mem['samples']} samples, every {mem['period_s']} s): kforge serve RSS "
            f"{sm['start']} → peak {sm['peak']} → {sm['end']} MiB; "
            f"its {cp['start']}/{cp['peak']}/{cp['end']} child processes (start/peak/end) "
            f"{cm['start']} → peak {cm['peak']} → {cm['end']} MiB (RSS summed)."
        )
        if "service_threads" in mem:
            th = mem["service_threads"]
            lines.append(f"Service threads: {th['start']} → peak {th['peak']} → {th['end']}.")
    idle = report.get("memory_after_idle")
    if idle:
        lines.append(
            f"**After {idle['idle_s']:.0f} s idle**: service RSS {idle['service_mib_at_load_end']} → "
            f"{idle['service_mib_after_idle']} MiB, threads {idle['service_threads_at_load_end']} → "
            f"{idle['service_threads_after_idle']}."
        )
    j = report["jobs"]
    lines.append(
        f"**Jobs** (engine candidates, wait_s=0, polled): {j['submitted']} submitted, {j['done']} done with "
        f"every result, **{j['lost']} lost**; "
        f"processes left by the fork candidates: {j['fork_processes_left']}."
    )
    if j["candidates"]:
        lines += [
            "",
            "| engine candidate | status | outcome | stage | s to done | summary |",
            "|---|---|---|---|---|---|",
        ]
        for c in j["candidates"]:
            summary = c["summary"].replace("|", "/")[:110]
            lines.append(
                f"| {c['kind']} | {c['status']} | {_fmt(c['outcome'])} | {_fmt(c['failed_stage'])} "
                f"| {_fmt(c['seconds_to_done'])} | {summary} |"
            )
        lines.append("")
    if "sync_hang_probe" in report:
        p = report["sync_hang_probe"]
        lines.append(
            f"**Probe: {p['hanging_sync_requests']} hanging candidates with the default wait_s**: "
            f"health answered {p['health_status']} after {p['health_latency_s']} s, "
            f"a static rejection {p['static_status']} after "
            f"{p['static_latency_s']} s (all done after {p['all_done_s']} s)."
        )
    if "flood" in report:
        f = report["flood"]
        lines.append(
            f"**Connection flood**: {f['connections']} idle connections: {f['refused_503']} refused with 503 "
            f"too-many-connections, {f['held_open']} held, other answers {f['other_answers'] or 'none'}; "
            "health 200 "
            f"again {f['health_200_after_s']} s after closing them: {'ok' if f['ok'] else 'NOT ok'}."
        )
    svc = report["service"]
    line = f"**Service**: health at the end {svc['health_at_end']}, stayed up: {svc['stayed_up']}"
    if "sigterm_exit" in svc:
        line += f"; SIGTERM exit {svc['sigterm_exit']}"
    lines.append(line + ".")
    if "restart" in report:
        rs = report["restart"]
        checked = ", ".join(f"{c['kind']}: {c['status']} from_store={c['from_store']}" for c in rs["checked"])
        lines.append(
            f"**Restart on the same store**: {checked or 'nothing to check'}; "
            f"{ {True: 'ok', False: 'NOT ok', None: 'skipped'}[rs['ok']] }; "
            f"SIGTERM exit {rs['sigterm_exit']}."
        )
    if report["not_ok"]:
        lines += ["", "Failed or unexpected answers (first 40):", ""]
        for item in report["not_ok"]:
            lines.append(f"- {item['case']} ({item['verdict']}): {item['detail']}")
    lines += ["", f"**Overall: {'PASS' if report['ok'] else 'FAIL'}**"]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------
# GRPO batch

GRPO_SLOTS = ("correct", "wrong-scale", "correct", "no-code", "correct", "wrong-bound", "correct", "static")
EXPECTED = {
    "correct": ("accepted", None),
    "wrong-scale": ("rejected", "correctness"),
    "wrong-bound": ("rejected", "correctness"),
    "no-code": ("rejected", "extract"),
    "static": ("rejected", "static"),
}


def grpo_completion(kind: str, solution: str, problem_text: str, marker: str, index: int) -> str:
    if kind == "correct":
        code = _with_marker(solution, marker)
        return _markdown(code, marker) if index % 4 == 2 else code
    if kind in ("wrong-scale", "wrong-bound"):
        try:
            if kind == "wrong-bound":
                return _with_marker(make_candidates.wrong_bound_off_by_one(solution), marker)
        except make_candidates.EditError:
            pass
        return _with_marker(make_candidates.wrong_scale(solution, problem_text), marker)
    if kind == "no-code":
        return PROSE.format(marker=marker)
    if kind == "static":
        return _with_marker(
            make_candidates._insert_in_forward(solution, "{arg} = torch.sigmoid({arg})"), marker
        )
    raise ValueError(kind)


async def run_grpo(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    report: dict[str, Any] = {
        "mode": "grpo",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    report["machine"] = machine_info()
    service: ServeProcess | None = None
    if args.url:
        host, port = _address(args)
        token = _token(args)
    else:
        token = args.token or f"grpo-{random.Random().getrandbits(64):016x}"
        config = serve_config(args, folder, None)
        service = ServeProcess(config, token, "serve.log")
        host, port = service.host, service.port
        report["kforge"] = kforge_version(config.binary)
        report["serve_command"] = " ".join(service.command)
        log(f"kforge serve pid {service.pid} on {host}:{port}")
    client = Client(host, port, token, args.request_timeout)
    suite = Path(args.suite)
    names = suite_problems(suite)
    ids = {}
    for name in names:
        answer = await client.call(
            "POST", "/v1/problems", {"source": (suite / name / "problem.py").read_text()}
        )
        if answer.status != 200:
            raise RuntimeError(f"registering {name}: {answer.status} {answer.body[:200]!r} {answer.error}")
        ids[name] = answer.json()["problem_id"]
    prompts = []
    for p in range(args.prompts):
        name = names[p % len(names)]
        solution = (suite / name / "solution.py").read_text()
        problem_text = (suite / name / "problem.py").read_text()
        kinds = [GRPO_SLOTS[i % len(GRPO_SLOTS)] for i in range(args.group)]
        texts = [
            grpo_completion(k, solution, problem_text, f"prompt {p} sample {i}", i)
            for i, k in enumerate(kinds)
        ]
        prompts.append((name, kinds, texts))
    log(f"{args.prompts} prompts x {args.group} completions over {len(names)} problems, sent at once")
    health_latencies: list[float] = []
    stop = asyncio.Event()

    probe_started: list[float] = []  # the send time of the probe in flight, if any

    async def probe_health() -> None:
        probe = Client(host, port, token, args.deadline)
        while not stop.is_set():
            probe_started[:] = [time.monotonic()]
            await probe.request("GET", "/v1/health", keep_alive=False)
            health_latencies.append(time.monotonic() - probe_started.pop())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), args.health_probe_period)

    async def one(name: str, texts: list[str]) -> tuple[float, Answer, dict[str, Any] | None]:
        t = time.monotonic()
        own = Client(host, port, token, args.deadline)
        document = {
            "problem_id": ids[name],
            "completions": texts,
            "reward": args.reward,
            "wait_s": args.wait_s,
        }
        answer = await own.call("POST", "/v1/evaluate", document, timeout_s=args.deadline)
        final = answer.json() if answer.status == 200 else None
        if answer.status == 202:  # waited out: poll, as a client would
            job_id = answer.json()["job_id"]
            while time.monotonic() - t < args.deadline:
                await asyncio.sleep(1.0)
                polled = await own.call("GET", f"/v1/jobs/{job_id}")
                if polled.status == 200 and polled.json()["status"] in ("done", "failed"):
                    final = polled.json()
                    break
        own.close()
        return time.monotonic() - t, answer, final

    prober = asyncio.create_task(probe_health())
    start = time.monotonic()
    results = await asyncio.gather(*(one(name, texts) for name, _, texts in prompts))
    wall = time.monotonic() - start
    stop.set()
    prober.cancel()  # a probe may still wait behind the evaluations (all handler threads busy)
    with contextlib.suppress(asyncio.CancelledError):
        await prober
    unanswered_probe_s = round(time.monotonic() - probe_started[0], 2) if probe_started else None
    outcomes: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    rewards: list[float] = []
    rewards_by_kind: dict[str, list[float]] = {}
    speedups: list[float] = []
    as_expected = evaluated = unfinished = 0
    for (_name, kinds, _texts), (_seconds, _answer, final) in zip(prompts, results, strict=True):
        if not final or final.get("status") != "done":
            unfinished += 1
            continue
        for kind, result in zip(kinds, final["results"], strict=True):
            if not isinstance(result, dict):
                continue
            evaluated += 1
            label = result["outcome"] + (f"@{result['failed_stage']}" if result.get("failed_stage") else "")
            outcomes[label] += 1
            by_kind.setdefault(kind, Counter())[label] += 1
            expected_outcome, expected_stage = EXPECTED[kind]
            if result["outcome"] == expected_outcome and result.get("failed_stage") == expected_stage:
                as_expected += 1
            value = (result.get("reward") or {}).get("reward")
            if isinstance(value, int | float):
                rewards.append(float(value))
                rewards_by_kind.setdefault(kind, []).append(float(value))
            if isinstance(result.get("speedup"), int | float) and result["speedup"] > 0:
                speedups.append(float(result["speedup"]))
    total = args.prompts * args.group
    report.update(
        {
            "prompts": args.prompts,
            "group": args.group,
            "completions": total,
            "problems": len(names),
            "reward_formula": args.reward,
            "wall_s": round(wall, 2),
            "completions_per_s": round(evaluated / wall, 2),  # the ones finished by the deadline
            "request_latency": latency_summary([s for s, _, _ in results]),
            "statuses": dict(Counter(str(a.status) for _, a, _ in results)),
            "unfinished_requests": unfinished,
            "evaluated": evaluated,
            "as_expected": as_expected,
            "outcomes": dict(outcomes.most_common()),
            "outcomes_by_kind": {k: dict(v.most_common()) for k, v in sorted(by_kind.items())},
            "reward_mean": round(statistics.fmean(rewards), 4) if rewards else None,
            "reward_null": evaluated - len(rewards),
            "reward_mean_by_kind": {
                k: round(statistics.fmean(v), 4) for k, v in sorted(rewards_by_kind.items())
            },
            "speedup_geomean": round(math.exp(statistics.fmean(math.log(s) for s in speedups)), 3)
            if speedups
            else None,
            "health_during_batch": latency_summary(health_latencies),
            "health_probe_unanswered_at_end_s": unanswered_probe_s,
        }
    )
    client.close()
    if service is not None:  # past the deadline, do not wait for the evaluations still queued to drain
        report["sigterm_exit"] = service.stop(180.0 if unfinished == 0 else 20.0)
        report["serve_log_tail"] = service.log_text()[-1500:]
    report["ok"] = unfinished == 0 and evaluated == total and report.get("sigterm_exit", 0) == 0
    return report


def grpo_markdown(report: dict[str, Any]) -> str:
    lat, health = report["request_latency"], report["health_during_batch"]
    machine = report["machine"]
    lines = [
        f"## kforge serve GRPO batch ({report['date']})",
        "",
        f"Machine: {machine.get('gpus') or machine.get('cpu', '?')}, {machine.get('cores')} cores"
        + (f"; kforge {report['kforge']}" if report.get("kforge") else ""),
        f"`{report.get('serve_command', 'external service')}`",
        "",
        "| prompts x group | completions | wall s | completions/s | request p50 s | request p99 s | "
        "as expected | reward mean | speedup geomean | health p50/max s during the batch |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| {report['prompts']} x {report['group']} | {report['completions']} | {report['wall_s']} | "
        f"{report['completions_per_s']} | {_fmt((lat['p50_ms'] or 0) / 1000)} | "
        f"{_fmt((lat['p99_ms'] or 0) / 1000)} | "
        f"{report['as_expected']}/{report['evaluated']} | {_fmt(report['reward_mean'])} | "
        f"{_fmt(report['speedup_geomean'])} | {_fmt((health['p50_ms'] or 0) / 1000)}/"
        f"{_fmt((health['max_ms'] or 0) / 1000)} |",
        "",
        "| completion kind | outcomes | reward mean |",
        "|---|---|---|",
    ]
    for kind, counts in report["outcomes_by_kind"].items():
        text = ", ".join(f"{k} {v}" for k, v in counts.items())
        lines.append(f"| {kind} | {text} | {_fmt(report['reward_mean_by_kind'].get(kind))} |")
    lines += [
        "",
        f"HTTP statuses {report['statuses']}; unfinished requests {report['unfinished_requests']}; "
        f"null rewards {report['reward_null']}; SIGTERM exit {report.get('sigterm_exit', '-')}."
        + (
            f" A health probe was still unanswered after {report['health_probe_unanswered_at_end_s']} s."
            if report["health_probe_unanswered_at_end_s"] is not None
            else ""
        ),
        f"**Overall: {'PASS' if report['ok'] else 'FAIL'}**",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------
# CLI


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="serve_load.py",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "mode", nargs="?", choices=("load", "grpo"), default="load", help="what to run (default load)"
    )
    service = parser.add_argument_group("the service")
    service.add_argument(
        "--kforge",
        default=str(default_kforge()),
        help="kforge binary (default $KFORGE_BIN or build/release/kforge)",
    )
    service.add_argument(
        "--python",
        default=default_python(),
        help="interpreter with torch and triton, passed to kforge serve --python "
        "(default .venv/bin/python, else python3)",
    )
    service.add_argument(
        "--device",
        default=None,
        help="kforge serve --device: cpu, auto, cuda:N (default: cpu for load, auto for grpo)",
    )
    service.add_argument(
        "--full-size",
        action="store_true",
        help="the problems' full sizes (default: --small, their KFORGE_SMALL sizes)",
    )
    service.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="kforge serve --timeout, seconds per worker call "
        "(default: 5 for load, so hangs end; the service's own for grpo)",
    )
    service.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        help="kforge serve -j: evaluations in flight per device (default: the service's)",
    )
    service.add_argument(
        "--time-budget",
        type=float,
        default=None,
        help="kforge serve --time-budget: seconds of timing per evaluation (default: the service's)",
    )
    service.add_argument(
        "--serve-arg", action="append", default=[], help="one more argument for kforge serve (repeat)"
    )
    service.add_argument(
        "--url",
        default=None,
        help="use a running service at this URL instead of starting one (no restart check)",
    )
    service.add_argument(
        "--token",
        default=None,
        help="bearer token (with --url; default: a random one for the started service)",
    )
    service.add_argument("--token-file", default=None, help="file whose first line is the token (with --url)")
    service.add_argument(
        "--pid", type=int, default=None, help="with --url: the service's pid, to sample its memory"
    )
    service.add_argument(
        "--workdir",
        default=None,
        help="folder for the store, token, problems and logs (default: a temporary one)",
    )
    service.add_argument("--keep", action="store_true", help="keep the temporary folder (printed at the end)")
    out = parser.add_argument_group("output")
    out.add_argument("--json-out", default=None, help="write the JSON report here")
    out.add_argument("--seed", type=int, default=1, help="seed of the request mix (default 1)")
    out.add_argument(
        "--request-timeout",
        type=float,
        default=60.0,
        help="seconds a request may take before it counts as failed (default 60)",
    )
    load = parser.add_argument_group("load mode")
    load.add_argument("--requests", type=int, default=3000, help="requests to send (default 3000)")
    load.add_argument(
        "--rate", type=float, default=200.0, help="target requests per second, open loop (default 200)"
    )
    load.add_argument(
        "--arrivals",
        choices=("uniform", "poisson"),
        default="uniform",
        help="evenly spaced sends, or Poisson arrivals at --rate (default uniform)",
    )
    load.add_argument(
        "--problems-count", type=int, default=12, help="starter problems registered and used (default 12)"
    )
    load.add_argument(
        "--real",
        type=int,
        default=1,
        help="correct solutions evaluated for real (for the store check; default 1)",
    )
    load.add_argument(
        "--hangs", type=int, default=4, help="candidates that hang in a kernel or a helper (default 4)"
    )
    load.add_argument(
        "--crashes",
        type=int,
        default=4,
        help="candidates that abort, os._exit, raise or allocate 4 TiB (default 4)",
    )
    load.add_argument(
        "--forks",
        type=int,
        default=2,
        help="candidates that start processes through pydoc.pipepager (default 2)",
    )
    load.add_argument(
        "--fork-processes",
        type=int,
        default=32,
        help="processes each fork candidate starts per call (default 32)",
    )
    load.add_argument(
        "--slowloris-byte-delay",
        type=float,
        default=0.02,
        help="seconds between the bytes of a slow-loris request (default 0.02)",
    )
    load.add_argument(
        "--jobs-deadline",
        type=float,
        default=300.0,
        help="seconds after submission by which every job must be done (default 300)",
    )
    load.add_argument(
        "--flood",
        type=int,
        default=520,
        help="idle connections opened after the load, past the 512 limit (0: skip; default 520)",
    )
    load.add_argument(
        "--sync-hangs",
        type=int,
        default=0,
        help="probe after the load: this many hanging candidates with the default wait_s, "
        "then time a health request (default 0: off)",
    )
    load.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="CASE",
        help="leave a request case out of the mix (repeat), e.g. wrong-type-flag",
    )
    load.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="CASE",
        help="send only these request cases (repeat), e.g. --only static-reject",
    )
    load.add_argument(
        "--idle-s",
        type=float,
        default=0.0,
        help="after the load, stay idle this long and sample the service's memory and threads again "
        "(default 0: off)",
    )
    load.add_argument(
        "--rss-limit-mib",
        type=float,
        default=1024.0,
        help="the service's own RSS must stay below this (default 1024)",
    )
    grpo = parser.add_argument_group("grpo mode")
    grpo.add_argument(
        "--suite",
        default=str(STARTER),
        help="problem suite folder with problem.py and solution.py per problem (default problems/starter)",
    )
    grpo.add_argument("--prompts", type=int, default=64, help="prompt groups, one request each (default 64)")
    grpo.add_argument(
        "--group",
        type=int,
        default=8,
        help="completions per prompt (default 8: 4 correct, 2 wrong, 1 no code, 1 static)",
    )
    grpo.add_argument("--reward", default="kforge", help="reward formula (default kforge)")
    grpo.add_argument(
        "--wait-s",
        type=float,
        default=600.0,
        help="wait_s of each request; a 202 is then polled (default 600)",
    )
    grpo.add_argument(
        "--deadline", type=float, default=3000.0, help="seconds the batch may take (default 3000)"
    )
    grpo.add_argument(
        "--health-probe-period",
        type=float,
        default=1.0,
        help="seconds between health probes during the batch (default 1)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.device is None:
        args.device = "cpu" if args.mode == "load" else "auto"
    for option in ("exclude", "only"):
        unknown = set(getattr(args, option)) - set(ORDINARY_WEIGHTS) - set(HOSTILE_WEIGHTS)
        if unknown:
            raise SystemExit(f"--{option}: unknown case(s) {sorted(unknown)}")
    folder = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="kforge-serve-load-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if args.mode == "load":
            report = asyncio.run(run_load(args, folder))
            text = load_markdown(report)
        else:
            report = asyncio.run(run_grpo(args, folder))
            text = grpo_markdown(report)
    finally:
        if args.keep or args.workdir:
            log(f"files kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    report["args"] = {k: v for k, v in vars(args).items() if k not in ("token",)}
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(report, indent=1) + "\n")
    print(text)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
