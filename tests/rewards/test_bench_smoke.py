"""Smoke test: the reward benchmark script runs end to end (no timing assertions)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from videorl_kit.core.problem_types import ProblemType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load_benchmark(name: str = "bench_rewards"):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while executing
    spec.loader.exec_module(module)
    return module


def test_benchmark_main_runs_with_a_tiny_n(capsys) -> None:
    bench = _load_benchmark()
    code = bench.main(["--n", "20", "--code-n", "2", "--adversarial-bytes", "2000", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    reports = {r["problem_type"]: r for r in data["reports"]}
    assert set(reports) == {t.value for t in ProblemType}
    for report in reports.values():
        assert report["n"] == (2 if report["problem_type"] == "code" else 20)
        assert report["rate_per_s"] > 0 and report["adversarial_inputs"] > 0
        assert 0.0 <= report["mean_accuracy"] <= 1.0
    assert reports["code"]["worst_target_s"] is None  # code execution is exempt


def test_benchmark_table_marks_targets(capsys) -> None:
    bench = _load_benchmark()
    assert bench.main(["--n", "5", "--types", "boolean", "--adversarial-bytes", "500"]) == 0
    table = capsys.readouterr().out
    assert "boolean" in table and ">=10,000" in table
    assert "PASS" in table or "FAIL" in table


def test_generators_are_seeded_and_groups_share_their_ground_truth() -> None:
    bench = _load_benchmark()
    for ptype in bench.GENERATORS:
        first = bench.generate(ptype, 12, 4, "seed")
        assert first == bench.generate(ptype, 12, 4, "seed"), ptype
        golds = [(answer, options) for _, answer, options in first]
        assert [len(set(map(str, golds[i : i + 4]))) for i in range(0, 12, 4)] == [1, 1, 1], ptype
        assert len({response for response, _, _ in first[:4]}) > 1, ptype


def test_math_profile_runs_and_the_synthetic_golds_take_the_exact_path(capsys) -> None:
    _load_benchmark()  # profile_math imports its sibling by name
    profile = _load_benchmark("profile_math")
    assert profile.main(["--n", "16"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[1:]}
    assert set(rows) == {"synthetic", "math-like"}
    assert rows["synthetic"][1] == "100%"  # integers: every response decided without sympy
