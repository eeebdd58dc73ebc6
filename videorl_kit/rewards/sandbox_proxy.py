"""Run tests in a process of their own against a proxy of the model's code, relayed by the host.

Two sandboxed children run side by side (each with the isolation of
:mod:`videorl_kit.rewards.sandbox`): the *code's* process runs the model-written code and then
serves calls (:func:`videorl_kit.rewards.sandbox_child.serve`); the *tests'* process runs the
ground truth's tests with every name they do not define bound to a proxy of the code
(:mod:`videorl_kit.rewards.sandbox_tester`). They never share an interpreter and never talk
directly: the host relays each message, one at a time, and reads everything the code's process
sends with the strict decoder (:func:`videorl_kit.rewards.sandbox_wire.decode_value`), checks its
shape (a value, changed arguments and printed text; a handle number; a built-in exception name
from :func:`~videorl_kit.rewards.sandbox_child.raisable_exceptions`), and only then passes it on.
A value that is not plain data, a call that raises ``SystemExit``, a malformed or unexpected
reply, a crash or a time limit ends the run there: the tests never see it, and they do not pass.

The code's process first answers the planned calls of the tests the host decides itself
(:mod:`videorl_kit.rewards.code_tests`), then the tests' process's calls. Time is bounded per call
(``call_timeout_s``) and for the whole run (``limits.timeout_s``, from the start of the
children); both children are killed when the run ends.

Example:
    >>> report = run_proxied(
    ...     "def f(x):\\n    return x * x\\n", "f", [((3,), {})],
    ...     ["for i in range(4):\\n    assert f(i) == i * i"],
    ... )
    >>> report.status, report.verdict, report.calls, report.results[0].value
    ('ran', 'passed', 4, 9)
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import select
import signal
import time
import types
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from videorl_kit.rewards import sandbox_tester
from videorl_kit.rewards.sandbox import (
    CallResult,
    ChildReport,
    ChildStatus,
    Isolation,
    Pipes,
    SandboxLimits,
    StartedChild,
    drain,
    inner_pidfd,
    kill_everything,
    start_child,
)
from videorl_kit.rewards.sandbox_child import (
    MAX_MESSAGE_CHARS,
    WireError,
    encode_value,
    raisable_exceptions,
)
from videorl_kit.rewards.sandbox_wire import decode_value

Verdict = Literal["passed", "failed", "refused", ""]

#: Largest message (the arguments of one call) the tests' process may send.
MAX_ARG_BYTES = 16 * 1024 * 1024
#: What the code's process may send in one run, in multiples of ``max_result_bytes``.
TOTAL_REPLY_FACTOR = 64
_GRACE_S = 0.5  # on top of timeout_s: two interpreters start before any code runs
_OPERATIONS = frozenset(
    ("__len__", "__bool__", "__str__", "__iter__", "__contains__", "__getitem__")
)
_KINDS = frozenset(("function", "class", "value", "module", "missing", "other"))


@dataclass(frozen=True, slots=True)
class ProxyReport:
    """The host's reading of one proxied run.

    ``status`` is the code's process's :data:`~videorl_kit.rewards.sandbox.ChildStatus`;
    when it is ``ran``, ``verdict`` says what the tests' process concluded (``passed``,
    ``failed`` with ``failed_test`` the index of the failing test, or ``refused``: a test needs
    something that cannot cross, ``message`` says what). ``results`` are the planned calls'
    results (see :func:`run_proxied`) and ``calls`` how many calls the tests made.
    """

    status: ChildStatus
    isolation: Isolation
    message: str = ""
    results: tuple[CallResult, ...] = ()
    verdict: Verdict = ""
    failed_test: int | None = None
    calls: int = 0
    duration_s: float = 0.0
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    pids: tuple[int, ...] = ()
    leftover_killed: int = 0

    to_details = ChildReport.to_details  # the same summary fields


def run_proxied(
    code: str,
    entry_point: str,
    calls: Sequence[tuple[tuple[Any, ...], dict[str, Any]]],
    tests: Sequence[str],
    *,
    limits: SandboxLimits | None = None,
    call_timeout_s: float | None = None,
    isolation: Isolation = "bubblewrap",
    refused_modules: Sequence[str] = (),
    test_names: Sequence[str] = (),
    entry_point_objects: bool = False,
    module_name: str = "solution",
) -> ProxyReport:
    """Run ``code``; make the planned ``calls`` of ``entry_point``; then run ``tests`` against it.

    ``tests`` run in order in one namespace of the tests' process; ``refused_modules`` are
    modules the tests' process must not import for the code (a module the code imported under
    another name); ``test_names`` are names the ground truth's tests bind, never looked up in
    the code's module (:func:`~videorl_kit.rewards.code_tests.bound_names`);
    ``entry_point_objects``: calling the entry point may return an object of the code's class
    (a class under test), else it must return plain data. Never raises for
    anything the code or the tests do; a host-side failure is status ``sandbox_error``.

    Example:
        >>> r = run_proxied("def f(x):\\n    return x\\n", "f", [], ["assert f(1) == 2"])
        >>> r.verdict, r.failed_test, r.message
        ('failed', 0, 'AssertionError')
    """
    limits = limits or SandboxLimits()
    planned = [(tuple(args), dict(kwargs)) for args, kwargs in calls]
    try:
        encode_value(planned, max_bytes=1 << 28)
    except WireError as exc:
        raise ValueError(f"call arguments are not plain data: {exc}") from None
    relay = _Relay(
        code_request={
            "code": str(code),
            "entry_point": entry_point,
            "module_name": str(module_name),
            "calls": None,
            "script": None,
            "nonce": None,
            "serve": True,
            "limits": limits.rlimits(),
            "max_result_bytes": limits.max_result_bytes,
        },
        test_request={
            "role": "tester",
            "tester_code": _tester_code(),
            "tests": [str(test) for test in tests],
            "entry_point": entry_point,
            "refused_modules": sorted(refused_modules),
            "test_names": sorted(test_names),
            "entry_point_objects": bool(entry_point_objects),
            "max_arg_bytes": MAX_ARG_BYTES,
            "limits": limits.rlimits(),
        },
        entry_point=entry_point,
        planned=planned,
        limits=limits,
        call_timeout_s=call_timeout_s or math.inf,
        isolation=isolation,
    )
    try:
        return relay.run()
    except Exception as exc:  # host-side failure: report, never raise
        return ProxyReport("sandbox_error", isolation, message=f"{type(exc).__name__}: {exc}")


@functools.lru_cache(maxsize=1)
def _tester_code() -> types.CodeType:
    """The tests' process's program, compiled once (the child is this same interpreter)."""
    source = Path(sandbox_tester.__file__).read_text(encoding="utf-8")
    return compile(source, "<tester>", "exec", dont_inherit=True)


# ------------------------------------------------------------------------------ one child


@dataclass(slots=True)
class _Peer:
    """One of the two children as the host sees it: pipes, buffers, complete lines."""

    child: StartedChild
    line_cap: int
    total_cap: int
    output_cap: int
    pidfd: int = -1
    inner: int | None = None
    stdin_left: bytes = b""
    inbox_left: bytearray = field(default_factory=bytearray)
    partial: bytearray = field(default_factory=bytearray)
    lines: deque[bytes] = field(default_factory=deque)
    received: int = 0
    overflow: bool = False
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    info: bytearray = field(default_factory=bytearray)
    exited: bool = False

    def take(self, data: bytes) -> None:
        """Split what arrived on the report pipe into lines, within the caps."""
        self.received += len(data)
        if self.received > self.total_cap:
            self.overflow = True
            return
        self.partial += data
        if b"\n" in data:  # one split: many short lines or one long one cost the same
            *complete, rest = bytes(self.partial).split(b"\n")
            self.lines.extend(complete)
            self.partial = bytearray(rest)
        if len(self.partial) > self.line_cap:
            self.overflow = True


@dataclass(slots=True)
class _Outcome:
    status: ChildStatus
    message: str = ""
    verdict: Verdict = ""
    failed_test: int | None = None


class _Relay:
    """The host's event loop over both children (one instance per run)."""

    def __init__(
        self,
        *,
        code_request: dict[str, Any],
        test_request: dict[str, Any],
        entry_point: str,
        planned: list[tuple[tuple[Any, ...], dict[str, Any]]],
        limits: SandboxLimits,
        call_timeout_s: float,
        isolation: Isolation,
    ) -> None:
        self.code_request = code_request
        self.test_request = test_request
        self.entry_point = entry_point
        self.planned = planned
        self.limits = limits
        self.call_timeout_s = call_timeout_s
        self.isolation = isolation
        self.allowed_exceptions = raisable_exceptions()
        self.results: list[CallResult] = []
        self.outcome: _Outcome | None = None
        self.code_state = "starting"  # -> status -> ready | ended
        self.test_state = "starting"  # -> running -> done
        self.code_status: _Outcome | None = None
        self.test_verdict: _Outcome | None = None
        self.test_calls = 0
        self.request: tuple[str, Any, bytes] | None = None  # the tests' message waiting
        self.outstanding: tuple[str, Any] | None = None  # the message the code is answering
        self.call_deadline = math.inf
        self.handles = 0

    # ------------------------------------------------------------------ the loop

    def run(self) -> ProxyReport:
        with contextlib.ExitStack() as stack:
            pipes = Pipes()
            stack.callback(pipes.close_all)
            limits = self.limits
            cap = limits.max_result_bytes + 64
            code = _Peer(
                start_child(stack, pipes, self.code_request, limits, self.isolation, inbox=True),
                line_cap=cap,
                total_cap=cap * TOTAL_REPLY_FACTOR,
                output_cap=limits.max_output_bytes,
            )
            killed = [0]
            peers = [code]
            stack.callback(self._kill, peers, killed)
            tests = _Peer(
                start_child(stack, pipes, self.test_request, limits, self.isolation, inbox=True),
                line_cap=MAX_ARG_BYTES + 64,
                total_cap=1 << 62,
                output_cap=limits.max_output_bytes,
            )
            peers.append(tests)
            self.code, self.tests = code, tests
            deadline = code.child.started + limits.timeout_s + _GRACE_S
            self._loop(pipes, deadline)
        outcome = self.outcome or _Outcome("sandbox_error", "the run ended without an outcome")
        if outcome.status == "ran" and not outcome.verdict:  # pragma: no cover - a relay bug
            outcome = _Outcome("sandbox_error", "the tests' process gave no verdict")
        return ProxyReport(
            status=outcome.status,
            isolation=self.isolation,
            message=outcome.message[:300],
            results=tuple(self.results),
            verdict=outcome.verdict,
            failed_test=outcome.failed_test,
            calls=self.test_calls,
            duration_s=round(time.monotonic() - code.child.started, 4),
            returncode=code.child.proc.returncode,
            stdout=bytes(code.stdout[: limits.max_output_bytes]).decode("utf-8", "replace"),
            stderr=bytes(code.stderr[: limits.max_output_bytes]).decode("utf-8", "replace"),
            pids=tuple(p.child.proc.pid for p in (code, tests)),
            leftover_killed=killed[0],
        )

    def _kill(self, peers: list[_Peer], killed: list[int]) -> None:
        """Kill both children: both namespaces' inits first, so that they die together."""
        for peer in peers:
            if peer.inner is not None:
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(peer.inner, signal.SIGKILL)
        for peer in peers:
            if peer.pidfd >= 0:
                os.close(peer.pidfd)
                peer.pidfd = -1
            killed[0] += kill_everything(peer.child.proc, self.isolation, peer.inner)
            peer.inner = None

    def _loop(self, pipes: Pipes, deadline: float) -> None:
        poller = self._poller = select.poll()
        handlers: dict[int, tuple[_Peer, str]] = {}
        for peer in (self.code, self.tests):
            child = peer.child
            peer.pidfd = os.pidfd_open(child.proc.pid)
            peer.stdin_left = child.payload
            for fd, role in (
                (child.out_r, "stdout"),
                (child.err_r, "stderr"),
                (child.result_r, "report"),
                (child.info_r, "info"),
                (peer.pidfd, "exit"),
            ):
                if fd >= 0:
                    if role != "exit":
                        os.set_blocking(fd, False)
                    poller.register(fd, select.POLLIN)
                    handlers[fd] = (peer, role)
            for fd, role in ((child.stdin_w, "stdin"), (child.inbox_w, "inbox")):
                os.set_blocking(fd, False)
                handlers[fd] = (peer, role)
            poller.register(child.stdin_w, select.POLLOUT)
        while self.outcome is None:
            now = time.monotonic()
            if now >= min(deadline, self.call_deadline):
                what = "a call" if self.call_deadline <= deadline else "the run"
                self.outcome = _Outcome("timeout", f"time limit reached ({what})")
                if "starting" in (self.code_state, self.test_state):
                    reason = _last_line(self.code.stderr) or _last_line(self.tests.stderr)
                    self.outcome = _Outcome(
                        "sandbox_error", f"did not start within the time limit ({reason})"
                    )
                break
            wait = min(deadline, self.call_deadline) - now
            for fd, _event in poller.poll(max(1, math.ceil(wait * 1000))):
                peer, role = handlers[fd]
                self._event(poller, pipes, peer, role, fd)
            self._advance(poller)

    def _event(self, poller: select.poll, pipes: Pipes, peer: _Peer, role: str, fd: int) -> None:
        if role == "exit":
            poller.unregister(fd)
            peer.exited = True
            child = peer.child
            for pipe, where in ((child.result_r, None), (child.out_r, peer.stdout)):
                self._read(peer, pipe, where)
            drain(child.err_r, peer.stderr, 4096)
            child.proc.poll()
        elif role == "stdin":
            peer.stdin_left = _write_some(fd, peer.stdin_left)
            if not peer.stdin_left:
                poller.unregister(fd)
                pipes.close(fd)
        elif role == "inbox":
            rest = _write_some(fd, bytes(peer.inbox_left))
            del peer.inbox_left[: len(peer.inbox_left) - len(rest)]
            if not peer.inbox_left:
                poller.unregister(fd)
        elif role == "report":
            if not self._read(peer, fd, None):
                poller.unregister(fd)
        elif role == "info":
            if not drain(fd, peer.info, 4096):
                poller.unregister(fd)
            if peer.inner is None:
                found = inner_pidfd(peer.info, peer.child.proc.pid)
                if found is not None:
                    peer.inner = found[0]
        elif not drain(fd, peer.stdout if role == "stdout" else peer.stderr, 4096):
            poller.unregister(fd)

    def _read(self, peer: _Peer, fd: int, into: bytearray | None) -> bool:
        """Read what ``fd`` holds now (report lines, or output kept up to its cap)."""
        if into is not None:
            return drain(fd, into, max(peer.output_cap, 4096))
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            peer.take(chunk)
            if peer.overflow:
                return False

    def _send(self, poller: select.poll, peer: _Peer, data: bytes) -> None:
        if not peer.inbox_left:
            poller.register(peer.child.inbox_w, select.POLLOUT)
        peer.inbox_left += data

    # ------------------------------------------------------------------ the protocol

    def _advance(self, poller: select.poll) -> None:
        """Act on every complete line; send the code its next message; notice deaths."""
        try:
            self._code_lines()
            self._test_lines()
            self._dispatch(poller)
        except (WireError, ValueError, UnicodeDecodeError) as exc:
            if self.outcome is None:
                self.outcome = _Outcome("invalid_report", str(exc)[:300])
            return
        except Exception as exc:  # a message the host cannot read is a bad report
            if self.outcome is None:  # never a host-side error: a wrong answer must not mask its 0
                self.outcome = _Outcome("invalid_report", f"{type(exc).__name__}: {exc}"[:300])
            return
        if self.outcome is None:
            self._finish_if_done()

    def _code_lines(self) -> None:
        peer = self.code
        if peer.overflow and self.outcome is None:
            raise ValueError("the code's process sent more than the host reads")
        while peer.lines and self.outcome is None:
            line = peer.lines.popleft().decode("ascii")
            if self.code_state == "starting":
                if line != "started":
                    raise ValueError("the code's process did not start as expected")
                self.code_state = "status"
            elif self.code_state == "status":
                self._status(line)
            elif self.code_state == "ended":
                if line != "end":
                    raise ValueError("text after the status line")
                self.outcome = self.code_status
            elif line.startswith("reply ") and self.outstanding is not None:
                self._reply(line[len("reply ") :])
            else:
                raise ValueError("a line from the code's process that answers nothing")

    def _status(self, line: str) -> None:
        if line == "status ran":
            self.code_state = "ready"
            return
        kind, _, rest = line.removeprefix("status ").partition(" ")
        if not line.startswith("status ") or kind not in (
            "syntax_error",
            "error",
            "missing_entry_point",
        ):
            raise ValueError(f"unknown status line {line[:60]!r}")
        message = decode_value(rest)
        if type(message) is not str:
            raise ValueError("the status message is not a string")
        self.code_status = _Outcome(kind, message[:MAX_MESSAGE_CHARS])  # type: ignore[arg-type]
        self.code_state = "ended"

    def _reply(self, text: str) -> None:
        value = decode_value(text)
        source, detail = self.outstanding  # type: ignore[misc]
        self.outstanding, self.call_deadline = None, math.inf
        if type(value) is not list or len(value) != 4 or type(value[0]) is not str:
            raise ValueError("a reply is not [kind, value, detail, output]")
        kind, first, second, printed = value
        if type(printed) is not str:
            raise ValueError("a reply's output is not a string")
        if kind == "handle":
            if first != self.handles or type(first) is not int or second is not None:
                raise ValueError("a handle out of sequence")
            self.handles += 1
        elif kind == "raised":
            if type(first) is not str or type(second) is not str:
                raise ValueError("a raised reply names no built-in exception class")
            if first not in self.allowed_exceptions:
                raise ValueError("a raised reply names no built-in exception class")
        elif kind in ("unencodable", "exit"):
            if type(first) is not str:
                raise ValueError("a failure reply without its reason")
        elif kind == "ok" and source != "lookup":
            changed = detail[3] if source == "test" and first is None else []
            if (second is not None or changed) and (
                type(second) is not list or len(second) != len(changed)
            ):
                raise ValueError("the changed arguments do not match the call")
        elif not (kind == "kind" and source == "lookup" and type(first) is str and first in _KINDS):
            raise ValueError(f"unknown reply kind {kind[:30]!r}")
        elif first in ("module", "other") and type(second) is not str:
            raise ValueError("a module or type name that is not a string")
        if source == "plan":
            self.results.append(_plan_result(kind, first, second))
            return
        if kind in ("unencodable", "exit"):
            what = "returned a value that is not plain data" if kind == "unencodable" else "exited"
            self.outcome = _Outcome("ran", f"{_label(detail)} {what}: {first}", "failed")
            return
        self._send(self._poller, self.tests, b"reply " + text.encode("ascii") + b"\n")

    def _test_lines(self) -> None:
        peer = self.tests
        if peer.overflow and self.outcome is None:
            self.outcome = _Outcome("ran", "a test sent a message that is too large", "failed")
        while peer.lines and self.outcome is None and self.test_state != "done":
            line = peer.lines.popleft()
            word, _, body = line.partition(b" ")
            if self.test_state == "starting":
                if line != b"started":
                    raise ValueError("the tests' process did not start as expected")
                self.test_state = "running"
            elif word in (b"call", b"lookup") and self.request is None:
                self.request = (word.decode(), _checked(word.decode(), body, self.handles), body)
            elif word == b"done":
                self.test_verdict = _verdict(decode_value(body.decode("ascii")))
                self.test_state = "done"
            else:
                self.outcome = _Outcome("ran", "the tests' process broke the protocol", "failed")

    def _dispatch(self, poller: select.poll) -> None:
        if self.outcome is not None or self.code_state != "ready" or self.outstanding is not None:
            return
        if len(self.results) < len(self.planned):
            args, kwargs = self.planned[len(self.results)]
            message = encode_value(
                [[None, self.entry_point], list(args), kwargs, []], max_bytes=1 << 28
            )
            self.outstanding = ("plan", None)
            data = b"call " + message.encode("ascii") + b"\n"
        elif self.request is not None:
            kind, decoded, body = self.request
            self.request = None
            self.outstanding = ("test" if kind == "call" else "lookup", decoded)
            self.test_calls += kind == "call"
            data = kind.encode() + b" " + body + b"\n"
        else:
            return
        self.call_deadline = time.monotonic() + self.call_timeout_s
        self._send(poller, self.code, data)

    def _finish_if_done(self) -> None:
        code, tests = self.code, self.tests
        planned_done = len(self.results) == len(self.planned) and self.code_state == "ready"
        if self.test_state == "done" and planned_done and self.outstanding is None:
            self.outcome = self.test_verdict
        elif code.exited and not code.lines:
            self.outcome = self._death(code, "code")
        elif tests.exited and not tests.lines and self.test_state != "done":
            if self.test_state == "starting":
                self.outcome = self._death(tests, "tests")
            else:
                reason = _last_line(tests.stderr) or _death_text(tests.child.proc.returncode)
                self.outcome = _Outcome("ran", f"the tests' process died: {reason}", "failed")

    def _death(self, peer: _Peer, who: str) -> _Outcome:
        returncode = peer.child.proc.returncode
        if (who == "code" and self.code_state == "starting") or who == "tests":
            reason = _last_line(peer.stderr) or f"exited with code {returncode} before starting"
            return _Outcome("sandbox_error", reason)
        if returncode in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            return _Outcome("timeout", "time limit reached (CPU)")
        return _Outcome("crashed", _death_text(returncode))


# ------------------------------------------------------------------------------ messages


def _write_some(fd: int, data: bytes) -> bytes:
    """Write what the pipe takes now; the rest is returned (nothing more if the reader left)."""
    try:
        return data[os.write(fd, data) :]
    except BlockingIOError:
        return data
    except (BrokenPipeError, OSError):
        return b""


def _checked(kind: str, body: bytes, handles: int) -> Any:
    """The tests' message, read strictly: what it calls or looks up must exist."""
    message = decode_value(body.decode("ascii"))
    ref = message[0] if kind == "call" and type(message) is list and message else message
    _check_ref(ref, handles, _OPERATIONS)
    if kind == "call":
        if len(message) not in (4, 5):
            raise ValueError("a call is not [ref, args, kwargs, changed, (refs)]")
        _, args, kwargs, changed, *refs = message
        if type(args) is not list or type(kwargs) is not dict or type(changed) is not list:
            raise ValueError("a call's arguments are not a list and a dict")
        if any(type(key) is not str for key in kwargs):
            raise ValueError("a keyword that is not a string")
        for key in changed:
            if not ((type(key) is int and 0 <= key < len(args)) or key in kwargs):
                raise ValueError("a changed argument that the call does not have")
        for item in refs[0] if refs else ():  # the code's own objects, passed back by name
            if type(item) is not list or len(item) != 2:
                raise ValueError("a passed object is not [slot, [handle, name]]")
            slot, own = item
            if not ((type(slot) is int and 0 <= slot < len(args)) or slot in kwargs):
                raise ValueError("a passed object for an argument that the call does not have")
            _check_ref(own, handles, ())
    return message


def _check_ref(ref: Any, handles: int, operations: Any) -> None:
    if type(ref) is not list or len(ref) != 2:
        raise ValueError("a message without [handle, name]")
    base, name = ref
    if base is not None and not (type(base) is int and 0 <= base < handles):
        raise ValueError("a message for an unknown handle")
    if type(name) is not str or not (name.isidentifier() or name in operations):
        raise ValueError("a message for a name that is not an identifier")


def _plan_result(kind: str, first: Any, second: Any) -> CallResult:
    if kind == "ok":
        return CallResult("ok", first)
    if kind == "raised":
        return CallResult("raised", message=f"{first}: {second}" if second else first)
    if kind == "handle":
        return CallResult("unencodable", message="an object of the code's own class")
    return CallResult("raised" if kind == "exit" else "unencodable", message=first)


def _verdict(value: Any) -> _Outcome:
    if type(value) is list and value:
        if value[0] == "pass" and len(value) == 2 and type(value[1]) is int:
            return _Outcome("ran", "", "passed")
        if value[0] == "refused" and len(value) == 2 and type(value[1]) is str:
            return _Outcome("ran", value[1], "refused")
        if value[0] == "failed" and len(value) == 3 and type(value[1]) is int:
            return _Outcome("ran", str(value[2]), "failed", value[1])
    raise ValueError("the tests' verdict is not pass, failed or refused")


def _label(detail: Any) -> str:
    """``f(...)`` or ``<object 0>.push(...)`` for a message about a call."""
    try:
        base, name = detail[0]
    except (TypeError, ValueError):
        return "a call"
    return f"{name}(...)" if base is None else f"<object {base}>.{name}(...)"


def _last_line(data: bytearray) -> str:
    lines = bytes(data).decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else ""


def _death_text(returncode: int | None) -> str:
    if returncode is not None and (returncode < 0 or returncode > 128):
        number = -returncode if returncode < 0 else returncode - 128
        return f"killed by signal {number} before reporting"
    return f"exited with code {returncode} before reporting (os._exit? out of memory?)"
