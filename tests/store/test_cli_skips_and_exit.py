"""build-cache exit codes and skip listings; cache status lists skips by rule with rows."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.store.spec_files import video_rows, write_spec
from videorl_kit.cli import app

runner = CliRunner()


def build(spec: Path, store: Path, *extra: str):
    command = ["build-cache", str(spec), "--store", str(store), "--workers", "1", *extra]
    return runner.invoke(app, command, terminal_width=200)


def test_a_build_where_every_input_failed_exits_3(spec_dir: Path, tmp_path: Path) -> None:
    spec = write_spec(spec_dir, "all-bad", video_rows(["zero.mp4", "text.mp4"]))
    result = build(spec, tmp_path / "s", "--json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["n_failed"] == 2  # the summary is still printed
    human = build(spec, tmp_path / "s")
    assert human.exit_code == 3
    assert "error: no input was cached (2 failed, 0 skipped); exit status 3" in human.output


def test_fail_on_error_makes_any_failure_fatal(spec_dir: Path, tmp_path: Path) -> None:
    spec = write_spec(spec_dir, "one-bad", video_rows(["a.mp4", "zero.mp4"]))
    assert build(spec, tmp_path / "s", "--json").exit_code == 0
    assert build(spec, tmp_path / "s", "--json", "--fail-on-error").exit_code == 3
    human = build(spec, tmp_path / "s", "--fail-on-error")
    assert human.exit_code == 3
    assert "error: an input failed (--fail-on-error) (1 failed, 0 skipped)" in human.output
    good = write_spec(spec_dir, "all-good", video_rows(["a.mp4"]))
    assert build(good, tmp_path / "s", "--fail-on-error").exit_code == 0


def test_text_only_data_is_not_a_failed_build(spec_dir: Path, tmp_path: Path) -> None:
    spec = write_spec(spec_dir, "text", [{"problem": "2+2?", "answer": "4"}])
    assert build(spec, tmp_path / "s", "--json").exit_code == 0


def test_skips_are_listed_by_rule_with_example_rows(spec_dir: Path, tmp_path: Path) -> None:
    rows = video_rows(["a.mp4", "b.mp4"])
    rows += [
        '{"problem": "broken',
        {"problem": "x", "answer": "1", "problem_type": "boolean"},
        {"problem": "x", "answer": "1", "videos": ["img.png"], "id": "still"},
    ]
    spec = write_spec(spec_dir, "skippy", rows)
    store = tmp_path / "store"
    result = build(spec, store)
    assert result.exit_code == 0, result.output
    for expected in [
        "skipped samples",
        "malformed_row",
        "skippy row 3: invalid JSON",
        "problem_type_mismatch",
        "skippy row 4: problem type 'boolean' is not the spec's numerical",
        "data_type_mismatch",
        "declared a video, but the file is a PNG image",
    ]:
        assert expected in result.output, expected

    status = runner.invoke(app, ["cache", "status", "--store", str(store), "--json"])
    skips = json.loads(status.stdout)["samples"]["skips"]
    assert {rule: entry["count"] for rule, entry in skips.items()} == {
        "data_type_mismatch": 1, "malformed_row": 1, "problem_type_mismatch": 1,
    }  # fmt: skip
    assert skips["data_type_mismatch"]["examples"][0].startswith("skippy row 5 (id 'still'): ")
    human = runner.invoke(app, ["cache", "status", "--store", str(store)], terminal_width=200)
    assert "skipped samples by rule" in human.output
    assert "skippy row 4: problem type 'boolean'" in human.output
