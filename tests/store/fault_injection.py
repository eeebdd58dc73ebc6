"""Picklable decode functions that inject faults, for the builder's robustness tests.

They wrap the real decoder (:func:`videorl_kit.store.worker.decode_task`) and misbehave only
for files whose name contains a marker, so the rest of a build runs for real.
"""

from __future__ import annotations

import os
import signal
import time

from videorl_kit.store.worker import DecodeResult, DecodeTask, decode_task, run_task

CRASH_MARKER = "crash"
RAISE_MARKER = "raise"
HANG_MARKER = "hang"
SEND_KILL_MARKER = "oom"


def segfault_on_marker(task: DecodeTask) -> DecodeResult:
    """Kill the worker with SIGSEGV when decoding a file whose name contains ``crash``."""
    if CRASH_MARKER in os.path.basename(task.source_uri):
        os.kill(os.getpid(), signal.SIGSEGV)
    return decode_task(task)


class DiesWhenPickled:
    """SIGKILLs the process that pickles it: a worker killed while it sends its result."""

    def __reduce__(self) -> tuple:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


def die_while_sending_on_marker(task: DecodeTask) -> DecodeResult:
    """The real decode; for a file whose name contains ``oom``, the worker is killed while it
    pickles the result for the build (as an out-of-memory kill of a large result would)."""
    result = decode_task(task)
    if SEND_KILL_MARKER in os.path.basename(task.source_uri):
        result.extra["poison"] = DiesWhenPickled()
    return result


def _explode(task: DecodeTask) -> None:
    raise RuntimeError(f"injected failure while decoding {os.path.basename(task.source_uri)}")


def raise_on_marker(task: DecodeTask) -> DecodeResult:
    """Raise inside the decode of files whose name contains ``raise``."""
    if RAISE_MARKER in os.path.basename(task.source_uri):
        return run_task(task, _explode)
    return decode_task(task)


def slow_decode(task: DecodeTask) -> DecodeResult:
    """The real decode, 0.4 s slower (gives a crash test time to kill a build mid-way)."""
    time.sleep(0.4)
    return decode_task(task)


def hang_on_marker(task: DecodeTask) -> DecodeResult:
    """Never return (sleep forever) when decoding a file whose name contains ``hang``.

    Models a decoder stuck in a loop or on a read: the process stays alive and silent.
    """
    if HANG_MARKER in os.path.basename(task.source_uri):
        while True:
            time.sleep(3600)
    return decode_task(task)


def logged_decode(task: DecodeTask, *, log_dir: str) -> DecodeResult:
    """The real decode, held 0.3 s, then one record (pid, start, end) per item in ``log_dir``.

    The records show which process decoded each item and when, so a test can check that
    ``workers=N`` really decodes N items at the same time. Pass it as
    ``functools.partial(logged_decode, log_dir=...)`` (picklable; an environment variable
    would not reach workers forked from an already running fork server).
    """
    started = time.time()
    time.sleep(0.3)
    result = decode_task(task)
    ended = time.time()
    name = os.path.basename(task.source_uri)
    with open(os.path.join(log_dir, f"{name}.log"), "w") as record:
        record.write(f"{os.getpid()} {started} {ended}\n")
    return result
