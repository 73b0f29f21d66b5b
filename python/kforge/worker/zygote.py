"""The candidate zygote: imports torch, triton and the candidate worker once (CUDA stays uninitialised),
then forks one fresh candidate process per request from kforge.

Run by the kforge binary as `python -m kforge.worker.zygote` inside the candidate sandbox minus seccomp,
with one AF_UNIX stream socket on fds 3 and 4: each `fork` request carries the candidate's three pipe ends
(requests, replies, log) and, when Landlock is on, the ruleset kforge built for that candidate. The forked
candidate restricts itself (process group, Landlock, seccomp) before it reads its first request, so no
candidate code ever runs with less than a freshly started candidate's sandbox. kforge decides every rule;
this file only replays the system calls.

A fork request may instead name a program: one of PROGRAMS, run once with its arguments as
`python -m kforge.worker.MODULE ARGS` would run it (TritonBench's file runs, captures and comparisons),
so a program, too, starts without paying the imports. kforge also starts a trusted zygote, outside the
sandbox, for programs that run the user's own files (a gold file and its capture).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import select
import socket
import sys
import tempfile
import warnings
from typing import Any

MAX_REQUEST_BYTES = 16 * 1024 * 1024
PROGRAMS = frozenset({"tritonbench_run", "tritonbench_compare", "kernel_capture"})
PRELOADABLE = frozenset({"torch._inductor"})
MAX_FDS = 8
STATUS_TIMEOUT_S = 60.0
# System call numbers shared by x86-64 and arm64 (Landlock's are the same on every architecture).
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_RULE_PATH_BENEATH = 1
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SOCK_FILTER_BYTES = 8


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # struct landlock_path_beneath_attr is __attribute__((packed))
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc = ctypes.CDLL(None, use_errno=True)


def _restrict_with_landlock(ruleset_fd: int, proc_rights: int) -> int:
    """Adds this process's own /proc/<pid> to the ruleset and restricts itself; 0 or an errno."""
    proc = os.open("/proc/self", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        rule = ctypes.byref(_PathBeneath(proc_rights, proc))
        if _libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, rule, 0):
            return ctypes.get_errno()
    finally:
        os.close(proc)
    if _libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset_fd, 0):
        return ctypes.get_errno()
    return 0


def _install_seccomp(program_hex: str) -> int:
    """Installs kforge's BPF program (no_new_privs is inherited from the zygote); 0 or an errno."""
    program = bytes.fromhex(program_hex)
    if not program or len(program) % SOCK_FILTER_BYTES:
        return 22  # EINVAL: not a whole number of BPF instructions
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // SOCK_FILTER_BYTES, ctypes.cast(buffer, ctypes.c_void_p))
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0):
        return ctypes.get_errno()
    return 0


def _become_candidate(request: dict[str, Any], fds: list[int], status_fd: int) -> None:
    """In the forked candidate: wire the pipes, take the candidate's environment, sandbox, serve."""
    status: dict[str, Any] = {"pid": os.getpid()}
    try:
        os.setpgid(0, 0)  # its own group: kforge stops and kills the group
        # The hidden reply channel's descriptor (chosen by kforge; fd 4 then stays closed), or fd 4.
        reply_fd = int(request.get("reply_fd", -1))
        reply_fd = reply_fd if reply_fd > 4 else 4
        if status_fd == reply_fd:  # keep the status pipe out of the reply descriptor's way
            status_fd = fcntl.fcntl(status_fd, fcntl.F_DUPFD_CLOEXEC, 10)
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds]  # above 0-4: no dup2 clobbers one
        requests, replies, log = moved[:3]
        ruleset = moved[3] if len(moved) > 3 else -1
        if ruleset == reply_fd:
            ruleset = fcntl.fcntl(ruleset, fcntl.F_DUPFD_CLOEXEC, 10)
        null = fcntl.fcntl(os.open(os.devnull, os.O_RDONLY), fcntl.F_DUPFD_CLOEXEC, 10)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.dup2(requests, 3)
        os.dup2(replies, reply_fd)
        keep = {0, 1, 2, 3, reply_fd, status_fd, ruleset}
        for fd in os.listdir("/proc/self/fd"):
            if int(fd) not in keep:
                with contextlib.suppress(OSError):  # the listing's own descriptor, already closed
                    os.close(int(fd))
        os.chdir(request["working_directory"])
        os.environ.clear()
        os.environ.update({str(name): str(value) for name, value in request["environment"]})
        tempfile.tempdir = None  # TMPDIR changed: forget the zygote's temporary folder
        if ruleset >= 0:
            status["landlock_error"] = _restrict_with_landlock(ruleset, int(request["landlock_proc_rights"]))
            os.close(ruleset)
        if request.get("seccomp_program"):
            status["seccomp_error"] = _install_seccomp(str(request["seccomp_program"]))
    except BaseException as exc:  # noqa: BLE001 - anything here must reach kforge as a setup error
        status["setup_error"] = f"{type(exc).__name__}: {exc}"
    os.write(status_fd, json.dumps(status).encode())
    os.close(status_fd)
    if "setup_error" in status:
        os._exit(127)
    code = 0
    try:
        program = request.get("program")
        if isinstance(program, dict):
            code = _run_program(program)
        else:
            from kforge.worker import candidate

            candidate.main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - print it to the log; kforge sees the exit status
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # never return into the zygote's loop


def _run_program(program: dict[str, Any]) -> int:
    """One of PROGRAMS with its arguments; its exit status."""
    import importlib

    module = str(program.get("module"))
    if module not in PROGRAMS:
        print(f"kforge zygote: {module!r} is not one of {sorted(PROGRAMS)}", file=sys.stderr)
        return 2
    argv = [str(argument) for argument in program.get("argv", [])]
    sys.argv = [f"kforge.worker.{module}", *argv]
    result = importlib.import_module(f"kforge.worker.{module}").main(argv)
    return result if isinstance(result, int) else 0


def _read_status(status_fd: int) -> dict[str, Any]:
    data = b""
    while True:
        ready, _, _ = select.select([status_fd], [], [], STATUS_TIMEOUT_S)
        if not ready:
            return {"setup_error": f"the forked candidate said nothing within {STATUS_TIMEOUT_S:.0f} s"}
        chunk = os.read(status_fd, 65536)
        if not chunk:
            break
        data += chunk
    if not data:
        return {"setup_error": "the forked candidate died before it was sandboxed"}
    parsed = json.loads(data)
    return parsed if isinstance(parsed, dict) else {"setup_error": "the forked candidate sent nonsense"}


def fork_candidate(request: dict[str, Any], fds: list[int], channel: socket.socket) -> dict[str, Any]:
    """Forks twice: the intermediate child exits at once, so the candidate is re-parented to kforge."""
    if len(fds) < 3:
        return {"ok": False, "error": {"kind": "protocol", "message": "fork needs three pipe descriptors"}}
    status_read, status_write = os.pipe()
    middle = os.fork()
    if middle == 0:
        try:
            if os.fork() == 0:
                channel.detach()  # fds 3 and 4 become the candidate's pipes, never the zygote's socket
                os.close(status_read)
                _become_candidate(request, fds, status_write)
        finally:
            os._exit(0)
    os.close(status_write)
    for fd in fds:
        os.close(fd)
    os.waitpid(middle, 0)
    try:
        status = _read_status(status_read)
    finally:
        os.close(status_read)
    if "setup_error" in status:
        error = {"kind": "setup", "message": status["setup_error"]}
        return {"ok": False, "pid": status.get("pid", -1), "error": error}
    return {"ok": True, **status}


def _preload() -> None:
    """Everything a candidate imports before it runs its own code, imported once here."""
    import torch  # noqa: F401
    import triton.language  # noqa: F401

    from kforge.worker import candidate, kernel_capture, tritonbench_compare, tritonbench_run  # noqa: F401


def _preload_more(modules: Any) -> dict[str, Any]:
    """Imports more of PRELOADABLE before the next forks, when kforge sees a candidate that will need it:
    torch._inductor (1.5-3 s of CPU) for the Inductor teacher's candidates, which import its runtime, so
    each forked one does not pay that within its compile allowance; a zygote that forks none of them
    does not pay it at all."""
    import importlib

    names = [str(name) for name in modules] if isinstance(modules, list) else []
    unknown = sorted(set(names) - PRELOADABLE)
    if unknown:
        return {"ok": False, "error": {"kind": "protocol", "message": f"cannot preload {unknown}"}}
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - the candidate then imports it itself; the zygote serves on
            message = f"{name}: {type(exc).__name__}: {exc}"
            return {"ok": False, "error": {"kind": "environment", "message": message}}
    return {"ok": True}


def serve(channel: socket.socket) -> None:
    pending = b""
    pending_fds: list[int] = []
    while True:
        while b"\n" not in pending:
            data, fds, _, _ = socket.recv_fds(channel, 1 << 16, MAX_FDS)
            pending_fds.extend(fds)
            if not data:
                return
            pending += data
            if len(pending) > MAX_REQUEST_BYTES:
                raise RuntimeError("request larger than 16 MiB")
        line, pending = pending.split(b"\n", 1)
        fds, pending_fds = pending_fds, []
        request = json.loads(line)
        op = request.get("op") if isinstance(request, dict) else None
        if op == "fork":
            response = fork_candidate(request, fds, channel)
        else:
            for fd in fds:
                os.close(fd)
            if op == "ready":
                response = {"ok": True, "pid": os.getpid()}
            elif op == "preload":
                response = _preload_more(request.get("modules"))
            elif op == "shutdown":
                channel.sendall(b'{"ok": true}\n')
                return
            else:
                response = {"ok": False, "error": {"kind": "protocol", "message": f"unknown op {op!r}"}}
        channel.sendall(json.dumps(response).encode() + b"\n")


def main() -> None:
    # Forking a process that torch gave helper threads is what a zygote does: the child uses none of them.
    warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork.*")
    _preload()
    os.close(4)  # the same socket as fd 3: one descriptor is enough here
    serve(socket.socket(fileno=3))


if __name__ == "__main__":
    main()
