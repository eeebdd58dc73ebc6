"""The evaluator benchmark runs end to end on one tiny clip and reports both ratios."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.eval.conftest import ROOT


def test_bench_eval_smoke(tmp_path):
    out = tmp_path / "figures.json"
    result = subprocess.run(
        [sys.executable, "benchmarks/bench_eval.py", "--clips", "1", "--seconds", "2",
         "--repeats", "1", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    figures = json.loads(out.read_text())
    assert figures["a_ratio"] > 0 and figures["b_ratio"] > 0
    assert "(a) inputs from the cache" in result.stdout and "(b) batched (8)" in result.stdout
