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
from videorl_kit.core.problem_types import ProblemType

runner = CliRunner()
VALID_TYPES = ", ".join(t.value for t in ProblemType)


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
        "mixed.jsonl:5 (id '105'): media: images/ruler.png not found under media_root .",
        f"mixed.jsonl:6 (id '101'): unknown_problem_type: unknown problem type 'poetry' "
        f"(valid: {VALID_TYPES})",
        "mixed.jsonl:7 (id '103'): data_type_mismatch: data_type is 'text' but the row lists media",
        "mixed.jsonl:8: malformed_row: invalid JSON (Expecting property name enclosed in double "
        "quotes)",
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
    touch_media(tmp_path, rows[7:])
    lines = validate(str(spec)).stdout.splitlines()
    assert [line.split(": ")[2].split(" ")[0] for line in lines[:5]] == [
        f"v/{i}.mp4" for i in range(5)
    ]
    assert lines[5] == "mixed.jsonl: media: 2 more media files not found (7 of 8 missing)"


def test_media_of_which_none_exists_are_one_message(tmp_path: Path, monkeypatch) -> None:
    """A wrong media_root (or media not fetched yet) is one root cause: one line, at the
    spec's data.media_root, not one line per row."""
    monkeypatch.chdir(tmp_path)
    rows = [{**MIXED_ROWS[1], "problem_id": i, "path": f"v/{i}.mp4"} for i in range(8)]
    spec = write_mixed(tmp_path, rows)
    assert validate(str(spec)).stdout.splitlines() == [
        "mixed.yaml:6: data.media_root: none of the 8 media files of the usable rows is under "
        "media_root . (the first: v/0.mp4); check data.media_root, or fetch the media",
        "0 of 1 specs valid (with their data)",
    ]


def test_missing_data_file_and_unknown_mapped_column(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = write_mixed(tmp_path)
    (tmp_path / "mixed.jsonl").unlink()
    (line,) = validate(str(spec)).stdout.splitlines()[:-1]
    assert line.startswith("mixed.yaml:5: data.path: ")
    assert line.endswith("mixed.jsonl: data file not found")

    spec = write_mixed(tmp_path, spec=MIXED_SPEC.replace("media: path", "media: paths"))
    lines = validate(str(spec)).stdout.splitlines()
    assert lines[0] == (
        "mixed.yaml:7: data.fields.media: column 'paths' is in no row of mixed.jsonl; did you "
        "mean 'path'? (5 rows skipped for it: data_type_mismatch)"
    )


def test_parquet_rows_are_named_by_row_number(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rows = [dict(MIXED_ROWS[1]), {**MIXED_ROWS[1], "solution": None}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "mixed.parquet")
    write_mixed(tmp_path, spec=MIXED_SPEC.replace("mixed.jsonl", "mixed.parquet"))
    touch_media(tmp_path, rows[:1])
    lines = validate("mixed.yaml").stdout.splitlines()
    assert lines[0] == "mixed.parquet:row 2 (id '102'): malformed_row: missing field 'solution'"


def test_json_and_jsonl_name_a_row_the_same_way(tmp_path: Path, monkeypatch) -> None:
    """Rows count from 1 in both formats and carry their id when they have one."""
    monkeypatch.chdir(tmp_path)
    no_id = {k: v for k, v in MIXED_ROWS[1].items() if k != "problem_id"}
    rows = [MIXED_ROWS[0], MIXED_ROWS[1], {**MIXED_ROWS[2], "solution": None}, no_id]
    rows[3] = {**no_id, "problem": None}
    write_mixed(tmp_path, rows)
    touch_media(tmp_path, rows)
    (tmp_path / "mixed.json").write_text(json.dumps(rows))
    (tmp_path / "json.yaml").write_text(
        MIXED_SPEC.replace("mixed.jsonl", "mixed.json").replace("id: mixed", "id: json")
    )
    lines = validate("mixed.yaml", "json.yaml").stdout.splitlines()
    assert lines == [
        "mixed.jsonl:3 (id '103'): malformed_row: missing field 'solution'",
        "mixed.jsonl:4: malformed_row: missing field 'problem'",
        "mixed.json:row 3 (id '103'): malformed_row: missing field 'solution'",
        "mixed.json:row 4: malformed_row: missing field 'problem'",
        "0 of 2 specs valid (with their data)",
    ]


def test_a_wrong_media_column_is_one_message(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = write_mixed(tmp_path, spec=MIXED_SPEC.replace("media: path", "media: paht"))
    touch_media(tmp_path, MIXED_ROWS)
    expected = (
        "mixed.yaml:7: data.fields.media: column 'paht' is in no row of mixed.jsonl; did you "
        "mean 'path'? (5 rows skipped for it: data_type_mismatch)"
    )
    assert validate(str(spec)).stdout.splitlines() == [
        expected,
        "0 of 1 specs valid (with their data)",
    ]
    payload = json.loads(runner.invoke(app, ["validate", str(spec), "--data", "--json"]).stdout)
    assert payload["specs"][0]["data"]["issues"] == [expected]


def test_a_default_column_no_row_has_is_one_message(tmp_path: Path, monkeypatch) -> None:
    """Rows that say ``video`` where the default mapping reads ``videos``."""
    monkeypatch.chdir(tmp_path)
    rows = [
        {"problem": "Q?", "answer": "1", "data_type": "video", "video": [f"v{i}.mp4"]}
        for i in range(4)
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "t.yaml").write_text(
        "id: t\nversion: 1\nproblem_type: numerical\ndata:\n  path: d.jsonl\n"
        "prompt: {template: '{{ question }}'}\n"
    )
    assert validate("t.yaml").stdout.splitlines() == [
        "t.yaml:4: data.fields.videos: column 'videos' (the default) is in no row of d.jsonl; "
        "did you mean 'video'? (4 rows skipped for it: data_type_mismatch)",
        "0 of 1 specs valid (with their data)",
    ]


def test_unknown_problem_types_are_suggested_and_repeats_counted(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    rows = [{**MIXED_ROWS[0], "problem_id": i, "problem_type": "multple choice"} for i in range(5)]
    spec = write_mixed(tmp_path, rows)
    touch_media(tmp_path, rows)
    reason = (
        f"unknown problem type 'multple choice'; did you mean 'multiple choice'? "
        f"(valid: {VALID_TYPES})"
    )
    assert validate(str(spec)).stdout.splitlines() == [
        f"mixed.jsonl:1 (id '0'): unknown_problem_type: {reason}",
        f"mixed.jsonl:2 (id '1'): unknown_problem_type: {reason}",
        f"mixed.jsonl:3 (id '2'): unknown_problem_type: {reason}",
        f"mixed.jsonl: unknown_problem_type: 2 more rows like the above: {reason}",
        "0 of 1 specs valid (with their data)",
    ]


ESCAPES = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\u202e\x9b"


def test_row_values_reach_no_terminal_escape(tmp_path: Path, monkeypatch) -> None:
    """A media path, a problem type and a data type from a row are shown as escapes: an OSC 52
    sequence (clipboard write), a screen clear, a bidi override or a C1 CSI never act."""
    monkeypatch.chdir(tmp_path)
    rows = [
        *MIXED_ROWS,
        {**MIXED_ROWS[1], "problem_id": 50, "path": f"v/{ESCAPES}.mp4"},
        {**MIXED_ROWS[0], "problem_type": f"poetry{ESCAPES}"},
        {**MIXED_ROWS[2], "data_type": f"text{ESCAPES}"},
    ]
    spec = write_mixed(tmp_path, rows)
    touch_media(tmp_path, MIXED_ROWS)
    result = validate(str(spec))
    assert result.exit_code == 1
    assert "v/\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\u202e\\u009b.mp4 not found" in result.stdout
    shown = runner.invoke(app, ["validate", str(spec), "--data", "--json"]).stdout
    for output in (result.stdout, shown):
        assert not {"\x1b", "\x07", "\u202e", "\x9b"} & set(output), output
    json.loads(shown)
