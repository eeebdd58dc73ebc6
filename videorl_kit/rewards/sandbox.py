"""Run model-written Python in an isolated child process and read back only plain data.

The verdict on model-written code is never decided where that code runs. The host sends the
child the code plus either the calls to make (entry point arguments, never expected values) or,
for tests that are not plain calls, the test statements; the child answers on a dedicated pipe
with report lines that the host parses strictly (:mod:`videorl_kit.rewards.sandbox_child`).
Everything else the child could do (print, exit early, crash, write a forged report) gives no
usable report, which never scores.

Two isolation levels (``isolation=``):

* ``"bubblewrap"`` (the default): the child runs under bubblewrap (``bwrap``, Debian's
  ``bubblewrap`` package) in new user, PID, network, mount, IPC, UTS and cgroup namespaces, as
  uid/gid 65534 with no capabilities, ``no_new_privs`` and no nested user namespaces. Its root is
  read-only and holds only the interpreter, its standard library (with ``site-packages`` hidden)
  and the system's shared libraries; ``/dev`` has ``null``, ``zero``, ``random`` and ``urandom``;
  there is no ``/proc``, ``/sys``, ``/etc``, ``/home``, ``/tmp`` or host file of any kind. The one
  writable place is ``/work``, a private tmpfs of ``tmp_bytes``. A seccomp filter
  (:mod:`videorl_kit.rewards.seccomp`) refuses process and thread creation, ``chmod``, ptrace
  and cross-process memory access, sockets, mounts, keyrings, host-wide kernel pools and other
  kernel interfaces. The child's own ``RLIMIT_*`` bound CPU time, address space, file size,
  open files and queued signals, and refuse real-time priority. The host kills the namespace's
  init (which takes every process in it down) when the run ends or its time is up, and
  bubblewrap's ``--die-with-parent`` does the same if the host dies.
* ``"subprocess"`` (an explicit opt-in, weaker): a plain ``python -S -s -B -P`` child in a new
  session, in an empty temporary directory, with a scrubbed environment and the same resource
  limits. The verdict is still decided by the host from plain data, but the code runs with the
  host user's rights: it can read and write files, open sockets and signal processes. As root it
  can also start processes that outlive the run in a session of their own.

:func:`isolation_problem` says why ``bubblewrap`` cannot run here (``None`` when it can).

Example:
    >>> report = run_calls("def f(x):\\n    return [x, x * 2]\\n", "f", [((3,), {})])
    >>> report.status, report.results[0].value
    ('ran', [3, 6])
    >>> run_calls("import os\\nos._exit(0)", "f", [((3,), {})]).status
    'crashed'
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import secrets
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from videorl_kit.rewards import sandbox_command
from videorl_kit.rewards.sandbox_child import MAX_MESSAGE_CHARS, WireError, encode_value
from videorl_kit.rewards.sandbox_wire import decode_value
from videorl_kit.rewards.seccomp import UnsupportedArchitecture, seccomp_program

Isolation = Literal["bubblewrap", "subprocess"]
ISOLATIONS: tuple[Isolation, ...] = ("bubblewrap", "subprocess")

#: What became of a run: ``ran`` (the code ran; see the results), or why it did not.
ChildStatus = Literal[
    "ran",
    "syntax_error",  # the code does not compile
    "error",  # the code raised while being defined (module level)
    "missing_entry_point",  # the code ran but does not define the entry point
    "timeout",  # the wall-clock or CPU limit was reached
    "crashed",  # the child died or exited without a complete report
    "invalid_report",  # the child's report is not exactly the protocol (forged, extra output)
    "sandbox_error",  # the sandbox itself could not start (a host problem)
]

#: Queued signals a child may have pending (``RLIMIT_SIGPENDING``).
MAX_PENDING_SIGNALS = 64
_GRACE_S = 0.5  # on top of timeout_s: interpreter start-up is not the code's time


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Resource limits of one sandboxed run.

    * ``timeout_s``: wall-clock limit of the run (the CPU limit is derived from it);
    * ``memory_mb``: address-space limit (``RLIMIT_AS``) of the child;
    * ``max_file_bytes``: largest file the child may write (``RLIMIT_FSIZE``);
    * ``tmp_bytes``: size of the private writable ``/work`` (bubblewrap only);
    * ``max_open_files``: ``RLIMIT_NOFILE``;
    * ``max_output_bytes``: how much of stdout and of stderr is kept;
    * ``max_result_bytes``: largest report the host reads (a larger one is invalid).

    Example:
        >>> SandboxLimits(timeout_s=2).cpu_seconds
        4
    """

    timeout_s: float = 5.0
    memory_mb: int = 512
    max_file_bytes: int = 4 * 1024 * 1024
    tmp_bytes: int = 16 * 1024 * 1024
    max_open_files: int = 64
    max_output_bytes: int = 4096
    max_result_bytes: int = 1024 * 1024

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {self.timeout_s!r}")
        if self.memory_mb < 64:
            raise ValueError(f"memory_mb must be >= 64, got {self.memory_mb!r}")
        if self.max_open_files < 16:
            raise ValueError(f"max_open_files must be >= 16, got {self.max_open_files!r}")
        if min(self.max_file_bytes, self.tmp_bytes, self.max_result_bytes) < 4096:
            raise ValueError("max_file_bytes, tmp_bytes and max_result_bytes must be >= 4096")
        if self.max_output_bytes < 0:
            raise ValueError("max_output_bytes must be >= 0")

    @property
    def cpu_seconds(self) -> int:
        """CPU-time limit: the wall-clock limit rounded up, plus two seconds (a backstop)."""
        return int(-(-self.timeout_s // 1)) + 2

    def rlimits(self) -> dict[str, int]:
        """The ``RLIMIT_*`` values the child sets on itself before any code runs.

        ``RLIMIT_NPROC`` is 1: no second process or thread (under bubblewrap seccomp refuses them
        in any case, since the limit does not bind a sandbox started by root). Real-time
        priority, negative nice values and queued signals (counted per kernel user, so against
        the host's root for a sandbox started by root) are refused or kept small.

        Example:
            >>> SandboxLimits().rlimits()["RLIMIT_NPROC"]
            1
        """
        return {
            "RLIMIT_AS": self.memory_mb * 1024 * 1024,
            "RLIMIT_CPU": self.cpu_seconds,
            "RLIMIT_FSIZE": self.max_file_bytes,
            "RLIMIT_NOFILE": self.max_open_files,
            "RLIMIT_CORE": 0,
            "RLIMIT_MEMLOCK": 0,
            "RLIMIT_MSGQUEUE": 0,
            "RLIMIT_NPROC": 1,
            "RLIMIT_RTPRIO": 0,
            "RLIMIT_NICE": 0,
            "RLIMIT_SIGPENDING": MAX_PENDING_SIGNALS,
        }


@dataclass(frozen=True, slots=True)
class CallResult:
    """What one call of the entry point gave: ``ok`` with ``value``, or why not.

    ``kind`` is ``ok``, ``raised`` (the call raised; ``message`` says what) or ``unencodable``
    (it returned something that is not plain data; ``message`` says why).
    """

    kind: Literal["ok", "raised", "unencodable"]
    value: Any = None
    message: str = ""


@dataclass(frozen=True, slots=True)
class ChildReport:
    """The host's reading of one sandboxed run (``status`` is a :data:`ChildStatus`).

    ``results`` holds one :class:`CallResult` per call (calls mode, status ``ran``);
    ``script_passed`` says whether every test statement ran to its end (script mode);
    ``failed_test`` is the index of the test statement that raised, if one did. ``pids`` are
    the host pids of the process the host started (bubblewrap) and, when known, of the
    sandbox's init; ``leftover_killed`` counts processes that outlived the child and were
    killed (0 in every normal run).
    """

    status: ChildStatus
    isolation: Isolation
    message: str = ""
    results: tuple[CallResult, ...] = ()
    script_passed: bool = False
    failed_test: int | None = None
    duration_s: float = 0.0
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    pids: tuple[int, ...] = ()
    leftover_killed: int = 0

    def to_details(self) -> dict[str, Any]:
        """JSON-ready summary for reward ``details`` (no returned values)."""
        return {
            "status": self.status,
            "isolation": self.isolation,
            "message": self.message,
            "duration_s": self.duration_s,
            "returncode": self.returncode,
            "stderr": self.stderr,
        }


# ------------------------------------------------------------------------------ public API


def run_calls(
    code: str,
    entry_point: str,
    calls: Sequence[tuple[tuple[Any, ...], dict[str, Any]]],
    *,
    limits: SandboxLimits | None = None,
    isolation: Isolation = "bubblewrap",
    module_name: str = "solution",
) -> ChildReport:
    """Run ``code``, then call ``entry_point`` once per ``(args, kwargs)``, in order.

    The results come back as plain data in ``report.results`` (see :class:`CallResult`). Never
    raises for anything the code does; a host-side failure is status ``sandbox_error``.

    Example:
        >>> r = run_calls("def f(a, b=1):\\n    return a / b\\n", "f", [((1,), {"b": 0})])
        >>> r.results[0].kind, r.results[0].message
        ('raised', 'ZeroDivisionError: division by zero')
    """
    limits = limits or SandboxLimits()
    plain_calls = [(tuple(args), dict(kwargs)) for args, kwargs in calls]
    try:
        encode_value(plain_calls, max_bytes=1 << 28)
    except WireError as exc:
        raise ValueError(f"call arguments are not plain data: {exc}") from None
    request = _request(code, entry_point, limits, module_name, calls=plain_calls)
    return _run_request(request, limits, isolation, n_calls=len(plain_calls), nonce=None)


def run_script(
    code: str,
    entry_point: str | None,
    tests: Sequence[str],
    *,
    limits: SandboxLimits | None = None,
    isolation: Isolation = "bubblewrap",
    module_name: str = "solution",
) -> ChildReport:
    """Run ``code``, then each test statement in its namespace; judged by completion only.

    ``report.script_passed`` is true when the child reported, with a per-run nonce it was only
    given alongside the tests, that the last test finished, and exited cleanly. This is weaker
    than :func:`run_calls`: code that inspects its own process (frames, ``gc``), installs hooks
    or returns objects that lie about equality can pass tests it should fail. Use it only for
    tests that cannot be written as calls.

    Example:
        >>> run_script("x = 2", None, ["assert x * 2 == 4"]).script_passed
        True
        >>> run_script("import os\\nos._exit(0)", None, ["assert False"]).status
        'crashed'
    """
    limits = limits or SandboxLimits()
    nonce = secrets.token_hex(16)
    request = _request(
        code, entry_point, limits, module_name, script=[str(t) for t in tests], nonce=nonce
    )
    return _run_request(request, limits, isolation, n_calls=None, nonce=nonce)


@functools.cache
def isolation_problem(isolation: Isolation = "bubblewrap") -> str | None:
    """Why ``isolation`` cannot run on this machine, or ``None`` when it can (cached).

    ``bubblewrap`` needs x86_64, the ``bwrap`` program and user namespaces; it is checked by
    running one real sandboxed child.

    Example:
        >>> isolation_problem("subprocess") is None
        True
    """
    if isolation == "subprocess":
        return None
    if isolation != "bubblewrap":
        return f"unknown isolation {isolation!r} (choose from {', '.join(ISOLATIONS)})"
    try:
        seccomp_program(platform.machine())
    except UnsupportedArchitecture as exc:
        return str(exc)
    if sandbox_command.bwrap_path() is None:
        return "bubblewrap is not installed (no bwrap on PATH; Debian: apt-get install bubblewrap)"
    for _ in range(2):  # a second try: one slow start on a busy machine is not a verdict
        report = run_calls("def probe():\n    return 1\n", "probe", [((), {})])
        if report.status == "ran" and report.results == (CallResult("ok", 1),):
            return None
    reason = report.message or report.status
    return f"bubblewrap cannot start a sandbox here: {reason}"


# ------------------------------------------------------------------------------ the request


def _request(
    code: str,
    entry_point: str | None,
    limits: SandboxLimits,
    module_name: str,
    *,
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] | None = None,
    script: list[str] | None = None,
    nonce: str | None = None,
) -> dict[str, Any]:
    return {
        "code": str(code),
        "entry_point": entry_point,
        "module_name": str(module_name),
        "calls": calls,
        "script": script,
        "nonce": nonce,
        "limits": limits.rlimits(),
        "max_result_bytes": limits.max_result_bytes,
        "result_fd": -1,  # filled in once the pipe exists
    }


def _run_request(
    request: dict[str, Any],
    limits: SandboxLimits,
    isolation: Isolation,
    *,
    n_calls: int | None,
    nonce: str | None,
) -> ChildReport:
    if isolation not in ISOLATIONS:
        raise ValueError(f"unknown isolation {isolation!r} (choose from {', '.join(ISOLATIONS)})")
    try:
        run = _run_child(request, limits, isolation)
    except Exception as exc:  # host-side failure: report, never raise
        return ChildReport("sandbox_error", isolation, message=f"{type(exc).__name__}: {exc}")
    return _interpret(run, isolation, n_calls=n_calls, nonce=nonce)


# ------------------------------------------------------------------------------ one child


@dataclass(slots=True)
class _ChildRun:
    """Raw outcome of one child process, before its report is parsed."""

    report: bytes = b""
    report_overflow: bool = False
    stdout: bytes = b""
    stderr: bytes = b""  # up to 4 KB even when less is kept: bubblewrap's errors are read here
    output_cap: int = 0
    timed_out: bool = False
    returncode: int | None = None
    duration_s: float = 0.0
    leftover_killed: int = 0
    pids: tuple[int, ...] = ()
    inner_pidfd: int | None = None  # bubblewrap: the PID namespace's init, once known


def _run_child(request: dict[str, Any], limits: SandboxLimits, isolation: Isolation) -> _ChildRun:
    """Start the child, feed it the request, collect its pipes, and kill it when done."""
    with contextlib.ExitStack() as stack:
        pipes = Pipes()
        stack.callback(pipes.close_all)
        child = start_child(stack, pipes, request, limits, isolation)
        run = _ChildRun(pids=(child.proc.pid,))
        try:
            _exchange(
                child.proc,
                run,
                limits,
                child.payload,
                (child.stdin_w, pipes.close),
                child.out_r,
                child.err_r,
                child.result_r,
                child.info_r,
            )
        finally:
            run.leftover_killed = kill_everything(child.proc, isolation, run.inner_pidfd)
        run.returncode = child.proc.returncode
        run.duration_s = round(time.monotonic() - child.started, 4)
        return run


class Pipes:
    """The pipe ends one run holds, closed together when the run ends (``close_all``)."""

    def __init__(self) -> None:
        self.fds: list[int] = []

    def pipe(self) -> tuple[int, int]:
        """A new pipe ``(read_end, write_end)``, both closed by :meth:`close_all`."""
        read_end, write_end = os.pipe()
        self.fds.extend((read_end, write_end))
        return read_end, write_end

    def close(self, fd: int) -> None:
        """Close one end now."""
        self.fds.remove(fd)
        os.close(fd)

    def close_all(self) -> None:
        """Close every end still open."""
        _close_all(self.fds)


@dataclass(slots=True)
class StartedChild:
    """A child process just started: its pipes (host ends) and the request to feed it.

    ``inbox_w`` is the host's end of the child's inbox (``request["inbox_fd"]``), where the host
    writes further messages after the request (``-1`` when the child has none); ``info_r`` is
    bubblewrap's info pipe (``-1`` without bubblewrap).
    """

    proc: subprocess.Popen
    payload: bytes
    stdin_w: int
    out_r: int
    err_r: int
    result_r: int
    info_r: int
    inbox_w: int
    started: float


def start_child(
    stack: contextlib.ExitStack,
    pipes: Pipes,
    request: dict[str, Any],
    limits: SandboxLimits,
    isolation: Isolation,
    *,
    inbox: bool = False,
) -> StartedChild:
    """Start one sandboxed child for ``request`` (its descriptors are filled in here).

    The child reads the marshalled request from stdin, reports on ``request["result_fd"]`` and,
    with ``inbox=True``, reads the host's later messages from ``request["inbox_fd"]``.
    """
    stdin_r, stdin_w = pipes.pipe()
    out_r, out_w = pipes.pipe()
    err_r, err_w = pipes.pipe()
    result_r, result_w = pipes.pipe()
    inbox_r, inbox_w = pipes.pipe() if inbox else (-1, -1)
    payload = sandbox_command.child_payload({**request, "result_fd": result_w, "inbox_fd": inbox_r})
    child_ends = [stdin_r, out_w, err_w, result_w] + ([inbox_r] if inbox else [])
    info_r = -1
    if isolation == "bubblewrap":
        seccomp_r, seccomp_w = pipes.pipe()
        os.write(seccomp_w, seccomp_program(platform.machine()))  # smaller than a pipe buffer
        info_r, info_w = pipes.pipe()
        child_ends += [seccomp_r, info_w]
        argv, cwd, env = sandbox_command.bwrap_command(
            limits.tmp_bytes, seccomp_fd=seccomp_r, info_fd=info_w
        )
        pipes.close(seccomp_w)
    else:
        workdir = stack.enter_context(
            tempfile.TemporaryDirectory(prefix="videorl-sandbox-", ignore_cleanup_errors=True)
        )
        argv, cwd, env = (
            sandbox_command.python_argv(),
            workdir,
            sandbox_command.child_env(workdir),
        )
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=stdin_r,
        stdout=out_w,
        stderr=err_w,
        pass_fds=child_ends[3:],
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    for fd in child_ends:
        pipes.close(fd)
    return StartedChild(proc, payload, stdin_w, out_r, err_r, result_r, info_r, inbox_w, started)


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()


def _exchange(
    proc: subprocess.Popen,
    run: _ChildRun,
    limits: SandboxLimits,
    payload: bytes,
    stdin: tuple[int, Callable[[int], None]],
    out_r: int,
    err_r: int,
    result_r: int,
    info_r: int,
) -> None:
    """Feed stdin and drain every pipe until the child exits or its time is up.

    ``stdin`` is the write end and the function that closes it (the child reads to the end of
    the request). Output beyond its cap is read and dropped (so the child never blocks on a full
    pipe); a report beyond ``max_result_bytes`` ends the run at once.
    """
    stdin_w, close = stdin
    deadline = time.monotonic() + limits.timeout_s + _GRACE_S
    caps = {
        out_r: limits.max_output_bytes,
        err_r: max(limits.max_output_bytes, 4096),  # bubblewrap's own errors arrive here
        result_r: limits.max_result_bytes,
        info_r: 4096,
    }
    buffers = {fd: bytearray() for fd in caps}
    poller = select.poll()
    for fd in caps:
        if fd >= 0:
            os.set_blocking(fd, False)
            poller.register(fd, select.POLLIN)
    os.set_blocking(stdin_w, False)
    poller.register(stdin_w, select.POLLOUT)
    pidfd = os.pidfd_open(proc.pid)
    poller.register(pidfd, select.POLLIN)
    pending = memoryview(payload)
    exited = False
    try:
        while not exited and len(buffers[result_r]) <= caps[result_r]:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                run.timed_out = True
                break
            for fd, _event in poller.poll(max(1, int(remaining * 1000))):
                if fd == pidfd:
                    exited = True
                elif fd == stdin_w:
                    try:
                        pending = pending[os.write(stdin_w, pending) :]
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        poller.unregister(stdin_w)
                        close(stdin_w)
                elif not drain(fd, buffers[fd], caps[fd]):
                    poller.unregister(fd)
                if fd == info_r and run.inner_pidfd is None:
                    inner = inner_pidfd(buffers[info_r], proc.pid)
                    if inner is not None:
                        run.inner_pidfd, inner_pid = inner
                        run.pids += (inner_pid,)
    finally:
        os.close(pidfd)
    if exited:  # what the child wrote before it exited is still in the pipes
        for fd in (out_r, err_r, result_r):
            drain(fd, buffers[fd], caps[fd])
    run.report = bytes(buffers[result_r])
    run.report_overflow = len(run.report) > caps[result_r]
    run.stdout = bytes(buffers[out_r][: limits.max_output_bytes])
    run.stderr = bytes(buffers[err_r][: caps[err_r]])
    run.output_cap = limits.max_output_bytes


def drain(fd: int, buffer: bytearray, cap: int) -> bool:
    """Read what ``fd`` has now, keeping at most ``cap + 1`` bytes; False at end of file."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not chunk:
            return False
        if len(buffer) <= cap:
            buffer += chunk[: cap + 1 - len(buffer)]


def inner_pidfd(info: bytearray, bwrap_pid: int) -> tuple[int, int] | None:
    """A pidfd on the namespace's init that bubblewrap reported (and its pid), if still ours."""
    try:
        child_pid = int(json.loads(bytes(info).partition(b"}")[0] + b"}")["child-pid"])
    except (ValueError, KeyError, TypeError):
        return None  # not complete yet
    try:
        pidfd = os.pidfd_open(child_pid)
    except OSError:
        return None  # already gone
    if _parent_pid(child_pid) == bwrap_pid:  # not a reused pid
        return pidfd, child_pid
    os.close(pidfd)
    return None


def _parent_pid(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    return None


def kill_everything(proc: subprocess.Popen, isolation: Isolation, inner: int | None) -> int:
    """Kill the child and everything it started, reap it, and return how many outlived it.

    With bubblewrap, SIGKILL to the PID namespace's init makes the kernel kill every process in
    the namespace, and bubblewrap exits with it (``--die-with-parent`` covers a dead host).
    Without bubblewrap, the child's session is killed and then swept through ``/proc``.
    """
    outlived = 0
    if inner is not None:
        try:
            if not select.select([inner], [], [], 0)[0]:  # the init is still alive
                outlived += proc.poll() is not None  # ... after bubblewrap itself ended
                with contextlib.suppress(ProcessLookupError):  # it just ended by itself
                    signal.pidfd_send_signal(inner, signal.SIGKILL)
                select.select([inner], [], [], 5.0)
        finally:
            os.close(inner)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    if isolation == "subprocess":
        outlived += _sweep_session(proc.pid)
    return outlived


def session_processes(session_id: int) -> list[int]:
    """Live (non-zombie) processes whose session or process-group id is ``session_id``.

    Example:
        >>> session_processes(2**22 + 12345)  # no such session
        []
    """
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) >= 4 and fields[0] not in ("Z", "X") and str(session_id) in fields[2:4]:
            found.append(int(entry))
    return found


def _sweep_session(session_id: int, rounds: int = 5) -> int:
    killed: set[int] = set()
    for _ in range(rounds):
        pids = [p for p in session_processes(session_id) if p != os.getpid()]
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        time.sleep(0.01)
    return len(killed)


# ------------------------------------------------------------------------------ the report


def _interpret(
    run: _ChildRun, isolation: Isolation, *, n_calls: int | None, nonce: str | None
) -> ChildReport:
    common: dict[str, Any] = {
        "isolation": isolation,
        "duration_s": run.duration_s,
        "returncode": run.returncode,
        "stdout": run.stdout.decode("utf-8", "replace"),
        "stderr": run.stderr[: run.output_cap].decode("utf-8", "replace"),
        "leftover_killed": run.leftover_killed,
        "pids": run.pids,
    }
    lines = run.report.split(b"\n")
    if lines[0] != b"started" or len(lines) < 2:  # the untrusted code never got to run
        last = run.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]  # bwrap: one line
        reason = last[0] if last else f"exited with code {run.returncode} before starting"
        if run.timed_out:
            reason = f"did not start within the time limit ({reason})"
        return ChildReport("sandbox_error", message=reason[:300], **common)
    if run.timed_out or _hit_cpu_limit(run.returncode):
        return ChildReport("timeout", message="time limit reached", **common)
    if run.report_overflow:
        message = f"report larger than {len(run.report) - 1} bytes"
        return ChildReport("invalid_report", message=message, **common)
    if lines[-1] != b"" or b"end" not in lines:
        return ChildReport("crashed", message=_death(run.returncode), **common)
    try:
        parsed = _parse_lines(lines[1:-1], n_calls=n_calls, nonce=nonce)
    except (WireError, ValueError, UnicodeDecodeError) as exc:
        return ChildReport("invalid_report", message=str(exc)[:300], **common)
    except Exception as exc:  # a report the host cannot read is the code's: never a host error
        message = f"{type(exc).__name__}: {exc}"[:300]
        return ChildReport("invalid_report", message=message, **common)
    if run.returncode != 0:
        return ChildReport("crashed", message=_death(run.returncode), **common)
    return ChildReport(**parsed, **common)


def _hit_cpu_limit(returncode: int | None) -> bool:
    return returncode in (-signal.SIGXCPU, 128 + signal.SIGXCPU)


def _death(returncode: int | None) -> str:
    if returncode is not None and (returncode < 0 or returncode > 128):
        number = -returncode if returncode < 0 else returncode - 128
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(number).name} before reporting"
    return f"exited with code {returncode} before reporting (os._exit? out of memory?)"


def _json_string(text: str) -> str:
    """A message from the report: a JSON string, cut to :data:`MAX_MESSAGE_CHARS` as the child
    cuts its own (a forged report's would otherwise reach every result's details whole), with
    lone surrogates spelled out (it goes into JSON)."""
    if not text.startswith('"'):  # a string cannot nest: nothing deep reaches the JSON parser
        raise ValueError("expected a JSON string")
    value = json.loads(text)
    if type(value) is not str:
        raise ValueError("expected a JSON string")
    return value[:MAX_MESSAGE_CHARS].encode("utf-8", "backslashreplace").decode("utf-8")


def _parse_lines(raw: list[bytes], *, n_calls: int | None, nonce: str | None) -> dict[str, Any]:
    """Parse ``status ...``, the result lines and ``end``; anything else is a ValueError."""
    lines = [line.decode("ascii") for line in raw]
    if len(lines) < 2 or lines[-1] != "end" or not lines[0].startswith("status "):
        raise ValueError("the report is not status ... end")
    kind, _, rest = lines[0][len("status ") :].partition(" ")
    body = lines[1:-1]
    if kind != "ran":
        if kind not in ("syntax_error", "error", "missing_entry_point") or body:
            raise ValueError(f"unknown status line {lines[0][:60]!r}")
        return {"status": kind, "message": _json_string(rest)}
    if rest:
        raise ValueError("extra text after 'status ran'")
    if n_calls is not None:
        if len(body) != n_calls:
            raise ValueError(f"{len(body)} results for {n_calls} calls")
        return {"status": "ran", "results": tuple(_parse_result(line) for line in body)}
    if len(body) != 1:
        raise ValueError("a script report has one pass or failed line")
    word, _, rest = body[0].partition(" ")
    if word == "pass" and rest == nonce:
        return {"status": "ran", "script_passed": True}
    if word == "failed":
        index, _, message = rest.partition(" ")
        if not index.isdigit():
            raise ValueError("bad failed line")
        return {"status": "ran", "failed_test": int(index), "message": _json_string(message)}
    raise ValueError("the script report does not end with this run's pass line")


def _parse_result(line: str) -> CallResult:
    if not line.startswith("result "):
        raise ValueError(f"not a result line: {line[:60]!r}")
    kind, _, rest = line[len("result ") :].partition(" ")
    if kind == "ok":
        return CallResult("ok", decode_value(rest))
    if kind in ("raised", "unencodable"):
        return CallResult(kind, message=_json_string(rest))
    raise ValueError(f"unknown result kind {kind[:30]!r}")
