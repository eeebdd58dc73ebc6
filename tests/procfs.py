"""Live processes as ``/proc`` shows them, for tests that check from outside what a kill left."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LiveProcess:
    """One running (not zombie, not dead) process."""

    pid: int
    process_group: int
    session: int
    command: str
    parent: int = 0
    started_ticks: int = 0  # start time in clock ticks since boot (/proc/PID/stat field 22)


def live_processes() -> list[LiveProcess]:
    """Every live process on the machine; one that exits during the scan is left out.

    Example:
        >>> import os
        >>> any(p.pid == os.getpid() for p in live_processes())
        True
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:  # exited meanwhile
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        state, parent, group, session, started = fields[0], *fields[1:4], fields[19]
        if state in ("Z", "X"):
            continue
        text = command.replace(b"\0", b" ").decode(errors="replace").strip()
        found.append(
            LiveProcess(int(entry.name), int(group), int(session), text, int(parent), int(started))
        )
    return found
