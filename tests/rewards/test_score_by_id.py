"""`reward score FILE --spec SPEC` with lines of only {"id", "response"}: the spec's data
supply gold, options and problem type, and each row gets its own type's verifier."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.public_layout import MIXED_ROWS, write_mixed
from tests.rewards.test_task_reward import GOOD
from videorl_kit.cli import app

runner = CliRunner()


def test_lines_with_only_id_and_response(tmp_path: Path) -> None:
    rows = [*MIXED_ROWS, {**MIXED_ROWS[0], "problem_id": 999, "problem_type": None}]
    spec = write_mixed(tmp_path, rows)
    lines = [{"id": str(r["problem_id"]), "response": g} for r, g in zip(rows, GOOD, strict=False)]
    lines += [
        {"id": 101, "response": "<answer>C</answer>"},  # an int id matches the "101" sample
        {"id": "nope", "response": "<answer>B</answer>"},
        {"id": "999", "response": "<answer>B</answer>"},  # a skipped row
        {"response": "<answer>B</answer>", "answer": "B", "problem_type": "mcq"},
    ]
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps(line) + "\n" for line in lines) + "\n")
    result = runner.invoke(app, ["reward", "score", str(responses), "--spec", str(spec), "--json"])
    assert result.exit_code == 0, result.output
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["line"] for r in out] == list(range(1, 11))
    assert [r["overall"] for r in out[:5]] == [1.0] * 5
    assert [r["details"]["verifier"] for r in out[:5]] == [
        "choice@2", "numeric@2", "wer@2", "rouge@2", "mra@2",
    ]  # fmt: skip
    assert [r["problem_type"] for r in out[:2]] == ["multiple_choice", "numerical"]
    assert out[5]["accuracy"] == 0.0 and out[5]["status"] == "ok"
    assert out[6]["status"] == "unverifiable"
    assert out[6]["details"]["error"] == (
        "line 7: unknown sample id 'nope': not in the data of task mixed"
    )
    assert out[7]["status"] == "unverifiable"
    assert "sample is skipped: row 6 (id '999'): no problem type" in out[7]["details"]["reason"]
    assert out[8]["overall"] == 1.0  # a full line still works with --spec
    assert out[9]["details"]["error"] == "line 10: blank line"


def test_id_lines_need_a_spec(tmp_path: Path) -> None:
    responses = tmp_path / "r.jsonl"
    responses.write_text('{"id": "1", "response": "B"}\n')
    result = runner.invoke(app, ["reward", "score", str(responses), "--json"])
    (row,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert (
        row["details"]["error"] == "line 1: a line with only 'id' and 'response' needs --spec SPEC"
    )
