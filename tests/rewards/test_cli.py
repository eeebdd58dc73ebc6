"""``videorl-kit reward score`` and ``reward explain`` through the real Typer app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from videorl_kit.cli import app

runner = CliRunner()

LINES = [
    {
        "problem_type": "multiple choice",
        "response": "<think>A man.</think><answer>(C)</answer>",
        "answer": "C",
    },
    {"problem_type": "numerical", "response": "3 or 4", "answer": "3"},
    "this is not json",
    "",
    {"problem_type": "boolean", "response": "yes"},
    {"problem_type": "poetry", "response": "x", "answer": "y"},
    {
        "problem_type": "temporal grounding",
        "response": "from 10 to 20 seconds",
        "answer": {"time": [15, 25]},
    },
    ["a", "list"],
    {
        "problem_type": "multiple_choice",
        "response": "<answer>Blue</answer>",
        "answer": "B",
        "options": ["A. Red", "B. Blue"],
    },
    {"problem_type": "numerical", "response": "<answer>5</answer>", "answer": "n/a"},
]


@pytest.fixture
def rollouts(tmp_path: Path) -> Path:
    path = tmp_path / "rollouts.jsonl"
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in LINES) + "\n",
        encoding="utf-8",
    )
    return path


def _json_lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def test_score_json_gives_one_object_per_line_in_order(rollouts: Path) -> None:
    result = runner.invoke(app, ["reward", "score", str(rollouts), "--json"])
    assert result.exit_code == 0, result.output
    rows = _json_lines(result.stdout)
    assert [r["line"] for r in rows] == list(range(1, 11))  # one output line per input line
    by_line = {r["line"]: r for r in rows}
    for row in rows:
        assert set(row) >= {"accuracy", "format", "overall", "status", "details"}
    assert (by_line[1]["accuracy"], by_line[1]["overall"]) == (1.0, 1.0)
    assert (
        by_line[2]["accuracy"] == 0.0
        and "several different numbers" in by_line[2]["details"]["reason"]
    )
    assert by_line[7]["accuracy"] == pytest.approx(1 / 3)
    assert by_line[9]["accuracy"] == 1.0
    assert by_line[10]["status"] == "unverifiable" and "error" not in by_line[10]["details"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (3, "line 3: not valid JSON"),
        (4, "line 4: blank line"),
        (5, "line 5: missing field(s) 'answer'"),
        (6, "line 6: unknown problem type 'poetry'"),
        (8, "line 8: expected a JSON object"),
    ],
)
def test_malformed_lines_are_unverifiable_with_the_line_number(
    rollouts: Path, line: int, message: str
) -> None:
    rows = {
        r["line"]: r
        for r in _json_lines(
            runner.invoke(app, ["reward", "score", str(rollouts), "--json"]).stdout
        )
    }
    assert rows[line]["status"] == "unverifiable"
    assert rows[line]["details"]["error"].startswith(message)


def test_score_table_and_summary(rollouts: Path, tmp_path: Path) -> None:
    out = tmp_path / "scored.jsonl"
    result = runner.invoke(
        app, ["reward", "score", str(rollouts), "--out", str(out)], terminal_width=200
    )
    assert result.exit_code == 0, result.output
    assert "10 lines: 4 graded, 6 unverifiable (5 malformed)" in result.stdout
    assert f"wrote 10 results to {out}" in result.stdout
    assert len(_json_lines(out.read_text(encoding="utf-8"))) == 10


def test_score_with_a_spec_uses_its_verifier_and_weights(tmp_path: Path) -> None:
    (tmp_path / "data.jsonl").write_text("", encoding="utf-8")
    spec = tmp_path / "count.yaml"
    spec.write_text(
        "id: cli-count\nversion: 1\nproblem_type: numerical\ndata: {path: data.jsonl}\n"
        "verifier: {name: numeric, version: 2, params: {abs_tol: 0.5}}\n"
        "reward: {format: none, weights: {accuracy: 0.5, format: 0.5}}\n"
        'prompt: {template: "{{ question }}"}\n',
        encoding="utf-8",
    )
    rollouts = tmp_path / "r.jsonl"
    rollouts.write_text(
        json.dumps({"response": "about 12.4", "answer": "12"})
        + "\n"
        + json.dumps({"problem_type": "boolean", "response": "yes", "answer": "yes"})
        + "\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["reward", "score", str(rollouts), "--spec", str(spec), "--json"])
    assert result.exit_code == 0, result.output
    first, second = _json_lines(result.stdout)
    assert (first["accuracy"], first["format"], first["overall"]) == (1.0, 1.0, 1.0)
    assert (
        second["status"] == "unverifiable"
        and "problem type 'boolean' is not task cli-count's numerical" in second["details"]["error"]
    )


def test_score_missing_file_is_a_one_line_user_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["reward", "score", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 1
    assert "no such file" in str(result.exception)


def test_explain_shows_the_extraction_steps() -> None:
    result = runner.invoke(
        app,
        [
            "reward",
            "explain",
            "--type",
            "mcq",
            "--response",
            "A man opens the door. The answer is (C).",
            "--answer",
            "C",
        ],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    for text in ("final statement", "(C)", "parsed prediction", "no <answer> block", "0.9000"):
        assert text in result.stdout


def test_explain_json_with_options() -> None:
    result = runner.invoke(
        app,
        [
            "reward",
            "explain",
            "--type",
            "multiple choice",
            "--response",
            "<answer>Blue</answer>",
            "--answer",
            "B",
            "--options",
            "A. Red",
            "--options",
            "B. Blue",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    steps = json.loads(result.stdout)
    assert steps["options"] == ["A. Red", "B. Blue"]
    assert steps["result"]["accuracy"] == 1.0


def test_explain_a_line_of_a_file(rollouts: Path) -> None:
    result = runner.invoke(app, ["reward", "explain", "--line", f"{rollouts}:7", "--json"])
    assert result.exit_code == 0, result.output
    steps = json.loads(result.stdout)
    assert steps["problem_type"] == "temporal_grounding"
    assert steps["result"]["details"]["pred"] == [10.0, 20.0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--response", "x", "--answer", "y"], "give --type"),
        (["--type", "poetry", "--response", "x", "--answer", "y"], "unknown problem type"),
        (["--type", "ocr"], "give --response and --answer"),
        (["--line", "nofile.jsonl"], "FILE:N"),
        (["--line", "nofile.jsonl:3"], "cannot read"),
    ],
)
def test_explain_user_errors(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["reward", "explain", *args])
    assert result.exit_code == 1
    assert message in str(result.exception)


def test_help_has_examples() -> None:
    for command in ("score", "explain"):
        result = runner.invoke(app, ["reward", command, "--help"], terminal_width=200)
        assert result.exit_code == 0
        assert "videorl-kit reward" in result.stdout
