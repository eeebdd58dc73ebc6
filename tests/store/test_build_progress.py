"""`build-cache` without --json shows a progress bar with an ETA, then the summary table."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def test_the_progress_bar_counts_inputs_and_shows_an_eta(good_spec: Path, tmp_path: Path) -> None:
    command = "from videorl_kit.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", command, "build-cache", str(good_spec), "--store",
         str(tmp_path / "store"), "--workers", "1"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "160"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # the bar's last state: every input settled, its outcome counts, elapsed time and ETA
    bar = re.search(
        r"done .*?(\d+)/(\d+) ok (\d+) · failed (\d+) · skipped (\d+) .*ETA", done.stderr
    )
    assert bar is not None, done.stderr
    settled, total, ok, failed, skipped = map(int, bar.groups())
    assert settled == total == ok + failed + skipped and failed == 0
    assert f"n_input {total} == n_ok {ok} + n_failed 0 + n_skipped {skipped} (holds)" in done.stdout
