"""Smoke test: the spec benchmark runs end to end (no timing assertions)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_spec.py"


def test_benchmark_reports_every_ratio(capsys) -> None:
    spec = importlib.util.spec_from_file_location("bench_spec", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    assert module.main(["--renders", "20", "--keys", "200", "--repeat", "1", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert set(figures["ratios"]) == {
        "bounded_vs_plain_compiled_once",
        "bounded_vs_previous_path",
        "event_reader_vs_pure_python_compose",
    }
    assert all(value > 0 for value in figures["ratios"].values())
    assert figures["yaml"]["yaml_bytes"] > 200 * 10
