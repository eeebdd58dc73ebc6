"""Reading the public video-RL sets' layout as it is: routing per row, answer unwrapping,
data_type choosing the modality, data.where, and every unusable row a named skip."""

from __future__ import annotations

import json
from pathlib import Path

from tests.public_layout import MIXED_ROWS, MIXED_SPEC, write_mixed
from videorl_kit.core.problem_types import ProblemType
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import iter_samples


def samples_of(folder: Path, rows=None, spec_text: str = MIXED_SPEC):
    return list(iter_samples(load_spec(write_mixed(folder, rows, spec_text))))


def test_public_rows_read_as_they_are(tmp_path: Path) -> None:
    samples = samples_of(tmp_path)
    assert [s.skip_rule for s in samples] == [None] * 5
    assert [s.sample_id for s in samples] == ["101", "102", "103", "104", "105"]
    assert [s.answer for s in samples] == [
        "B", "3", "STOP", "a green bar moves from left to right", "40",
    ]  # fmt: skip
    assert [s.problem_type for s in samples] == [
        ProblemType.MULTIPLE_CHOICE, ProblemType.NUMERICAL, ProblemType.OCR,
        ProblemType.OPEN_ENDED, ProblemType.REGRESSION,
    ]  # fmt: skip
    video, _, image, *_ = samples
    assert video.videos == [tmp_path / "videos/clip_a.mp4"] and video.images == []
    assert image.images == [tmp_path / "images/sign.png"] and image.videos == []
    assert (video.data_type, image.data_type) == ("video", "image")
    assert video.options == ["A. red", "B. green", "C. blue", "D. white"]
    assert video.raw["data_source"] == "LLaVA-Video-178K"
    assert [s.line for s in samples] == [1, 2, 3, 4, 5]


def test_where_keeps_matching_rows_and_their_numbers(tmp_path: Path) -> None:
    spec = MIXED_SPEC.replace(
        "  media_root: .\n",
        "  media_root: .\n  where: {data_type: video, problem_type: [mcq, free-form, ocr]}\n",
    )
    kept = samples_of(tmp_path, spec_text=spec)
    assert [(s.row_index, s.sample_id) for s in kept] == [(0, "101"), (3, "104")]
    by_source = MIXED_SPEC.replace(
        "  media_root: .\n", "  media_root: .\n  where: {data_source: [STAR, TextVQA]}\n"
    )
    assert [s.sample_id for s in samples_of(tmp_path, spec_text=by_source)] == ["102", "103"]
    limited = spec.replace("  media_root: .\n", "  media_root: .\n  limit: 1\n")
    assert [s.sample_id for s in samples_of(tmp_path, spec_text=limited)] == ["101"]


def test_where_never_hides_an_unreadable_row(tmp_path: Path) -> None:
    write_mixed(tmp_path)
    with (tmp_path / "mixed.jsonl").open("a") as handle:
        handle.write("{broken\n")
    spec = MIXED_SPEC.replace("  media_root: .\n", "  media_root: .\n  where: {data_type: video}\n")
    (tmp_path / "mixed.yaml").write_text(spec)
    samples = list(iter_samples(load_spec(tmp_path / "mixed.yaml")))
    assert [s.skip_rule for s in samples] == [None, None, None, "malformed_row"]
    assert samples[-1].skip_reason.startswith("row 6: invalid JSON")


def bad(row_update: dict, drop: tuple[str, ...] = ()) -> dict:
    row = {**MIXED_ROWS[0], **row_update}
    for key in drop:
        row.pop(key)
    return row


def test_unusable_rows_are_named_skips(tmp_path: Path) -> None:
    rows = [
        bad({"problem_type": None}),
        bad({"problem_type": "weird"}),
        bad({"data_type": "image", "videos": ["extra.mp4"]}),
        bad({"data_type": "text"}),
        bad({}, drop=("data_type",)),
        bad({"data_type": "audio"}),
        bad({"data_type": "image", "path": None}),
        bad({"solution": "<answer>A</answer> or maybe <answer>B</answer>"}),
        bad({"path": ["a.mp4", 3]}),
    ]
    found = [(s.skip_rule, s.skip_reason) for s in samples_of(tmp_path, rows)]
    valid = ", ".join(t.value for t in ProblemType)

    def row(number: int) -> str:  # every row is a copy of problem 101: the same id
        return f"row {number} (id '101')"

    assert found == [
        ("missing_problem_type", f"{row(1)}: no problem type in column 'problem_type' (the "
         "spec says problem_type: from_row)"),
        ("unknown_problem_type", f"{row(2)}: unknown problem type 'weird' (valid: {valid})"),
        ("data_type_mismatch", f"{row(3)}: data_type is 'image' but column 'videos' lists "
         "videos"),
        ("data_type_mismatch", f"{row(4)}: data_type is 'text' but the row lists media"),
        ("data_type_mismatch", f"{row(5)}: column 'path' holds media but the row has no "
         "'data_type' (video or image) to say which budget decodes it"),
        ("data_type_mismatch", f"{row(6)}: unknown data_type 'audio' (valid: video, image, "
         "text)"),
        ("data_type_mismatch", f"{row(7)}: data_type is 'image' but the row has no image"),
        ("malformed_row", f"{row(8)}: gold answer holds 2 <answer> blocks; which one is meant?"),
        ("malformed_row", f"{row(9)}: field 'path' must be a list of paths"),
    ]  # fmt: skip


def test_a_fixed_type_spec_skips_rows_of_other_types(tmp_path: Path) -> None:
    spec = MIXED_SPEC.replace("problem_type: from_row", "problem_type: multiple choice")
    spec = spec.replace(
        "verifiers:\n  numerical: {name: numeric, version: 2, params: {abs_tol: 0.5}}\n", ""
    )
    samples = samples_of(tmp_path, spec_text=spec)
    assert [s.skip_rule for s in samples] == [None] + ["problem_type_mismatch"] * 4
    assert samples[1].skip_reason == (
        "row 2 (id '102'): problem type 'numerical' is not the spec's multiple_choice; say "
        "problem_type: from_row to score each row by its own type, or keep only this type with "
        "data.where"
    )
    untyped = [{k: v for k, v in MIXED_ROWS[0].items() if k != "problem_type"}]
    (sample,) = samples_of(tmp_path, untyped, spec)
    assert sample.problem_type is ProblemType.MULTIPLE_CHOICE and sample.skip_rule is None


def test_structured_gold_and_json_rows(tmp_path: Path) -> None:
    rows = [
        {"problem": "When?", "solution": '<answer>{"time": [1.0, 2.5]}</answer>',
         "problem_type": "temporal grounding", "data_type": "video", "path": "v.mp4"},
        {"problem": "Where?", "solution": {"boxes": [1, 2, 3, 4]},
         "problem_type": "spatial grounding", "data_type": "image", "path": ["i.png"]},
    ]  # fmt: skip
    write_mixed(tmp_path, rows)
    (tmp_path / "mixed.json").write_text(json.dumps(rows))
    spec = MIXED_SPEC.replace("path: mixed.jsonl", "path: mixed.json")
    (tmp_path / "mixed.yaml").write_text(spec)
    first, second = iter_samples(load_spec(tmp_path / "mixed.yaml"))
    assert json.loads(first.answer) == {"time": [1.0, 2.5]} and first.line is None
    assert json.loads(second.answer) == {"boxes": [1, 2, 3, 4]}
    assert second.images == [tmp_path / "i.png"]
    assert second.location("mixed.json") == "mixed.json:row 2"
