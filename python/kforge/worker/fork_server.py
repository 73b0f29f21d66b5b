"""A warm fork server shared by kforge invocations (KFORGE_FORK_SERVER): torch and the trusted workers are
imported once, and each `kforge eval` gets its judge (and kernel mode its wrapper probe) forked here instead
of paying Python's and torch's start-up (about 2 s of CPU) again.

kforge starts one server per worker environment, as `python -X faulthandler -m kforge.worker.fork_server
--socket PATH --idle SECONDS` with that worker's environment (less the per-launch folders, see
PER_LAUNCH), and finds it again by the socket's name. The server takes only what a fresh start of the
same worker would be (a judge, or kernel mode's kernel_capture): a request must name this interpreter,
`-X faulthandler -m kforge.worker.M` with M in MODULES, and an environment equal to the server's own
except PER_LAUNCH. Only a peer of the same user that is not sandboxed (no_new_privs and seccomp both off:
every kforge candidate has both on) may ask: a candidate that reached the socket could otherwise start a
judge outside its sandbox.

Protocol, one connection per worker: kforge sends one JSON line with the worker's log, request and reply
descriptors (SCM_RIGHTS); the server forks, answers {"pid": N} (or {"declined": why}) and, when that
worker exits, {"status": S} with the raw wait status, then closes the connection. If kforge goes away
first (the connection closes), the server kills the worker's process group. The server exits after
`--idle` seconds with no worker running and no request.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import ctypes
import fcntl
import json
import os
import runpy
import select
import signal
import socket
import struct
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Trusted workers only: the judge, and kernel mode's wrapper probe and test-block capture (they run the
# user's own reference file, as a judge does). Never a zygote: its programs must be re-parented to kforge.
MODULES = frozenset({"judge", "kernel_capture"})
PER_LAUNCH = ("TMPDIR", "TRITON_CACHE_DIR")  # folders of one evaluation; HOME too where user site is off
MAX_REQUEST_BYTES = 1 << 20
MAX_FDS = 4
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

_libc = ctypes.CDLL(None, use_errno=True)


def comparable(environment: dict[str, str]) -> dict[str, str]:
    """The environment less what differs from one evaluation to the next without changing the imports."""
    skipped = set(PER_LAUNCH)
    if environment.get("PYTHONNOUSERSITE"):
        skipped.add("HOME")  # without user site-packages HOME only places caches, read when used
    return {name: value for name, value in environment.items() if name not in skipped}


def started_with() -> dict[str, str]:
    """The environment this process was started with: Python itself may add to os.environ at start-up
    (LC_CTYPE where the locale is C, PEP 538), which a fresh judge's request would not have."""
    raw = Path("/proc/self/environ").read_bytes()
    pairs = (entry.split(b"=", 1) for entry in raw.split(b"\0") if b"=" in entry)
    return {os.fsdecode(name): os.fsdecode(value) for name, value in pairs}


def peer_may_ask(connection: socket.socket) -> str | None:
    """None when the peer is this user's and unsandboxed; otherwise why it may not ask."""
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _ = struct.unpack("3i", credentials)
    if uid != os.getuid():
        return f"peer uid {uid} is not this server's"
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError as exc:
        return f"cannot read the peer's status: {exc}"
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if fields.get("NoNewPrivs", "").strip() != "0" or fields.get("Seccomp", "").strip() != "0":
        return "the peer is sandboxed"
    return None


def check_request(request: Any, server_environment: dict[str, str]) -> tuple[str, list[str], str]:
    """(module, arguments after it, why not): why is empty when this server may start the request."""
    if not isinstance(request, dict):
        return "", [], "the request is not a JSON object"
    arguments = [str(argument) for argument in request.get("arguments", [])]
    if os.path.realpath(str(request.get("executable", ""))) != os.path.realpath(sys.executable):
        return "", [], "another interpreter"
    if arguments[:3] != ["-X", "faulthandler", "-m"] or len(arguments) < 4:
        return "", [], "not a kforge worker module"
    module = arguments[3].removeprefix("kforge.worker.")
    if arguments[3] != f"kforge.worker.{module}" or module not in MODULES:
        return "", [], f"{arguments[3]} is not one of {sorted(MODULES)}"
    environment = {str(name): str(value) for name, value in request.get("environment", [])}
    if comparable(environment) != comparable(server_environment):
        return "", [], "another environment"
    return module, arguments[4:], ""


def become_worker(
    request: dict[str, Any], module: str, arguments: list[str], fds: list[int], added: dict[str, str]
) -> None:
    """In the forked child: the descriptors, folder and environment of a fresh start, then the module."""
    code = 0
    try:
        os.setpgid(0, 0)  # its own group: kforge stops and kills the group
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a worker never outlives its server
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(number, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds]  # above 0-4: no dup2 clobbers one
        log, requests, replies = moved[:3]
        null = fcntl.fcntl(os.open(os.devnull, os.O_RDONLY), fcntl.F_DUPFD_CLOEXEC, 10)
        for target, source in ((0, null), (1, log), (2, log), (3, requests), (4, replies)):
            os.dup2(source, target)
        os.closerange(5, os.sysconf("SC_OPEN_MAX"))
        os.chdir(request["working_directory"])
        os.environ.clear()
        os.environ.update({str(name): str(value) for name, value in request["environment"]})
        for name, value in added.items():  # what Python adds at start-up, as it did for the server
            os.environ.setdefault(name, value)
        tempfile.tempdir = None  # TMPDIR changed: forget the server's temporary folder
        if not os.environ.get("PYTHONSAFEPATH"):
            sys.path[0] = os.getcwd()  # `python -m` puts the working folder first
        sys.argv = ["-m", *arguments]
        runpy.run_module(f"kforge.worker.{module}", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - printed to the log as a fresh interpreter would; kforge sees the status
        import traceback

        traceback.print_exc()
        code = 1
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()  # what a fresh interpreter runs at exit
    with contextlib.suppress(BaseException):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


@dataclass
class Server:
    listener: socket.socket
    environment: dict[str, str]
    idle_s: float
    workers: dict[int, socket.socket] = field(default_factory=dict)  # pid -> its kforge's connection
    last_activity: float = field(default_factory=time.monotonic)

    def answer(self, connection: socket.socket, reply: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            connection.sendall(json.dumps(reply).encode() + b"\n")

    def receive(self, connection: socket.socket) -> tuple[Any, list[int]]:
        connection.settimeout(10.0)
        data, fds = b"", []
        while b"\n" not in data and len(data) <= MAX_REQUEST_BYTES:
            chunk, received, _, _ = socket.recv_fds(connection, 1 << 16, MAX_FDS)
            fds.extend(received)
            if not chunk:
                break
            data += chunk
        connection.settimeout(None)
        try:
            return json.loads(data.split(b"\n", 1)[0]), fds
        except ValueError:
            return None, fds

    def accept(self) -> None:
        connection, _ = self.listener.accept()
        self.last_activity = time.monotonic()
        fds: list[int] = []
        try:
            request, fds = self.receive(connection)  # read first, so that a refusal reaches the peer
            refused = peer_may_ask(connection)
            if refused is None:
                module, arguments, refused = check_request(request, self.environment)
                if not refused and len(fds) != 3:
                    refused = "a worker needs three descriptors: log, requests, replies"
            if refused:
                print(f"kforge fork server: declined a request: {refused}", flush=True)
                self.answer(connection, {"declined": refused})
                connection.close()
                return
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                for held in (self.listener, connection, *self.workers.values()):
                    held.detach()  # the worker closes these descriptors; their objects must not later
                added = {name: value for name, value in os.environ.items() if name not in self.environment}
                become_worker(request, module, arguments, fds, added)
            with contextlib.suppress(OSError):  # also here, so kforge may signal the group at once
                os.setpgid(pid, pid)
            self.workers[pid] = connection
            self.answer(connection, {"pid": pid})
            print(f"kforge fork server: forked kforge.worker.{module} as {pid}", flush=True)
        except Exception as exc:  # noqa: BLE001 - a malformed request is declined; the server serves on
            self.answer(connection, {"declined": f"{type(exc).__name__}: {exc}"})
            connection.close()
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            connection = self.workers.pop(pid, None)  # None: a descendant re-parented to this subreaper
            if connection is not None:
                self.answer(connection, {"status": status})
                connection.close()
                self.last_activity = time.monotonic()

    def forsaken(self, connection: socket.socket) -> None:
        """kforge closed the connection of a running worker: it is gone, so is the worker."""
        for pid, held in list(self.workers.items()):
            if held is connection:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)

    def serve(self, wakeup: int) -> None:
        while self.workers or time.monotonic() - self.last_activity < self.idle_s:
            watched = [self.listener, wakeup, *self.workers.values()]
            readable, _, _ = select.select(watched, [], [], 1.0)
            for ready in readable:
                if ready is self.listener:
                    self.accept()
                elif ready == wakeup:
                    with contextlib.suppress(BlockingIOError):
                        os.read(wakeup, 4096)
                elif isinstance(ready, socket.socket) and not ready.recv(1, socket.MSG_PEEK):
                    self.forsaken(ready)
            self.reap()


def preload() -> None:
    """What the workers import before their first request, once here (CUDA stays uninitialised)."""
    import torch  # noqa: F401
    import triton.language  # noqa: F401

    from kforge.worker import judge, kernel_capture  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--socket", required=True, type=lambda text: Path(text).absolute())
    parser.add_argument("--idle", type=float, default=600.0, help="exit after this many seconds unused")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork.*")
    lock = os.open(f"{args.socket}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another server holds this socket
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())  # who holds it: `kill $(cat PATH.lock)` stops the server
    preload()
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1)  # the workers' own children are reaped here, not left as zombies
    with contextlib.suppress(FileNotFoundError):
        args.socket.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)
    try:
        os.chdir(args.socket.parent)  # bound by its name alone: a socket address holds at most 107 bytes
        listener.bind(args.socket.name)
    finally:
        os.umask(old_mask)
    listener.listen(64)
    read_end, write_end = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(write_end)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = Server(listener, started_with(), args.idle)
    try:
        server.serve(read_end)
    finally:
        with contextlib.suppress(FileNotFoundError):
            args.socket.unlink()
        for pid in server.workers:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
