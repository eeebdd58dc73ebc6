"""The training benchmark runs end to end on tiny budgets (figures, not timings): both parts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    """Run benchmarks/bench_train.py with ``args``; it must succeed."""
    command = [sys.executable, str(REPO / "benchmarks" / "bench_train.py"), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.slow
def test_bench_train_speed_part_runs(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = bench("--part", "speed", "--steps", "2", "--budget", "tiny", "--json", str(out))
    assert "decode / cache" in done.stdout
    speed = json.loads(out.read_text())["speed"]
    assert all(speed[f"seconds_per_step_{way}"] > 0 for way in ("native", "frames", "decode"))
    assert speed["same_rewards"]  # the same frames from the cache and decoded: the same rewards
    assert speed["decode_over_cache"] > 0 and speed["frames_over_native"] > 0


@pytest.mark.slow
def test_bench_train_learning_part_runs(tmp_path: Path) -> None:
    """A warm-up and two GRPO steps; the curve goes where it is told, not over the recorded one."""
    out, curve = tmp_path / "bench.json", tmp_path / "curve.png"
    recorded = (REPO / "benchmarks" / "train_learning_curve.png").read_bytes()
    bench("--part", "learning", "--learning-steps", "2", "--warmup-steps", "2",
          "--curve", str(curve), "--json", str(out))  # fmt: skip
    learning = json.loads(out.read_text())["learning"]
    assert learning["grpo_steps"] == 2 and len(learning["reward_per_step"]) == 2
    assert all(0.0 <= r <= 1.0 for r in learning["reward_per_step"])
    assert curve.read_bytes().startswith(b"\x89PNG")
    assert (REPO / "benchmarks" / "train_learning_curve.png").read_bytes() == recorded
