"""validate --data: the data file, mapped columns, every row and the media, each reported
where it is (data-file:line or data-file:row N; spec-file:line for the spec's own fields)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from tests.public_layout import MIXED_ROWS, MIXED_SPEC, write_mixed
from videorl_kit.cli import app

runner = CliRunner()


def validate(*args: str):
    return runner.invoke(app, ["validate", *args, "--data"], terminal_width=200)


def touch_media(folder: Path, rows: list[dict]) -> None:
    for row in rows:
        path = folder / row["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")


def test_clean_public_data_validates(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = write_mixed(tmp_path)
    touch_media(tmp_path, MIXED_ROWS)
    result = validate(str(spec))
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "1 of 1 specs valid (with their data)"


def test_every_problem_is_named_where_it_is(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rows = [
        *MIXED_ROWS,
        {**MIXED_ROWS[0], "problem_type": "poetry"},
        {**MIXED_ROWS[2], "data_type": "text"},
    ]
    spec = write_mixed(tmp_path, rows)
    with (tmp_path / "mixed.jsonl").open("a") as handle:
        handle.write("{oops\n")
    touch_media(tmp_path, MIXED_ROWS[:3])  # clip_a, clip_b and sign exist; ruler is missing
    result = validate(str(spec))
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "mixed.jsonl:5: media: images/ruler.png not found under media_root .",
        "mixed.jsonl:6: unknown_problem_type: unknown problem type 'poetry'",
        "mixed.jsonl:7: data_type_mismatch: data_type is 'text' but the row lists media",
        "mixed.jsonl:8: malformed_row: line 8: invalid JSON (Expecting property name enclosed "
        "in double quotes)",
        "0 of 1 specs valid (with their data)",
    ]
    payload = json.loads(runner.invoke(app, ["validate", str(spec), "--data", "--json"]).stdout)
    data = payload["specs"][0]["data"]
    assert (data["n_samples"], data["n_usable"], data["n_media"], data["n_missing_media"]) == (
        8, 5, 5, 1,
    )  # fmt: skip


def test_missing_media_are_counted_and_the_first_few_named(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rows = [{**MIXED_ROWS[1], "problem_id": i, "path": f"v/{i}.mp4"} for i in range(8)]
    spec = write_mixed(tmp_path, rows)
    lines = validate(str(spec)).stdout.splitlines()
    assert [line.split(": ")[2].split(" ")[0] for line in lines[:5]] == [
        f"v/{i}.mp4" for i in range(5)
    ]
    assert lines[5] == "mixed.jsonl: media: 3 more media files not found (8 of 8 missing)"


def test_missing_data_file_and_unknown_mapped_column(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = write_mixed(tmp_path)
    (tmp_path / "mixed.jsonl").unlink()
    (line,) = validate(str(spec)).stdout.splitlines()[:-1]
    assert line.startswith("mixed.yaml:5: data.path: ")
    assert line.endswith("mixed.jsonl: data file not found")

    spec = write_mixed(tmp_path, spec=MIXED_SPEC.replace("media: path", "media: paths"))
    lines = validate(str(spec)).stdout.splitlines()
    assert lines[0] == "mixed.yaml:7: data.fields.media: column 'paths' is in no row of mixed.jsonl"


def test_parquet_rows_are_named_by_row_number(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rows = [dict(MIXED_ROWS[1]), {**MIXED_ROWS[1], "solution": None}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "mixed.parquet")
    write_mixed(tmp_path, spec=MIXED_SPEC.replace("mixed.jsonl", "mixed.parquet"))
    touch_media(tmp_path, rows[:1])
    lines = validate("mixed.yaml").stdout.splitlines()
    assert lines[0] == "mixed.parquet:row 1: malformed_row: missing field 'solution'"
