"""The cache benchmark runs end to end on tiny synthetic videos (figures, not timings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_bench_cache_runs_on_tiny_synthetic_videos(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    command = [
        sys.executable, str(REPO / "benchmarks" / "bench_cache.py"), "--quick",
        "--synthetic-only", "--n-synthetic", "2", "--size", "96x64", "--seconds", "1",
        "--repeats", "1", "--workers", "1", "--max-frames", "4", "--json", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "a_cached_vs_decode_speedup" in done.stdout
    results = json.loads(out.read_text())["results"]
    assert [r["set"] for r in results] == ["synthetic"]
    figures = results[0]
    for key in (
        "a_cached_vs_decode_speedup",
        "b_cached_vs_raw_read_throughput",
        "b_without_verify_vs_raw_read_throughput",
        "b_first_read_vs_raw_read_throughput",
        "b_lance_reader_vs_raw_read_throughput",
        "c_frame_bytes_vs_float32",
        "c_table_folder_vs_peer_folder",
        "d_build_vs_decode_all_frames_throughput",
    ):
        assert figures[key] > 0, key
    # uint8 instead of float32: at most a quarter of the frame bytes; whole folders add
    # per-row metadata, large next to these tiny frames
    assert figures["c_frame_bytes_vs_float32"] <= 0.25
    assert figures["c_frame_bytes_stored"] <= figures["frame_bytes_uint8"]
    assert figures["c_table_folder_vs_peer_folder"] < 1.0
    assert figures["videos"] == 2 and figures["frames_cached"] >= 8
