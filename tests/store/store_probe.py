"""Reading a store from the outside while, or after, a build is killed (crash tests)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import lance

from videorl_kit.store.tables import StoreTables


def frames_content(store: Path) -> list[tuple[str, str]]:
    """Sorted ``(cache_key, frames_sha256)`` of every frames row, duplicates included."""
    table = StoreTables(store).table("frames").to_table(columns=["cache_key", "frames_sha256"])
    keys = table.column("cache_key").to_pylist()
    return sorted(zip(keys, table.column("frames_sha256").to_pylist(), strict=True))


def committed_rows(store: Path) -> int:
    """Rows of the frames table at its latest version; 0 while it does not exist yet."""
    uri = store / "frames.lance"
    if not uri.is_dir():
        return 0
    try:
        return lance.dataset(str(uri)).count_rows()
    except (OSError, ValueError):  # being created
        return 0


def kill_after_first_commit(script: str, spec: Path, store: Path, repo: Path) -> int:
    """Run ``python -c script spec store`` in a session of its own and SIGKILL it as soon as
    its first batch (at least 2 frames rows) is committed; return the session's id.

    The build's helper processes are the caller's to check; if the build ends or never
    commits, the whole session is killed and the test fails with the build's stderr.
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(spec), str(store)],
        cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while committed_rows(store) < 2:
            assert proc.poll() is None, proc.communicate()[1].decode()[-2000:]
            assert time.monotonic() < deadline, "the build never committed"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        raise
    return proc.pid
