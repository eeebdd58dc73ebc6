"""Stop an engine's processes when the process that started them dies without closing them.

vLLM's engine core runs in a child process that does not notice its parent's death: an eval
killed by SIGKILL or SIGTERM (the OOM killer, a scheduler's time limit) leaves the engine
running, holding its memory (on a GPU, the GPU's), and the resumed run then finds no room
(vLLM issue #55510). :class:`OrphanReaper` starts a small watchdog process for the engine's
processes: if the starting process exits without calling :meth:`OrphanReaper.dismiss`
(which ``close()`` does after shutting the engine down), the watchdog sends each of them
SIGTERM, vLLM's orderly shutdown, and SIGKILL after :data:`GRACE_S` seconds. A process is
only signalled while it is still the one that was handed over (same pid and start time), so a
reused pid is never hit. Linux only (``/proc``); elsewhere nothing is watched.

The watchdog is this module run as a program: ``python -m
videorl_kit.eval.backends.orphan_reaper PID:START_TICKS...``; it waits on its standard input
(``dismiss`` or end of file).

Example (a process outliving its starter is stopped):
    >>> import subprocess, sys, time
    >>> starter = subprocess.Popen([sys.executable, "-c", (
    ...     "import subprocess, sys, time\\n"
    ...     "from videorl_kit.eval.backends.orphan_reaper import OrphanReaper, start_ticks\\n"
    ...     "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\\n"
    ...     "OrphanReaper([(child.pid, start_ticks(child.pid))])\\n"
    ...     "print(child.pid, flush=True)\\n")], stdout=subprocess.PIPE, text=True)
    >>> orphan = int(starter.stdout.readline())
    >>> starter.wait()  # exits without dismissing: the watchdog stops the orphan
    0
    >>> deadline = time.monotonic() + 30
    >>> while start_ticks(orphan) is not None and time.monotonic() < deadline:
    ...     time.sleep(0.1)
    >>> start_ticks(orphan) is None
    True
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

GRACE_S = 15.0
"""Seconds between SIGTERM and SIGKILL (vLLM's engine shuts its workers down in a few)."""

DISMISS = b"dismiss\n"


def start_ticks(pid: int) -> int | None:
    """When a live process started (clock ticks since boot), or None if it is gone.

    Example:
        >>> start_ticks(os.getpid()) > 0
        True
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    return None if fields[0] in ("Z", "X") else int(fields[19])


def child_processes(parent: int | None = None) -> set[tuple[int, int]]:
    """``(pid, start_ticks)`` of the live children of ``parent`` (default: this process).

    Example:
        >>> import subprocess, sys
        >>> child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        >>> (child.pid, start_ticks(child.pid)) in child_processes()
        True
        >>> child.kill(); child.wait()
        -9
    """
    parent = os.getpid() if parent is None else parent
    found = set()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # exited meanwhile
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(fields[1]) == parent and fields[0] not in ("Z", "X"):
            found.add((int(entry.name), int(fields[19])))
    return found


class OrphanReaper:
    """A watchdog that stops ``processes`` (``(pid, start_ticks)`` pairs) if this process
    dies before :meth:`dismiss`."""

    def __init__(self, processes: Sequence[tuple[int, int]]):
        self._watchdog: subprocess.Popen[bytes] | None = None
        if not processes or not Path("/proc/self/stat").exists():
            return
        self._watchdog = subprocess.Popen(
            [sys.executable, "-m", __name__, *(f"{pid}:{ticks}" for pid, ticks in processes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a signal to this process group leaves it to do its job
        )

    def dismiss(self) -> None:
        """The processes were shut down properly: end the watchdog without it acting."""
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is None or watchdog.stdin is None:
            return
        with contextlib.suppress(BrokenPipeError):  # gone already
            watchdog.stdin.write(DISMISS)
            watchdog.stdin.close()
        watchdog.wait(timeout=30)


def stop(processes: Sequence[tuple[int, int]], grace_s: float = GRACE_S) -> None:
    """SIGTERM each process still running as handed over, SIGKILL those left after
    ``grace_s`` seconds."""

    def running() -> list[int]:
        return [pid for pid, ticks in processes if start_ticks(pid) == ticks]

    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in running():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace_s
        while running() and time.monotonic() < deadline:
            time.sleep(0.2)


def main(argv: Sequence[str]) -> None:
    """The watchdog: wait for ``dismiss`` or the end of standard input (its starter died)."""
    processes = [(int(pid), int(ticks)) for pid, ticks in (a.split(":") for a in argv)]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the starter's to handle
    if sys.stdin.buffer.readline() != DISMISS:
        stop(processes)


if __name__ == "__main__":
    main(sys.argv[1:])
