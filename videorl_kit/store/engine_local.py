"""Run decode tasks in N supervised local worker processes, with a per-item time limit.

Each worker is a process of its own (``forkserver`` context by default, never ``fork``:
decoders and Lance start threads) talking to the build over a pipe. The build hands every
worker at most two tasks (the one it decodes and the next), and a worker announces when it
*starts* a task. The build therefore always knows which task a worker is running, and:

* a worker that **dies** (segfault in a decoder, out-of-memory kill) fails exactly the task
  it had started, with :class:`~videorl_kit.store.worker.WorkerCrashError`; the task queued
  behind it goes back to the queue and the worker is replaced;
* a worker that **hangs** (a decoder stuck in a loop or on a read) is killed once its task
  has run for ``item_timeout_s`` seconds of wall-clock time; the task fails with
  :class:`~videorl_kit.store.worker.DecodeTimeoutError` ("decode timed out after S s"), and
  a fresh worker takes its place.

Every task therefore yields exactly one result, and no worker outlives the generator: the
workers still running when it finishes (or is closed early) are stopped, and a worker whose
build process is SIGKILLed exits on its own.

:class:`LocalEngine` is the build's local engine (:mod:`videorl_kit.store.engine`): it runs
the tasks here and hands every ok row to the build's committer.

**Why not a maintained pool.** pebble 5.2 (per-task time limits, worker replacement) was
measured as a replacement. Its workers share one task pipe and one result pipe, each guarded
by a cross-process lock: a worker killed while it holds the result lock (an out-of-memory kill
while it pickles a large frames result; modelled by a result whose pickling SIGKILLs its
worker) blocked every other worker's results for pebble's 60 s lock timeout, then failed an
item that had decoded fine and, 120 s in, broke the pool ("All workers expired"), failing
every queued item. Here each worker has its own pipe, so only the killed item fails
(``tests/store/test_parallel_workers.py`` keeps that case). pebble also notices a crash or
a timeout on a 0.1 s poll (100 crashes took 20 s), where a worker's sentinel wakes this pool
at once; loky has no per-task time limit, and one crash breaks its whole executor.

Example:
    >>> from videorl_kit.store.worker import DecodeTask, decode_task
    >>> task = DecodeTask("/missing.mp4", "video", {}, "0" * 16, "h", "k", "pyav", "1")
    >>> [r.status for r in run_local([task], workers=1, decode_fn=decode_task)]
    ['failed']
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from multiprocessing.reduction import ForkingPickler
from typing import Any

from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.store.commit import BatchCommitter
from videorl_kit.store.defaults import DEFAULT_ITEM_TIMEOUT_S, DEFAULT_MP_CONTEXT
from videorl_kit.store.engine import EngineReport
from videorl_kit.store.worker import (
    DecodeFn,
    DecodeResult,
    DecodeTask,
    DecodeTimeoutError,
    ErrorInfo,
    WorkerCrashError,
    decode_task,
    warm_up,
)

TASKS_PER_WORKER = 2
"""Tasks handed to a worker at once: the one it decodes and the next (no idle gap)."""

_MAX_BOUNCES = 3
"""A task whose worker died this many times before starting it fails as a crash."""

WORKER_PRELOAD: tuple[str, ...] = ("videorl_kit.store.worker", "videorl_kit.media.decoders.pyav")
"""Modules the ``forkserver`` process imports once, so that every worker it forks starts
with them loaded (~0.5-0.7 s of imports per worker otherwise, paid again by every build in
the same process and by every replaced worker). They start no threads that ``fork`` would
lose except allocator/BLAS helpers, which handle ``fork`` themselves; Lance is not among them."""


class WorkerStartError(VideoRLKitError, RuntimeError):
    """Worker processes die before they are ready (e.g. ``decode_fn`` cannot be imported)."""


# -- the worker process ---------------------------------------------------------------------


def _exit_with_parent(parent_pid: int, interval_s: float = 1.0) -> None:
    """Exit this worker when the build process is gone (e.g. SIGKILLed).

    Checked from a thread, so it works while the worker is busy (or stuck) decoding.
    """

    def watch() -> None:
        while True:
            time.sleep(interval_s)
            try:
                os.kill(parent_pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:  # pid reused by another user's process: parent is gone
                os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _raised_result(task: DecodeTask, exc: BaseException) -> DecodeResult:
    return DecodeResult(task, "failed", error=ErrorInfo.from_exception(exc))


def _worker_main(conn: Connection, decode_fn: DecodeFn, parent_pid: int) -> None:
    """Worker loop: receive ``(seq, task)``, send ``("started", seq, t)`` then ``("done", ...)``.

    Ctrl-C is left to the build process, which stops its workers itself.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent(parent_pid)
    warm_up()
    conn.send(("ready",))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the build closed the pipe
            return
        if message is None:
            return
        seq, task = message
        conn.send(("started", seq, time.monotonic()))
        try:
            result = decode_fn(task)
        except Exception as exc:  # a custom decode_fn that raises: fail only this task
            result = _raised_result(task, exc)
        try:
            payload = ForkingPickler.dumps(("done", seq, result))
        except Exception as exc:  # an unpicklable result
            payload = ForkingPickler.dumps(("done", seq, _raised_result(task, exc)))
        conn.send_bytes(payload)


# -- the supervisor (build process) ---------------------------------------------------------


@dataclass
class _Queued:
    seq: int
    task: DecodeTask
    bounces: int = 0


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    ready: bool = False
    assigned: deque[_Queued] = field(default_factory=deque)
    started_at: float | None = None  # when the head of ``assigned`` started (monotonic)
    dead: bool = False

    @property
    def running(self) -> _Queued | None:
        return self.assigned[0] if self.assigned and self.started_at is not None else None


def _death_cause(exitcode: int | None) -> str:
    """How a worker process ended, in words ("killed by SIGSEGV", "exit code 1")."""
    if exitcode is None or exitcode >= 0:
        return f"exit code {exitcode}"
    try:
        return f"killed by {signal.Signals(-exitcode).name}"
    except ValueError:
        return f"killed by signal {-exitcode}"


def _crash_result(task: DecodeTask, exitcode: int | None) -> DecodeResult:
    error = WorkerCrashError(
        f"{task.source_uri}: the worker process died while decoding it "
        f"({_death_cause(exitcode)}); likely a decoder crash (segfault) or out-of-memory kill"
    )
    return DecodeResult(task, "failed", error=ErrorInfo.from_exception(error))


def _timeout_result(task: DecodeTask, limit_s: float, elapsed_s: float) -> DecodeResult:
    error = DecodeTimeoutError(
        f"{task.source_uri}: decode timed out after {limit_s:g} s (killed after "
        f"{elapsed_s:.1f} s); the worker was replaced. If the file is only slow, raise "
        "--item-timeout"
    )
    return DecodeResult(task, "failed", error=ErrorInfo.from_exception(error), seconds=elapsed_s)


class _Pool:
    """The worker processes of one :func:`run_local` call."""

    def __init__(self, context: BaseContext, decode_fn: DecodeFn, size: int):
        self.context = context
        self.decode_fn = decode_fn
        self.workers = [self.spawn() for _ in range(size)]
        self.failed_starts = 0

    def spawn(self) -> _Worker:
        parent_end, child_end = self.context.Pipe(duplex=True)
        process = self.context.Process(  # type: ignore[attr-defined]
            target=_worker_main,
            args=(child_end, self.decode_fn, os.getpid()),
            name="videorl-decode",
            daemon=True,
        )
        process.start()
        child_end.close()
        return _Worker(process, parent_end)

    def replace(self, worker: _Worker) -> None:
        """Kill ``worker`` (if still alive) and put a fresh one in its place."""
        self.stop(worker, kill=True)
        self.workers[self.workers.index(worker)] = self.spawn()

    @staticmethod
    def stop(worker: _Worker, *, kill: bool) -> None:
        if not kill and worker.process.is_alive():
            try:
                worker.conn.send(None)
            except OSError:
                kill = True
        if kill and worker.process.is_alive():
            worker.process.kill()
        worker.process.join(timeout=5)
        if worker.process.is_alive():  # did not take the polite way out
            worker.process.kill()
            worker.process.join(timeout=5)
        worker.conn.close()

    def close(self) -> None:
        for worker in self.workers:
            self.stop(worker, kill=bool(worker.assigned) or not worker.ready)


def _receive(worker: _Worker, results: list[DecodeResult]) -> None:
    """Handle every message waiting on ``worker``'s pipe; mark it dead on end of file."""
    while not worker.dead:
        try:
            if not worker.conn.poll():
                return
            message: tuple[Any, ...] = worker.conn.recv()
        except (EOFError, OSError):
            worker.dead = True
            return
        kind = message[0]
        if kind == "ready":
            worker.ready = True
        elif kind == "started":
            if worker.assigned and worker.assigned[0].seq == message[1]:
                worker.started_at = float(message[2])
        elif kind == "done":
            head = worker.assigned.popleft()
            if head.seq != message[1]:  # a protocol bug, not a bad input
                raise RuntimeError(f"worker answered task {message[1]}, expected {head.seq}")
            worker.started_at = None
            results.append(message[2])


def run_local(
    tasks: Iterable[DecodeTask],
    *,
    workers: int,
    decode_fn: DecodeFn,
    mp_context: str = DEFAULT_MP_CONTEXT,
    item_timeout_s: float | None = DEFAULT_ITEM_TIMEOUT_S,
) -> Iterator[DecodeResult]:
    """Yield one :class:`DecodeResult` per task, in completion order.

    ``decode_fn`` must be a picklable top-level function. A task whose decode runs longer
    than ``item_timeout_s`` seconds (None or 0: no limit) fails with
    :class:`DecodeTimeoutError` and its worker is killed and replaced; a task whose worker
    dies fails with :class:`WorkerCrashError`. Other tasks are not affected. At most
    ``2 × workers`` tasks are in flight, so decoded frames waiting to be committed stay
    bounded.

    Example:
        >>> results = run_local(tasks, workers=2, decode_fn=decode_task,   # doctest: +SKIP
        ...                     item_timeout_s=60)
        >>> sorted(r.status for r in results)                              # doctest: +SKIP
        ['failed', 'ok', 'ok']
    """
    pending: deque[_Queued] = deque(_Queued(i, t) for i, t in enumerate(tasks))
    if not pending:
        return
    limit = float(item_timeout_s) if item_timeout_s else None
    size = max(1, min(int(workers), len(pending)))
    context = multiprocessing.get_context(mp_context)
    if isinstance(context, multiprocessing.context.ForkServerContext):
        # takes effect when the forkserver starts (the first forkserver pool of this process)
        context.set_forkserver_preload(["__main__", *WORKER_PRELOAD])
    pool = _Pool(context, decode_fn, size)
    try:
        while pending or any(w.assigned for w in pool.workers):
            for worker in pool.workers:
                while worker.ready and pending and len(worker.assigned) < TASKS_PER_WORKER:
                    queued = pending.popleft()
                    worker.assigned.append(queued)
                    try:
                        worker.conn.send((queued.seq, queued.task))
                    except OSError:  # the worker just died: _step re-queues the task
                        worker.dead = True
                        break
            yield from _step(pool, pending, limit)
    finally:
        pool.close()


def _step(pool: _Pool, pending: deque[_Queued], limit: float | None) -> list[DecodeResult]:
    """Wait for the next event of any worker (message, death, time limit) and handle it."""
    results: list[DecodeResult] = []
    deadlines = [w.started_at + limit for w in pool.workers if limit and w.running]
    timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
    waitables: list[Any] = [w.conn for w in pool.workers]
    waitables += [w.process.sentinel for w in pool.workers]
    wait(waitables, timeout=timeout)
    for worker in list(pool.workers):
        _receive(worker, results)  # messages first: a result sent just before dying counts
        if worker.dead or not worker.process.is_alive():
            worker.process.join(timeout=5)
            _worker_died(pool, worker, pending, results)
            continue
        running = worker.running
        if running is not None and limit and worker.started_at is not None:
            elapsed = time.monotonic() - worker.started_at
            if elapsed >= limit:
                results.append(_timeout_result(running.task, limit, elapsed))
                worker.assigned.popleft()
                pending.extendleft(reversed(worker.assigned))
                worker.assigned.clear()
                pool.replace(worker)
    return results


def _worker_died(
    pool: _Pool, worker: _Worker, pending: deque[_Queued], results: list[DecodeResult]
) -> None:
    """Fail the task a dead worker had started, re-queue the rest, start a replacement."""
    if not worker.ready:
        pool.failed_starts += 1
        if pool.failed_starts > 2 * len(pool.workers) + 2:
            raise WorkerStartError(
                f"decode worker processes exit before they are ready "
                f"({_death_cause(worker.process.exitcode)}; their error is printed above). "
                "The decode function must be importable by name, and the main script "
                "re-importable by the workers (not `python -` or stdin)"
            )
    running = worker.running
    if running is not None:
        results.append(_crash_result(running.task, worker.process.exitcode))
        worker.assigned.popleft()
    requeue = []
    for queued in worker.assigned:
        queued.bounces += 1
        if queued.bounces >= _MAX_BOUNCES:
            results.append(_crash_result(queued.task, worker.process.exitcode))
        else:
            requeue.append(queued)
    pending.extendleft(reversed(requeue))
    worker.assigned.clear()
    pool.replace(worker)


@dataclass
class LocalEngine:
    """The local engine: ``run_local`` on ``workers`` processes; ok rows to the committer.

    Example:
        >>> import tempfile
        >>> from videorl_kit.store.tables import StoreTables
        >>> committer = BatchCommitter(StoreTables.create(tempfile.mkdtemp()))
        >>> task = DecodeTask("/missing.mp4", "video", {}, "0" * 16, "h", "k", "pyav", "1")
        >>> [r.status for r in LocalEngine(workers=1).run([task], committer)]
        ['failed']
    """

    workers: int
    decode_fn: DecodeFn = decode_task
    mp_context: str = DEFAULT_MP_CONTEXT
    item_timeout_s: float | None = DEFAULT_ITEM_TIMEOUT_S

    def run(self, tasks: Sequence[DecodeTask], committer: BatchCommitter) -> Iterator[DecodeResult]:
        """Decode ``tasks`` here; buffer every ok frames row in ``committer``."""
        results = run_local(
            tasks, workers=self.workers, decode_fn=self.decode_fn, mp_context=self.mp_context,
            item_timeout_s=self.item_timeout_s,
        )  # fmt: skip
        for result in results:
            if result.status == "ok" and result.row is not None:
                committer.add_frames(result.row)
            yield result

    def report(self) -> EngineReport:
        """Nothing to report: the local engine never falls back."""
        return EngineReport()
