"""Run untrusted Python (model-written code) in a contained child process.

The host side (:func:`run_python_tests`, :func:`run_python`) starts a fresh isolated interpreter
(``python -I -S -B``: no site-packages, no ``PYTHON*`` variables, no bytecode writes) in a new
session, with a scrubbed environment, inside an empty temporary working directory that is removed
afterwards. The child side (this same file run as a script) applies the limits to itself before
any untrusted byte runs:

* ``resource`` limits, soft = hard: CPU seconds, address space (memory), file size, open files,
  no core dumps, and a process/thread count of 0 for non-root users;
* an audit hook (``sys.addaudithook``, cannot be removed) that refuses, for every thread:
  process creation (``os.fork``, ``os.posix_spawn``, ``os.exec*``, ``os.system``,
  ``subprocess.Popen``, ``pty``), signals to other processes (``os.kill``/``killpg``), every
  ``socket.*`` event (so no network, even to 127.0.0.1), ``ctypes``, sub-interpreters,
  ``_posixsubprocess``, ``gc`` introspection, tracing, changing resource limits, adding audit
  hooks; writes (and directory changes) outside the working directory; reads outside the working
  directory and the standard library (so ``/proc/<parent>/environ`` and ``/etc`` are closed);
* the untrusted code runs in a worker thread; the main thread never runs it and reports, through a
  result file opened before the code starts and a per-run nonce the code cannot see, which tests
  reached their end. A test counts as passed only when its own code object reaches a final
  marker (checked by the audit hook through the calling frame), so ``sys.exit(0)``,
  ``os._exit(0)`` or printing "ok" early never passes a test.

The host waits at most ``timeout_s`` (plus a small grace), then kills the whole process group
(``os.killpg``) *before* reaping the child (so the group id cannot be reused meanwhile), and sweeps
``/proc`` for any process still in the child's session. Root is handled too: ``RLIMIT_NPROC`` does
not bind root, so process creation is refused by the audit hook, and the group kill plus the sweep
back it up.

Tests of the form ``assert X == Y`` are guarded against the "object equal to everything" trick:
comparing values of different types is refused when either type defines its own ``__eq__``
(a namedtuple against a tuple or an ``IntEnum`` against an int still compares normally; a
``Counter`` against a dict does not).

Limits of this design (documented, not hidden): this is in-process Python hardening plus kernel
resource limits, not a kernel sandbox (no namespaces, seccomp or cgroups). It contains accidents
and the attacks reward-hacking policies actually produce (loops, fork and memory bombs, writes,
sockets, early exits, forged reports); a determined adversary who knows CPython internals may
find a way out. Run untrusted code at scale inside a container as well.

Example:
    >>> result = run_python_tests(
    ...     "def double(x):\\n    return 2 * x\\n",
    ...     ["assert double(2) == 4", "assert double(-1) == -2"],
    ...     entry_point="double",
    ... )
    >>> result.status, result.tests_passed, result.tests_total
    ('passed', 2, 2)
    >>> run_python_tests("import os\\nos.fork()", []).status
    'error'
"""

from __future__ import annotations

import os
import sys

# Only ``os`` and ``sys`` are imported at module level: this file is also the child's runner
# script, and the child must not hold modules such as ``subprocess`` (and with it
# ``_posixsubprocess``, which can fork without an audit event) before the untrusted code runs.

RESULT_MAGIC = "videorl-sandbox-result"

#: Statuses of :class:`SandboxResult` (``passed`` is the only one that scores).
STATUSES = (
    "passed",  # the code ran and every test reached its end
    "failed",  # the code ran; at least one test failed or raised
    "error",  # the code itself raised (NameError, a refused operation, ...) before the tests
    "syntax_error",  # the code (or a test) does not compile
    "timeout",  # wall-clock or CPU limit reached
    "crashed",  # the child died without a valid report (os._exit, a signal, memory)
    "sandbox_error",  # the sandbox could not run at all (host problem, not the code's fault)
)

_DENIED_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.system",
        "os.startfile",
        "os.kill",
        "os.killpg",
        "os.fwalk",
        "os.link",
        "os.symlink",
        "os.chown",
        "os.setxattr",
        "os.removexattr",
        "os.putenv",
        "os.unsetenv",
        "subprocess.Popen",
        "pty.spawn",
        "resource.setrlimit",
        "resource.prlimit",
        "sys.addaudithook",
        "sys.settrace",
        "sys.setprofile",
        "sys._current_frames",
        "sys._current_exceptions",
        "sys.set_asyncgen_hook_finalizer",
        "sys.set_asyncgen_hook_firstiter",
        "sqlite3.connect",
        "sqlite3.enable_load_extension",
        "sqlite3.load_extension",
        "webbrowser.open",
        "cpython.PyInterpreterState_New",
        "cpython.run_command",
        "cpython.run_file",
        "cpython.run_module",
        "cpython.run_stdin",
        "cpython.run_startup",
        "cpython.run_interactivehook",
    }
)

_DENIED_EVENT_PREFIXES = ("socket.", "ctypes.", "gc.", "syslog.", "_winapi.", "winreg.")

_DENIED_IMPORTS = frozenset(
    {
        "ctypes",
        "_ctypes",
        "_posixsubprocess",
        "_xxsubinterpreters",
        "_xxinterpchannels",
        "_interpreters",
        "_testcapi",
        "_testinternalcapi",
        "_testbuffer",
        "_testmultiphase",
        "_testimportmultiple",
        "_testsinglephase",
        "gc",
        "_sqlite3",
        "cffi",
        "_cffi_backend",
    }
)

#: ``os.*`` events that carry a path to check: event -> (indices of path arguments, write?).
_PATH_EVENTS: dict[str, tuple[tuple[int, ...], bool]] = {
    "os.listdir": ((0,), False),
    "os.scandir": ((0,), False),
    "os.walk": ((0,), False),
    "os.getxattr": ((0,), False),
    "os.listxattr": ((0,), False),
    "os.chdir": ((0,), True),
    "os.mkdir": ((0,), True),
    "os.rmdir": ((0,), True),
    "os.remove": ((0,), True),
    "os.rename": ((0, 1), True),
    "os.chmod": ((0,), True),
    "os.chflags": ((0,), True),
    "os.truncate": ((0,), True),
    "os.utime": ((0,), True),
    "os.lockf": ((), False),
}

#: Index of a ``dir_fd``-style argument per event (any value other than None is refused).
_DIR_FD_ARGS: dict[str, tuple[int, ...]] = {
    "os.mkdir": (2,),
    "os.rmdir": (1,),
    "os.remove": (1,),
    "os.rename": (2, 3),
    "os.chmod": (2,),
    "os.utime": (3,),
}

_READABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


# --------------------------------------------------------------------------------------------
# Host side
# --------------------------------------------------------------------------------------------


class SandboxLimits:
    """Resource limits of one sandboxed run (immutable, picklable).

    * ``timeout_s``: wall-clock limit of the whole run (the CPU limit is derived from it);
    * ``memory_mb``: address-space limit (``RLIMIT_AS``) of the child;
    * ``max_file_bytes``: largest file the child may write (``RLIMIT_FSIZE``), stdout included;
    * ``max_open_files``: ``RLIMIT_NOFILE``;
    * ``max_output_bytes``: how much of stdout/stderr is kept in the result.

    Example:
        >>> SandboxLimits(timeout_s=2).cpu_seconds
        4
    """

    __slots__ = (
        "max_file_bytes",
        "max_open_files",
        "max_output_bytes",
        "memory_mb",
        "timeout_s",
    )

    def __init__(
        self,
        *,
        timeout_s: float = 5.0,
        memory_mb: int = 512,
        max_file_bytes: int = 4 * 1024 * 1024,
        max_open_files: int = 64,
        max_output_bytes: int = 4096,
    ) -> None:
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s!r}")
        if memory_mb < 32:
            raise ValueError(f"memory_mb must be >= 32, got {memory_mb!r}")
        if max_open_files < 16:
            raise ValueError(f"max_open_files must be >= 16, got {max_open_files!r}")
        if max_file_bytes < 4096 or max_output_bytes < 0:
            raise ValueError("max_file_bytes must be >= 4096 and max_output_bytes >= 0")
        object.__setattr__(self, "timeout_s", float(timeout_s))
        object.__setattr__(self, "memory_mb", int(memory_mb))
        object.__setattr__(self, "max_file_bytes", int(max_file_bytes))
        object.__setattr__(self, "max_open_files", int(max_open_files))
        object.__setattr__(self, "max_output_bytes", int(max_output_bytes))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("SandboxLimits is immutable")

    def __reduce__(self) -> tuple[object, ...]:
        return (_limits_from_dict, (self.to_dict(),))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SandboxLimits) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.to_dict().items())))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items())
        return f"SandboxLimits({args})"

    @property
    def cpu_seconds(self) -> int:
        """CPU-time limit: the wall-clock limit rounded up, plus two seconds.

        It only backs up the wall clock (which always fires first), so a CPU-bound run ends
        as ``timeout`` rather than as a kill by the kernel.
        """
        return int(-(-self.timeout_s // 1)) + 2

    def to_dict(self) -> dict[str, float | int]:
        """The limits as a plain dict (what the child receives)."""
        return {
            "timeout_s": self.timeout_s,
            "memory_mb": self.memory_mb,
            "max_file_bytes": self.max_file_bytes,
            "max_open_files": self.max_open_files,
            "max_output_bytes": self.max_output_bytes,
        }


def _limits_from_dict(values: dict[str, float | int]) -> SandboxLimits:
    return SandboxLimits(**values)  # type: ignore[arg-type]


class SandboxResult:
    """What happened in one sandboxed run.

    ``status`` is one of :data:`STATUSES`; ``passed`` is true only for ``"passed"``.
    ``message`` explains a non-passing status in one line; ``stdout``/``stderr`` are truncated to
    ``max_output_bytes``; ``pid`` is the child's process id (also its session and group id);
    ``leftover_killed`` counts processes of the child's session killed after it ended (0 in
    every normal run). ``tests_passed``/``tests_total`` count the given tests only;
    ``entry_point_found`` says whether the entry point was defined (None: none was asked for).

    Example:
        >>> r = SandboxResult(status="failed", tests_total=2, tests_passed=1, message="test 1")
        >>> r.passed, r.to_dict()["tests_passed"]
        (False, 1)
    """

    __slots__ = (
        "duration_s",
        "entry_point_found",
        "leftover_killed",
        "message",
        "pid",
        "returncode",
        "status",
        "stderr",
        "stdout",
        "tests_passed",
        "tests_total",
    )

    def __init__(
        self,
        *,
        status: str,
        tests_total: int = 0,
        tests_passed: int = 0,
        message: str = "",
        returncode: int | None = None,
        duration_s: float = 0.0,
        stdout: str = "",
        stderr: str = "",
        pid: int | None = None,
        leftover_killed: int = 0,
        entry_point_found: bool | None = None,
    ) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown sandbox status {status!r}")
        self.status = status
        self.tests_total = tests_total
        self.tests_passed = tests_passed
        self.message = message
        self.returncode = returncode
        self.duration_s = duration_s
        self.stdout = stdout
        self.stderr = stderr
        self.pid = pid
        self.leftover_killed = leftover_killed
        self.entry_point_found = entry_point_found

    @property
    def passed(self) -> bool:
        """True when the code ran and every test passed."""
        return self.status == "passed"

    def to_dict(self) -> dict[str, object]:
        """JSON-ready summary (used in reward ``details``)."""
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        return (
            f"SandboxResult(status={self.status!r}, tests_passed={self.tests_passed}, "
            f"tests_total={self.tests_total}, message={self.message!r})"
        )


def run_python(code: str, limits: SandboxLimits | None = None) -> SandboxResult:
    """Run ``code`` in the sandbox; ``passed`` means it ran to the end without an exception.

    Example:
        >>> run_python("x = sum(range(10))\\nassert x == 45").status
        'passed'
        >>> run_python("raise ValueError('no')").message
        'ValueError: no'
    """
    return run_python_tests(code, [], limits=limits)


def run_python_tests(
    code: str,
    tests: list[str] | tuple[str, ...],
    *,
    entry_point: str | None = None,
    limits: SandboxLimits | None = None,
    module_name: str = "__main__",
) -> SandboxResult:
    """Run ``code``, then each test (Python statements, usually ``assert``) in its namespace.

    ``entry_point``, when given, must name a callable the code defines (checked first).
    ``module_name`` is the code's ``__name__`` (use something other than ``"__main__"`` to skip
    demo code under ``if __name__ == "__main__":``).
    Never raises for anything the code does; a host-side failure (no temporary directory, the
    interpreter cannot start) gives status ``sandbox_error``. Thread-safe.

    Example:
        >>> run_python_tests("def f(x):\\n    return x", ["assert f(1) == 2"]).status
        'failed'
    """
    limits = limits or SandboxLimits()
    try:
        return _run(str(code), [str(t) for t in tests], entry_point, limits, str(module_name))
    except Exception as exc:  # host-side failure: report, never raise
        return SandboxResult(status="sandbox_error", message=f"{type(exc).__name__}: {exc}")


def session_processes(session_id: int) -> list[int]:
    """Live (non-zombie) processes whose session id or process-group id is ``session_id``.

    Reads ``/proc``; returns ``[]`` where ``/proc`` is unavailable.

    Example:
        >>> session_processes(2**22 + 12345)  # no such session
        []
    """
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) < 4 or fields[0] in ("Z", "X"):
            continue
        try:
            pgrp, session = int(fields[2]), int(fields[3])
        except ValueError:
            continue
        if session_id in (pgrp, session):
            found.append(int(entry))
    return found


def _run(
    code: str,
    tests: list[str],
    entry_point: str | None,
    limits: SandboxLimits,
    module_name: str,
) -> SandboxResult:
    import json
    import secrets
    import shutil
    import subprocess
    import tempfile
    import time

    outer = os.path.realpath(tempfile.mkdtemp(prefix="videorl-sandbox-"))
    try:
        workdir = os.path.join(outer, "work")
        os.mkdir(workdir, 0o700)
        nonce = secrets.token_hex(16)
        result_path = os.path.join(outer, "result")
        payload = {
            "nonce": nonce,
            "workdir": workdir,
            "result_path": result_path,
            "code": code,
            "tests": tests,
            "entry_point": entry_point,
            "module_name": module_name,
            "limits": limits.to_dict(),
            "cpu_seconds": limits.cpu_seconds,
        }
        payload_path = os.path.join(outer, "payload.json")
        fd = os.open(payload_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle)
        env = {
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "HOME": workdir,
            "TMPDIR": workdir,
        }
        argv = [sys.executable, "-I", "-S", "-B", os.path.abspath(__file__), payload_path]
        stdout_path = os.path.join(outer, "stdout")
        stderr_path = os.path.join(outer, "stderr")
        started = time.monotonic()
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            proc = subprocess.Popen(
                argv,
                cwd=workdir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                close_fds=True,
                start_new_session=True,
            )
        timed_out = not _wait_without_reaping(proc.pid, started + limits.timeout_s + 1.0)
        # Kill the whole group while the (possibly zombie) leader still holds its pid, so the
        # group id cannot have been reused by an unrelated process; then reap.
        _kill_group(proc.pid)
        returncode = proc.wait()
        duration = time.monotonic() - started
        leftovers = _sweep_session(proc.pid)
        stdout = _read_head(stdout_path, limits.max_output_bytes)
        stderr = _read_tail(stderr_path, limits.max_output_bytes)
        report = _parse_report(result_path, nonce)
        return _interpret(
            report,
            timed_out=timed_out,
            returncode=returncode,
            duration=duration,
            stdout=stdout,
            stderr=stderr,
            pid=proc.pid,
            leftovers=leftovers,
            n_tests=len(tests),
            has_entry_point=bool(entry_point),
        )
    finally:
        shutil.rmtree(outer, ignore_errors=True)


def _wait_without_reaping(pid: int, deadline: float) -> bool:
    """Wait until ``pid`` exits (left unreaped) or ``deadline``; True if it exited."""
    import time

    delay = 0.0005
    while True:
        try:
            info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        if info is not None:
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, 0.02)


def _kill_group(pgid: int) -> None:
    import contextlib
    import signal

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _sweep_session(session_id: int, rounds: int = 5) -> int:
    """Kill every live process left in the child's session or group; return how many."""
    import signal
    import time

    killed: set[int] = set()
    for _ in range(rounds):
        pids = [p for p in session_processes(session_id) if p != os.getpid()]
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)
    return len(killed)


def _read_head(path: str, limit: int) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def _read_tail(path: str, limit: int) -> str:
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - limit))
            return handle.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def _parse_report(path: str, nonce: str) -> dict[str, object] | None:
    """Parse the child's result file; None unless it is exactly one well-formed report."""
    import codecs

    try:
        with open(path, "rb") as handle:
            raw = handle.read(256 * 1024)
        text = raw.decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.split("\n")
    if len(lines) < 3 or lines[-1] != "" or lines[0] != f"{RESULT_MAGIC} {nonce}":
        return None
    report: dict[str, object] = {"passed": set(), "info": []}
    seen: set[str] = set()
    for line in lines[1:-1]:
        key, _, value = line.partition(" ")
        if key == "info":
            try:
                report["info"].append(codecs.decode(value, "unicode_escape"))  # type: ignore[union-attr]
            except (UnicodeDecodeError, ValueError):
                return None
            continue
        if key in seen or key not in ("stage", "total", "passed", "finished"):
            return None  # duplicate or unknown line: not our report
        seen.add(key)
        if key == "stage":
            report["stage"] = value
        elif key == "passed":
            try:
                report["passed"] = {int(v) for v in value.split()}
            except ValueError:
                return None
        else:
            try:
                report[key] = int(value)
            except ValueError:
                return None
    if report.get("stage") not in ("compile", "solution", "tests"):
        return None
    if report["stage"] != "compile" and not {"total", "finished"} <= report.keys():
        return None
    return report


def _interpret(
    report: dict[str, object] | None,
    *,
    timed_out: bool,
    returncode: int | None,
    duration: float,
    stdout: str,
    stderr: str,
    pid: int,
    leftovers: int,
    n_tests: int,
    has_entry_point: bool,
) -> SandboxResult:
    n_checks = n_tests + (1 if has_entry_point else 0)
    common = {
        "returncode": returncode,
        "duration_s": round(duration, 4),
        "stdout": stdout,
        "stderr": stderr,
        "pid": pid,
        "leftover_killed": leftovers,
        "tests_total": n_tests,
    }
    if report is None:
        if timed_out:
            return SandboxResult(status="timeout", message="wall-clock limit reached", **common)
        if returncode is not None and returncode < 0:
            import signal

            try:
                name = signal.Signals(-returncode).name
            except ValueError:
                name = f"signal {-returncode}"
            if name in ("SIGXCPU", "SIGKILL") and duration >= 1.0:
                return SandboxResult(status="timeout", message="CPU-time limit reached", **common)
            return SandboxResult(status="crashed", message=f"killed by {name}", **common)
        return SandboxResult(
            status="crashed",
            message=f"exited with code {returncode} before reporting (os._exit? out of memory?)",
            **common,
        )
    info = [str(item) for item in report.get("info", [])]  # type: ignore[union-attr]
    message = info[0] if info else ""
    stage = report.get("stage")
    passed = {k for k in report.get("passed", set()) if 0 <= k < n_checks}  # type: ignore[union-attr]
    first_test = 1 if has_entry_point else 0
    common["tests_passed"] = len([k for k in passed if k >= first_test])
    common["entry_point_found"] = (0 in passed) if has_entry_point else None
    if stage == "compile":
        return SandboxResult(status="syntax_error", message=message, **common)
    if stage == "solution":
        message = message.removeprefix("solution: ")
        return SandboxResult(status="error", message=message, **common)
    if report.get("finished") != 1 or timed_out:
        return SandboxResult(
            status="timeout", message=message or "wall-clock limit reached", **common
        )
    if report.get("total") != n_checks:
        return SandboxResult(status="crashed", message="inconsistent report", **common)
    if len(passed) == n_checks:
        return SandboxResult(status="passed", **common)
    return SandboxResult(status="failed", message=message or "a test failed", **common)


# --------------------------------------------------------------------------------------------
# Child side (runs as ``python -I -S -B sandbox.py PAYLOAD``)
# --------------------------------------------------------------------------------------------


def _child_main(payload_path: str) -> None:  # pragma: no cover - runs in the child process
    """Set up limits and guards, run the untrusted code in a worker thread, write the report.

    Once the worker is released, this function only uses names bound to locals beforehand, so
    the untrusted code cannot redirect it by patching modules or builtins.
    """
    import _thread
    import gc
    import json
    import resource

    os_pwrite, os_ftruncate, os_exit = os.pwrite, os.ftruncate, os._exit
    len_, type_, str_, base_exception = len, type, str, BaseException
    magic = RESULT_MAGIC
    with open(payload_path, encoding="utf-8") as handle:
        payload = json.load(handle)
    os.unlink(payload_path)
    nonce: str = payload["nonce"]
    workdir: str = payload["workdir"]
    limits: dict[str, float] = payload["limits"]
    result_fd = os.open(
        payload["result_path"], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600
    )

    def report(lines: list[str]) -> None:
        text = magic + " " + nonce + "\n"
        for line in lines:
            text = text + line + "\n"
        blob = text.encode("ascii", "backslashreplace")
        os_ftruncate(result_fd, 0)
        offset = 0
        while offset < len_(blob):
            offset += os_pwrite(result_fd, blob[offset:], offset)

    def escape(text: str) -> str:
        return text[:2000].encode("unicode_escape").decode("ascii")

    # Compile before anything untrusted runs: a syntax error needs no execution.
    try:
        code_obj = compile(payload["code"], "<solution>", "exec", dont_inherit=True, optimize=0)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        report(["stage compile", "info " + escape(_format_exception(exc))])
        os_exit(0)
    checks: list[str] = []
    labels: list[str] = []
    entry_point = payload.get("entry_point")
    if entry_point:
        labels.append("entry point")
        checks.append(
            f"if not callable(globals().get({entry_point!r})):\n"
            f"    raise NameError({entry_point + ' is not defined (or not callable)'!r})"
        )
    checks.extend(payload["tests"])
    labels.extend(f"test {i}" for i in range(len(payload["tests"])))
    test_codes = []
    for index, test in enumerate(checks):
        try:
            test_codes.append(_compile_test(test, index))
        except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
            report(["stage compile", "info " + escape(f"{labels[index]}: {exc}")])
            os_exit(0)
    test_codes_t = tuple(test_codes)
    n_tests = len(test_codes_t)

    # Resource limits (soft = hard, so the code cannot raise them back).
    for name, value in (
        ("RLIMIT_AS", int(limits["memory_mb"]) * 1024 * 1024),
        ("RLIMIT_CPU", int(payload["cpu_seconds"])),
        ("RLIMIT_FSIZE", int(limits["max_file_bytes"])),
        ("RLIMIT_NOFILE", int(limits["max_open_files"])),
        ("RLIMIT_CORE", 0),
    ):
        which = getattr(resource, name, None)
        if which is not None:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY and hard < value:
                value = hard
            resource.setrlimit(which, (value, value))

    namespace: dict[str, object] = {
        "__name__": str(payload.get("module_name") or "__main__"),
        "__builtins__": __builtins__,
    }
    passed: list[int] = []
    done = _thread.allocate_lock()
    go = _thread.allocate_lock()
    done.acquire()
    go.acquire()
    info: list[str] = []
    namespace["__videorl_mark__"] = sys.audit
    # The worker waits for ``go``; it is created before the process limit drops to 0.
    _thread.start_new_thread(
        _worker, (code_obj, test_codes_t, tuple(labels), namespace, go, done, info)
    )
    nproc = getattr(resource, "RLIMIT_NPROC", None)
    if nproc is not None:  # binds non-root users; root is held by the audit hook
        resource.setrlimit(nproc, (0, 0))
    guard = _make_guard(workdir, _read_roots(workdir), test_codes_t, namespace, passed)
    gc.collect()
    gc.disable()
    sys.modules.pop("gc", None)
    sys.addaudithook(guard)
    del guard
    wait_s = float(limits["timeout_s"])
    release, acquire = go.release, done.acquire
    lines: list[str] = []
    # ---- untrusted code runs from here on: only local names below this line ----
    try:
        release()
        finished = acquire(True, wait_s)
        stage = "tests"
        n_info = len_(info)
        i = 0
        while i < n_info and i < 4:
            item = info[i]
            if type_(item) is str_:  # exact type: no user-defined methods run in main
                if i == 0 and item.startswith("solution: "):
                    stage = "solution"
                lines.append("info " + escape(item))
            i += 1
        marks = ""
        seen = ""
        n_marks = len_(passed)
        i = 0
        while i < n_marks:
            token = f" {passed[i]} "
            if token not in seen:
                seen = seen + token
                marks = marks + token.rstrip()
            i += 1
        report(
            [
                "stage " + stage,
                f"total {n_tests}",
                "passed" + marks,
                "finished 1" if finished else "finished 0",
                *lines,
            ]
        )
    except base_exception:  # never let the untrusted code's hooks (excepthook) run in main
        os_exit(70)
    os_exit(0)


def _compile_test(test: str, index: int):  # pragma: no cover - child side
    """Compile one test, guard its top-level ``assert X == Y`` and append the pass marker.

    ``assert X == Y`` becomes ``assert __videorl_mark__('videorl.eq', (l := X), (r := Y)) is None
    and l == r``: the audit hook refuses (without running any of the code's methods) a comparison
    between different types when either type defines its own ``__eq__``, the "object equal to
    everything" trick. Each operand is still evaluated exactly once.
    """
    import ast

    tree = ast.parse(test, f"<test {index}>", "exec")
    for node in tree.body:
        test_expr = node.test if isinstance(node, ast.Assert) else None
        if (
            isinstance(test_expr, ast.Compare)
            and len(test_expr.ops) == 1
            and isinstance(test_expr.ops[0], ast.Eq)
        ):
            left = ast.Name("__videorl_l", ast.Store())
            right = ast.Name("__videorl_r", ast.Store())
            guard_call = ast.Call(
                func=ast.Name("__videorl_mark__", ast.Load()),
                args=[
                    ast.Constant("videorl.eq"),
                    ast.NamedExpr(left, test_expr.left),
                    ast.NamedExpr(right, test_expr.comparators[0]),
                ],
                keywords=[],
            )
            node.test = ast.BoolOp(
                ast.And(),
                [
                    ast.Compare(guard_call, [ast.Is()], [ast.Constant(None)]),
                    ast.Compare(
                        ast.Name("__videorl_l", ast.Load()),
                        [ast.Eq()],
                        [ast.Name("__videorl_r", ast.Load())],
                    ),
                ],
            )
    marker = ast.parse(f"__videorl_mark__('videorl.pass', {index})").body
    tree.body.extend(marker)
    ast.fix_missing_locations(tree)
    return compile(tree, f"<test {index}>", "exec", dont_inherit=True, optimize=0)


def _worker(code_obj, test_codes, labels, namespace, go, done, info) -> None:  # pragma: no cover
    """Run the untrusted code, then each test; record one-line messages for the report.

    Tests must be run by *this* frame (registered with the guard before any untrusted code):
    a test code object re-run from inside the untrusted code does not count.
    """
    go.acquire()
    sys.audit("videorl.worker")
    try:
        try:
            exec(code_obj, namespace)
        except BaseException as exc:
            info.append("solution: " + _format_exception(exc))
            return
        for index, test_code in enumerate(test_codes):
            try:
                exec(test_code, namespace)
            except BaseException as exc:
                if len(info) < 4:
                    info.append(f"{labels[index]}: {_format_exception(exc)}")
    except BaseException:
        pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:  # noqa: SIM105 - no contextlib in the child
                stream.flush()
            except BaseException:
                pass
        done.release()


def _format_exception(exc: BaseException) -> str:  # pragma: no cover - child side
    try:
        text = str(exc)
    except BaseException:
        text = "<unprintable>"
    name = type(exc).__name__
    return f"{name}: {text}"[:500] if text else name


def _read_roots(workdir: str) -> tuple[str, ...]:  # pragma: no cover - child side
    """Directories the untrusted code may read: the workdir and the standard library."""
    roots = [workdir]
    for entry in sys.path:
        if entry and os.path.isabs(entry):
            roots.append(os.path.realpath(entry))
    zoneinfo = "/usr/share/zoneinfo"
    if os.path.isdir(zoneinfo):
        roots.append(zoneinfo)
    return tuple(dict.fromkeys(roots))


def _make_guard(workdir, read_roots, test_codes, namespace, passed):  # pragma: no cover
    """Build the audit hook. Everything it uses is bound here, never looked up at call time."""
    import _thread
    import posix

    getcwd = posix.getcwd
    get_ident = _thread.get_ident
    getframe = sys._getframe
    type_ = type
    str_, bytes_, int_ = str, bytes, int
    len_ = len
    denied_events = _DENIED_EVENTS
    denied_prefixes = _DENIED_EVENT_PREFIXES
    denied_imports = _DENIED_IMPORTS
    path_events = _PATH_EVENTS
    dir_fd_args = _DIR_FD_ARGS
    devices = _READABLE_DEVICES
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    n_codes = len(test_codes)
    in_hook: dict[int, bool] = {}
    worker_frames: list[object] = []
    refuse = PermissionError
    assertion_error = AssertionError
    mro_of = type.__dict__["__mro__"].__get__
    flags_of = type.__dict__["__flags__"].__get__
    dict_of = type.__dict__["__dict__"].__get__
    heap_type_flag = 1 << 9

    def normalise(path):
        """Absolute, lexically normalised str path, or None when the type is not plain."""
        if type_(path) is bytes_:
            path = path.decode("utf-8", "surrogateescape")
        elif type_(path) is not str_:
            return None
        if "\x00" in path:
            return None
        if not path.startswith("/"):
            path = getcwd() + "/" + path
        parts = []
        for part in path.split("/"):
            if part == "" or part == ".":
                continue
            if part == "..":
                if parts:
                    parts.pop()
                continue
            parts.append(part)
        return "/" + "/".join(parts)

    def inside(path, roots):
        for root in roots:  # noqa: SIM110 - no builtins (any) inside the hook
            if path == root or path.startswith(root + "/") or root == "/":
                return True
        return False

    def check_path(path, write):
        if path is None:
            path = "."
        if type_(path) is int_:
            return  # an already-open descriptor
        norm = normalise(path)
        if norm is None:
            raise refuse("sandbox: only str or bytes paths are allowed")
        if write:
            if not inside(norm, (workdir,)):
                raise refuse(f"sandbox: writing outside the working directory: {norm}")
        elif not (inside(norm, read_roots) or norm in devices):
            raise refuse(f"sandbox: reading outside the sandbox: {norm}")

    def check_equality(left, right):
        """Refuse ``==`` across types when either type has its own ``__eq__`` (no user code)."""
        left_type, right_type = type_(left), type_(right)
        if left_type is right_type:
            return
        for klass_type in (left_type, right_type):
            for klass in mro_of(klass_type):
                if flags_of(klass) & heap_type_flag and "__eq__" in dict_of(klass):
                    raise assertion_error(
                        "sandbox: == between different types where one defines __eq__"
                    )

    def guard(event, args):
        if event == "videorl.pass" or event == "videorl.worker":
            ident = get_ident()
            if in_hook.get(ident):
                return
            in_hook[ident] = True
            try:
                frame = getframe(1)
                if event == "videorl.worker":
                    if not worker_frames:  # the first caller is the harness, before any user code
                        worker_frames.append(frame)
                    return
                index = args[0] if len_(args) == 1 else None
                if (
                    worker_frames
                    and type_(index) is int_
                    and 0 <= index < n_codes
                    and frame.f_code is test_codes[index]
                    and frame.f_globals is namespace
                    and frame.f_back is worker_frames[0]
                ):
                    passed.append(index)
            finally:
                in_hook[ident] = False
            return
        if event in denied_events:
            raise refuse(f"sandbox: {event} is not allowed")
        if event.startswith(denied_prefixes):
            raise refuse(f"sandbox: {event} is not allowed")
        if event == "videorl.eq":
            if len_(args) == 2:
                check_equality(args[0], args[1])
            return
        if event == "import":
            name = args[0]
            if type_(name) is not str_:
                raise refuse("sandbox: odd import")
            if name in denied_imports or name.split(".")[0] in denied_imports:
                raise refuse(f"sandbox: importing {name} is not allowed")
            return
        if event == "open":
            path, mode, flags = args[0], args[1], args[2]
            write = False
            if type_(flags) is int_ and flags & write_flags:
                write = True
            if type_(mode) is str_ and ("w" in mode or "a" in mode or "x" in mode or "+" in mode):
                write = True
            if mode is None and not write and type_(path) is not int_:
                # os.open can return a *directory* descriptor, and a later os.open(name,
                # dir_fd=...) event does not show that descriptor: only the workdir and the
                # readable devices may be opened this way.
                norm = normalise(path)
                if norm is None or not (inside(norm, (workdir,)) or norm in devices):
                    raise refuse(f"sandbox: os.open outside the working directory: {norm}")
                return
            check_path(path, write)
            return
        spec = path_events.get(event)
        if spec is not None:
            indices, write = spec
            for position in dir_fd_args.get(event, ()):
                if position < len_(args) and args[position] is not None:
                    raise refuse(f"sandbox: {event} with dir_fd is not allowed")
            for position in indices:
                if position < len_(args):
                    check_path(args[position], write)
            return
        if event.startswith("os.") and event not in ("os.lockf",):
            return  # remaining os.* events carry no path (checked above) or are harmless
        if event.startswith("shutil."):
            return  # the underlying os/open events are checked one by one

    return guard


if __name__ == "__main__":  # pragma: no cover - the child's entry point
    _child_main(sys.argv[1])
