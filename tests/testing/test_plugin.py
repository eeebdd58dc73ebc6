"""The ``verifier_contract`` fixture (pytest11 entry point): a plugin author's few lines of
test give one test per property, and a broken one fails with its shrunk case line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AUTHORS_TEST = """
def test_my_verifier_keeps_the_contract(verifier_contract):
    verifier_contract(
        "tests.testing.broken_verifiers:AcceptsHedges", properties=["never_raises", "hedges"]
    )
"""


def test_the_fixture_runs_one_test_per_property_and_shows_the_case_line(tmp_path: Path) -> None:
    test_file = tmp_path / "test_mine.py"
    test_file.write_text(AUTHORS_TEST, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rA",
            "-p",
            "no:cacheprovider",
            "--verifier-seed",
            "1",
            "--verifier-examples",
            "30",
            str(test_file),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip  (no -p for the plugin: the kit's pytest11 entry point loads it)
    out = result.stdout
    outcomes = dict(re.findall(r"^(PASSED|FAILED) test_mine\.py::\w+\[(\w+)\]", out, re.M))
    assert {p: o for o, p in outcomes.items()} == {"never_raises": "PASSED", "hedges": "FAILED"}
    assert "1 failed, 1 passed, 10 skipped" in out, out[-3000:] + result.stderr[-2000:]
    assert result.returncode == 1
    assert 'case line: {"id": "check-hedges-1", "problem_type": "numerical"' in out, out[-3000:]
    assert "rerun this test with: pytest --verifier-seed 1" in out
