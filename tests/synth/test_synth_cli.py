"""``videorl-kit synth`` through the Typer app and as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from videorl_kit.cli import app
from videorl_kit.core.errors import UserError

runner = CliRunner()


def test_synth_json_summary(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["synth", str(tmp_path), "--n", "1", "--seed", "5", "-t", "count", "-t", "code", "--json"],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["seed"] == 5 and payload["n_per_task"] == 1 and payload["n_rows"] == 2
    assert payload["tasks"]["code"]["data_type"] == "text"
    assert payload["out_dir"] == str(tmp_path) and payload["seconds"] >= 0
    assert "files" not in payload
    assert (tmp_path / "count.jsonl").is_file() and (tmp_path / "videos/count_0000.mp4").is_file()


def test_synth_table_output(tmp_path: Path) -> None:
    result = runner.invoke(app, ["synth", str(tmp_path), "-n", "1", "-t", "image_spatial"])
    assert result.exit_code == 0, result.output
    assert "image_spatial.jsonl" in result.stdout and "spatial_grounding" in result.stdout
    assert "1 rows, 0 videos, 1 images (seed 0, generator v1)" in result.stdout


def test_synth_bad_count_is_a_user_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["synth", str(tmp_path), "--n", "0"])
    assert result.exit_code == 1 and isinstance(result.exception, UserError)
    assert str(result.exception) == "--n must be at least 1, got 0"


def test_synth_help_has_examples() -> None:
    result = runner.invoke(app, ["synth", "--help"])
    assert result.exit_code == 0
    assert "videorl-kit synth data/synth --n 32 --seed 1 --json" in result.stdout


def test_console_script_reports_unknown_task_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "videorl_kit", "synth", str(tmp_path), "--task", "colour"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "error: unknown synth task(s) colour; choose from multiple_choice, count, regression, "
        "boolean, temporal, spatial, spatiotemporal, tracking, ocr, caption, math, critic, "
        "image_multiple_choice, image_count, image_ocr, image_spatial, code"
    ]
    assert "Traceback" not in done.stderr


def test_console_script_generates_files(tmp_path: Path) -> None:
    out = tmp_path / "nested" / "synth"
    done = subprocess.run(
        [sys.executable, "-m", "videorl_kit", "synth", str(out), "-n", "1", "-t", "ocr", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["n_videos"] == 1
    assert json.loads((out / "manifest.json").read_text())["files"] == ["videos/ocr_0000.mp4"]
