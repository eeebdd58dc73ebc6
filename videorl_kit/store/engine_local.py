"""Run decode tasks in N local worker processes, surviving worker crashes.

Tasks go to a :class:`concurrent.futures.ProcessPoolExecutor` (``forkserver`` context by
default, never ``fork``: decoders and Lance start threads). A crashed worker (segfault,
out-of-memory kill) breaks the whole pool and every task then in flight with it, without
saying which task was guilty. The engine therefore re-runs the tasks that were in flight,
one at a time in a fresh pool: a task that crashes alone is reported as failed with
:class:`~videorl_kit.store.worker.WorkerCrashError`, the others complete normally.

Example:
    >>> from videorl_kit.store.worker import DecodeTask, decode_task
    >>> task = DecodeTask("/missing.mp4", "video", {}, "0" * 16, "h", "k", "pyav", "1")
    >>> [r.status for r in run_local([task], workers=1, decode_fn=decode_task)]
    ['failed']
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from videorl_kit.store.worker import (
    DecodeFn,
    DecodeResult,
    DecodeTask,
    ErrorInfo,
    WorkerCrashError,
)

DEFAULT_MP_CONTEXT = "forkserver"


def _exit_with_parent(parent_pid: int, interval_s: float = 1.0) -> None:
    """Worker initializer: exit when the build process is gone (e.g. SIGKILLed).

    Pool workers would otherwise wait forever on their task queue as orphans.
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


def _crash_result(task: DecodeTask, exc: BaseException) -> DecodeResult:
    error = WorkerCrashError(
        f"{task.source_uri}: the worker process died while decoding it "
        f"({type(exc).__name__}: {exc}); likely a decoder crash (segfault) or out-of-memory kill"
    )
    return DecodeResult(task, "failed", error=ErrorInfo.from_exception(error))


def _raised_result(task: DecodeTask, exc: BaseException) -> DecodeResult:
    return DecodeResult(task, "failed", error=ErrorInfo.from_exception(exc))


def run_local(
    tasks: Iterable[DecodeTask],
    *,
    workers: int,
    decode_fn: DecodeFn,
    mp_context: str = DEFAULT_MP_CONTEXT,
    max_in_flight: int | None = None,
) -> Iterator[DecodeResult]:
    """Yield one :class:`DecodeResult` per task, in completion order.

    ``decode_fn`` must be a picklable top-level function. At most ``max_in_flight`` tasks
    (default ``2 × workers``) are submitted at once, so decoded frames waiting to be
    committed stay bounded.

    Example:
        >>> results = run_local(tasks, workers=2, decode_fn=decode_task)   # doctest: +SKIP
        >>> sorted(r.status for r in results)                            # doctest: +SKIP
        ['failed', 'ok', 'ok']
    """
    workers = max(1, int(workers))
    limit = max_in_flight or 2 * workers
    pending: deque[DecodeTask] = deque(tasks)
    suspects: deque[DecodeTask] = deque()
    context = multiprocessing.get_context(mp_context)
    while pending or suspects:
        isolate = bool(suspects)
        queue = suspects if isolate else pending
        in_flight: dict[Future[DecodeResult], DecodeTask] = {}
        pool = ProcessPoolExecutor(
            max_workers=1 if isolate else workers,
            mp_context=context,
            initializer=_exit_with_parent,
            initargs=(os.getpid(),),
        )
        broken = False
        try:
            while queue or in_flight:
                while queue and len(in_flight) < (1 if isolate else limit):
                    task = queue.popleft()
                    in_flight[pool.submit(decode_fn, task)] = task
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    task = in_flight[future]
                    exc = future.exception()
                    if isinstance(exc, BrokenProcessPool):
                        broken = True
                        break
                    del in_flight[future]
                    yield future.result() if exc is None else _raised_result(task, exc)
                if broken:
                    break
        finally:
            pool.shutdown(wait=not broken, cancel_futures=True)
        if broken:
            for future, task in in_flight.items():
                exc = future.exception() if future.done() else None
                if future.done() and exc is None:
                    yield future.result()
                elif exc is not None and not isinstance(exc, BrokenProcessPool):
                    yield _raised_result(task, exc)
                elif isolate:
                    yield _crash_result(task, exc or RuntimeError("pool broke"))
                else:
                    suspects.append(task)
