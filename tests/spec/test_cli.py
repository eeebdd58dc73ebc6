"""The spec commands through the real Typer app and the installed console script."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from tests.spec.conftest import MINIMAL
from videorl_kit.cli import app
from videorl_kit.core.errors import UserError

runner = CliRunner()


def test_validate_ok_and_json(write):
    path = write("t.yaml", MINIMAL)
    assert runner.invoke(app, ["validate", str(path)]).exit_code == 0
    result = runner.invoke(app, ["validate", str(path), "--json"])
    assert json.loads(result.stdout)["n_invalid"] == 0


def test_validate_prints_one_line_per_error_and_exits_1(write):
    write("_base.yaml", "budget: {video: {min_frames: 9, max_frames: 2}}\n")
    good = write("good.yaml", MINIMAL.replace("demo-count", "good"))
    bad = write("bad.yaml", "include: _base.yaml\n" + MINIMAL + "colour: red\n")
    result = runner.invoke(app, ["validate", str(good), str(bad), "_base.yaml"])
    assert result.exit_code == 1
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("bad.yaml:10: colour: unknown key 'colour'")
    assert lines[1] == "_base.yaml:1: budget.video.min_frames: 9 exceeds max_frames (2)"
    assert lines[2] == "1 of 2 specs valid"  # the result, on stdout too
    assert len(lines) == 3  # the base file itself is skipped, the good file has no output


def test_ls_lists_valid_and_invalid_specs(write):
    write("a.yaml", MINIMAL.replace("demo-count", "aaa"))
    write("b.yaml", MINIMAL + "colour: red\n")
    result = runner.invoke(app, ["ls", ".", "--json"])
    rows = json.loads(result.stdout)
    assert [(r["id"], r["ok"]) for r in rows] == [("aaa", True), (None, False)]
    assert rows[1]["problem"].startswith("b.yaml:9: colour")


def test_show_renders_one_sample(write, rows):
    path = write("t.yaml", MINIMAL)
    result = runner.invoke(app, ["show", str(path), "--sample", "1", "--json"])
    payload = json.loads(result.stdout)
    assert payload["prompt"] == "How many squares?\nPut the final answer in <answer></answer>."
    assert payload["spec"]["verifier"] == {"name": "numeric", "version": 2, "params": {}}


def test_show_missing_row_is_a_user_error(write, rows):
    result = runner.invoke(app, ["show", str(write("t.yaml", MINIMAL)), "--sample", "9"])
    assert result.exit_code == 1 and isinstance(result.exception, UserError)
    assert "no row 9" in str(result.exception)


def test_console_script_user_error_is_one_line_without_traceback(write):
    path = write("t.yaml", MINIMAL)
    proc = subprocess.run(
        [sys.executable, "-m", "videorl_kit", "show", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"error: {path.parent / 'rows.jsonl'}: data file not found"
    ]
    assert "Traceback" not in proc.stderr


def test_every_command_help_has_an_example():
    for command in ["validate", "ls", "show", "budget"]:
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "videorl-kit " + command in result.stdout
