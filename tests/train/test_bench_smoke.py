"""The training benchmark runs end to end on tiny budgets (figures, not timings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_bench_train_speed_part_runs(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    command = [
        sys.executable, str(REPO / "benchmarks" / "bench_train.py"), "--part", "speed",
        "--steps", "2", "--budget", "tiny", "--json", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "decode / cache" in done.stdout
    speed = json.loads(out.read_text())["speed"]
    assert speed["seconds_per_step_cache"] > 0 and speed["seconds_per_step_decode"] > 0
    assert speed["same_rewards"]  # the same frames both ways: the same rewards
