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
        state, _parent, group, session = stat[stat.rfind(")") + 2 :].split()[:4]
        if state in ("Z", "X"):
            continue
        text = command.replace(b"\0", b" ").decode(errors="replace").strip()
        found.append(LiveProcess(int(entry.name), int(group), int(session), text))
    return found
