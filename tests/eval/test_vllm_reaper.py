"""The watchdog that stops vLLM's engine processes when the eval that started them is killed
(vLLM leaves them running otherwise): it acts on the starter's death however it died, stays
quiet when dismissed, escalates to SIGKILL, and never signals a reused pid."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from videorl_kit.eval.backends.orphan_reaper import (
    OrphanReaper,
    child_processes,
    start_ticks,
    stop,
)

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]
#: Ignores SIGTERM, as a process stuck in a native call does in effect.
STUBBORN = [
    sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(1, flush=True); "
    "time.sleep(600)",
]  # fmt: skip

STARTER = """
import subprocess, sys, time
from videorl_kit.eval.backends.orphan_reaper import OrphanReaper, start_ticks
child = subprocess.Popen({command!r})
reaper = OrphanReaper([(child.pid, start_ticks(child.pid))])
if {dismiss!r}:
    reaper.dismiss()
print(child.pid, flush=True)
time.sleep(600)
"""


def _gone(pid: int, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while start_ticks(pid) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    return start_ticks(pid) is None


@pytest.fixture
def start():
    """Start a starter process (its watched child's pid is returned); kill what is left."""
    started: list[int] = []
    starters: list[subprocess.Popen] = []

    def run(*, dismiss: bool = False, command: list[str] = SLEEPER) -> tuple[subprocess.Popen, int]:
        code = STARTER.format(command=command, dismiss=dismiss)
        starter = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        starters.append(starter)
        started.append(int(starter.stdout.readline()))
        return starter, started[-1]

    yield run
    for starter in starters:
        starter.kill()
        starter.wait()
    stop([(pid, ticks) for pid in started if (ticks := start_ticks(pid)) is not None], 1.0)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_the_engine_is_stopped_when_its_starter_is_killed(start, how):
    starter, child = start()
    assert start_ticks(child) is not None
    starter.send_signal(how)  # no cleanup runs: SIGKILL, or SIGTERM's default action
    starter.wait()
    assert _gone(child)


def test_a_dismissed_watchdog_leaves_the_processes_alone(start):
    starter, child = start(dismiss=True)
    starter.kill()
    starter.wait()
    time.sleep(2)
    assert start_ticks(child) is not None


def test_sigterm_then_sigkill_and_never_a_reused_pid():
    stubborn = subprocess.Popen(STUBBORN, stdout=subprocess.PIPE, text=True)
    other = subprocess.Popen(SLEEPER)
    try:
        stubborn.stdout.readline()  # its SIGTERM handler is set
        ticks = start_ticks(stubborn.pid)
        clock = time.monotonic()
        stop([(stubborn.pid, ticks), (other.pid, start_ticks(other.pid) + 1)], grace_s=1.0)
        assert stubborn.wait(timeout=10) == -signal.SIGKILL
        assert time.monotonic() - clock >= 1.0  # SIGTERM first, SIGKILL after the grace
        assert other.poll() is None  # another start time: another process, not signalled
    finally:
        other.kill()
        other.wait()
        stubborn.kill()
        stubborn.wait()


def test_child_processes_lists_this_process_children_only():
    child = subprocess.Popen(SLEEPER)
    try:
        assert (child.pid, start_ticks(child.pid)) in child_processes()
        assert all(pid != child.pid for pid, _ in child_processes(parent=1))
    finally:
        child.kill()
        child.wait()
    assert all(pid != child.pid for pid, _ in child_processes())


def test_nothing_to_watch_starts_no_watchdog():
    before = child_processes()
    OrphanReaper([]).dismiss()
    assert child_processes() == before
