"""A lone surrogate anywhere in the input never crashes a command or loses a line of output.

``"\\ud800"`` in a JSON line decodes to a string with no UTF-8 form; writing it raw to a
UTF-8 stdout or file raised ``UnicodeEncodeError`` and lost every later line. These tests
run the real console script (a subprocess with a strict UTF-8 stdout), as a user would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spec.conftest import MINIMAL

REPO = Path(__file__).resolve().parents[2]
LINES = [
    {"problem_type": "ocr", "response": "<answer>\ud800 x</answer>", "answer": "x"},
    {"problem_type": "ocr", "response": "<answer>x</answer>", "answer": "x"},
    {"problem_type": "multiple choice", "response": "<answer>\udcff</answer>", "answer": "A",
     "options": ["A. \ud83d", "B. b"]},
    {"problem_type": "ocr", "response": "<answer>y</answer>", "answer": "\udfff"},
]  # fmt: skip


def kit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONIOENCODING": "utf-8:strict"}
    return subprocess.run(
        [sys.executable, "-m", "videorl_kit", *args],
        cwd=cwd, env=env, capture_output=True, text=True, errors="surrogateescape", timeout=300,
    )  # fmt: skip


@pytest.fixture
def responses(tmp_path: Path) -> Path:
    path = tmp_path / "responses.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES), encoding="utf-8")
    return path


def test_reward_score_json_writes_one_line_per_input(responses, tmp_path):
    proc = kit("reward", "score", str(responses), "--json", "--out", "scored.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    printed = [json.loads(line) for line in proc.stdout.splitlines()]
    written = [json.loads(line) for line in (tmp_path / "scored.jsonl").read_text().splitlines()]
    assert printed == written and [row["line"] for row in printed] == [1, 2, 3, 4]
    assert printed[0]["details"]["extracted"] == "\ud800 x"  # escaped, and read back exactly
    assert printed[1]["status"] == "ok" and printed[1]["accuracy"] == 1.0


def test_reward_score_table_and_explain_do_not_crash(responses, tmp_path):
    table = kit("reward", "score", str(responses), cwd=tmp_path)
    assert table.returncode == 0 and "4 lines: 3 graded, 1 unverifiable" in table.stdout
    for as_json in ([], ["--json"]):
        proc = kit("reward", "explain", "--line", f"{responses}:3", *as_json, cwd=tmp_path)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr


@pytest.fixture
def spec_dir(tmp_path: Path) -> Path:
    (tmp_path / "t.yaml").write_text(MINIMAL)
    rows = [
        {"id": "s0", "problem": "What is \ud800?", "answer": 1},
        {"id": "s1", "problem": "ok", "answer": 1, "videos": ["\udcff.mp4"]},
        {"id": "s2", "problem": "fine", "answer": 2},
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_show_and_build_cache_skip_rows_without_a_utf8_form(spec_dir):
    shown = kit("show", "t.yaml", "--sample", "0", cwd=spec_dir)
    assert shown.returncode == 1 and shown.stderr.splitlines() == [
        "error: t.yaml: row 1: field 'problem' is not valid Unicode text (a lone surrogate)"
    ]
    proc = kit("build-cache", "t.yaml", "--store", "store", "--json", cwd=spec_dir)
    assert proc.returncode == 3, proc.stderr  # 3: no media input ended ok (none are usable)
    summary = json.loads(proc.stdout)
    assert (summary["n_input"], summary["n_skipped_rows"], summary["n_skipped"]) == (2, 2, 2)
    assert (summary["samples"]["n_ready"], summary["samples"]["n_skipped"]) == (1, 2)
    assert summary["samples"]["skips"]["malformed_row"]["examples"] == [
        "demo-count row 1: field 'problem' is not valid Unicode text (a lone surrogate)",
        "demo-count row 2: field 'videos' is not valid Unicode text (a lone surrogate)",
    ]
    text = kit("build-cache", "t.yaml", "--store", "store", cwd=spec_dir)
    assert text.returncode == 3 and "Traceback" not in text.stderr


def test_a_file_name_that_is_not_utf8_prints_on_one_line(tmp_path):
    name = os.fsdecode(b"\xff.yaml")  # surrogateescape: '\udcff.yaml'
    (tmp_path / name).write_text(MINIMAL + "colour: red\n")
    proc = kit("validate", name, cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    line, summary = proc.stdout.splitlines()
    assert line.startswith("'\\udcff.yaml':9: colour: unknown key 'colour'")
    assert summary == "0 of 1 specs valid"


def test_a_verifier_that_raises_costs_only_its_line(tmp_path, monkeypatch):
    """Fault injection: the real verifier, made to raise on one response."""
    from typer.testing import CliRunner

    from videorl_kit.cli import app
    from videorl_kit.rewards import router

    real = router.reward_function_for

    class RaisesOnBoom:
        def __init__(self, fn):
            self.fn, self.problem_type = fn, fn.problem_type

        def __call__(self, response, answer, options=None):
            if response == "boom":
                raise RuntimeError("verifier bug")
            return self.fn(response, answer, options)

    monkeypatch.setattr(router, "reward_function_for", lambda *a, **k: RaisesOnBoom(real(*a, **k)))
    lines = tmp_path / "lines.jsonl"
    rows = [{"problem_type": "ocr", "response": r, "answer": "x"} for r in ("x", "boom", "x")]
    lines.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = CliRunner().invoke(app, ["reward", "score", str(lines), "--json"])
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.exit_code == 0 and [row["line"] for row in printed] == [1, 2, 3]
    assert printed[1]["details"]["error"] == "line 2: scoring failed (RuntimeError)"
    assert printed[0]["accuracy"] == printed[2]["accuracy"] == 1.0
