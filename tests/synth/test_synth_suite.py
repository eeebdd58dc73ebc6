"""The generated suite: determinism, row layout, answer formats, manifest, file hygiene."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.synth.conftest import N_PER_TASK
from tests.synth.pixels import decode_video
from videorl_kit.core.errors import UserError
from videorl_kit.core.problem_types import ProblemType, canonical_problem_type
from videorl_kit.synth import TASK_NAMES, TASKS, build_item, generate_suite
from videorl_kit.synth.layout import Canvas

ROW_KEYS = ["problem", "answer", "videos", "images", "options", "problem_type", "data_type", "id"]


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_same_seed_gives_byte_identical_files(tmp_path: Path) -> None:
    subset = ["count", "tracking", "image_spatial", "code"]
    generate_suite(tmp_path / "a", n_per_task=2, seed=7, tasks=subset)
    generate_suite(tmp_path / "b", n_per_task=2, seed=7, tasks=subset)
    first, second = _digests(tmp_path / "a"), _digests(tmp_path / "b")
    assert first == second
    assert sum(name.endswith(".mp4") for name in first) == 4
    # identical bytes imply identical frames; check the decoded frames too, explicitly
    frames_a, times_a = decode_video(tmp_path / "a" / "videos" / "tracking_0001.mp4")
    frames_b, times_b = decode_video(tmp_path / "b" / "videos" / "tracking_0001.mp4")
    assert times_a == times_b and (frames_a == frames_b).all()


def test_different_seeds_give_different_data(tmp_path: Path) -> None:
    generate_suite(tmp_path / "a", n_per_task=3, seed=0, tasks=["count", "spatial"])
    generate_suite(tmp_path / "b", n_per_task=3, seed=1, tasks=["count", "spatial"])
    for name in ("count.jsonl", "spatial.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() != (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a/videos/spatial_0000.mp4").read_bytes() != (
        tmp_path / "b/videos/spatial_0000.mp4"
    ).read_bytes()


def test_more_rows_keep_the_earlier_rows_unchanged(tmp_path: Path) -> None:
    generate_suite(tmp_path / "small", n_per_task=2, seed=3, tasks=["temporal"])
    generate_suite(tmp_path / "large", n_per_task=4, seed=3, tasks=["temporal"])
    small = (tmp_path / "small/temporal.jsonl").read_text().splitlines()
    large = (tmp_path / "large/temporal.jsonl").read_text().splitlines()
    assert large[:2] == small and len(large) == 4


def test_every_task_writes_rows_in_the_data_row_layout(suite, suite_rows) -> None:
    manifest, out = suite
    assert [t.name for t in manifest.tasks] == list(TASK_NAMES) == [t.name for t in TASKS]
    ids = set()
    for task in TASKS:
        rows = suite_rows[task.name]
        assert len(rows) == manifest.n_per_task
        for row in rows:
            assert list(row) == ROW_KEYS, task.name
            assert isinstance(row["problem"], str) and row["problem"].strip()
            assert isinstance(row["answer"], str) and row["answer"].strip()
            assert canonical_problem_type(row["problem_type"]) == task.problem_type
            assert row["problem_type"] == task.problem_type.value  # canonical spelling
            assert row["data_type"] == task.data_type
            media = row["videos"] if task.data_type == "video" else row["images"]
            other = row["images"] if task.data_type == "video" else row["videos"]
            if task.data_type == "text":
                assert row["videos"] == [] and row["images"] == []
            else:
                assert len(media) == 1 and other == []
                assert not Path(media[0]).is_absolute() and (out / media[0]).is_file()
            assert "<video>" not in row["problem"] and "<image>" not in row["problem"]
            ids.add(row["id"])
    assert len(ids) == manifest.n_rows


def _parse_answer(problem_type: ProblemType, row: dict) -> None:
    """Assert the stored answer has the exact form its problem type requires."""
    answer = row["answer"]
    if problem_type == ProblemType.MULTIPLE_CHOICE:
        letters = [option.split(". ", 1)[0] for option in row["options"]]
        assert letters == [chr(ord("A") + i) for i in range(len(letters))]
        assert answer in letters and len(set(row["options"])) == len(letters)
    else:
        assert row["options"] is None
    if problem_type == ProblemType.NUMERICAL:
        assert answer.isdigit()
    elif problem_type in (ProblemType.REGRESSION, ProblemType.MATH):
        assert float(answer) >= 0 and answer == answer.strip()
    elif problem_type == ProblemType.BOOLEAN:
        assert answer in ("Yes", "No")
    elif problem_type == ProblemType.CRITIC:
        assert answer in ("Response 1", "Response 2")
    elif problem_type == ProblemType.TEMPORAL_GROUNDING:
        gold = json.loads(answer)
        assert list(gold) == ["time"] and 0 <= gold["time"][0] < gold["time"][1]
    elif problem_type == ProblemType.SPATIAL_GROUNDING:
        x1, y1, x2, y2 = json.loads(answer)["boxes"]
        assert 0 <= x1 < x2 <= 256 and 0 <= y1 < y2 <= 192
    elif problem_type == ProblemType.SPATIOTEMPORAL_GROUNDING:
        gold = json.loads(answer)
        start, end = gold["time"]
        seconds = [int(k) for k in gold["boxes"]]
        assert seconds and seconds == [k for k in range(int(end) + 1) if start <= k < end]
        assert all(len(box) == 4 for box in gold["boxes"].values())
    elif problem_type == ProblemType.TRACKING:
        gold = json.loads(answer)
        assert list(gold) == ["boxes"] and list(gold["boxes"]) == [
            str(k) for k in range(len(gold["boxes"]))
        ]
    elif problem_type == ProblemType.CODE:
        gold = json.loads(answer)
        assert gold["entry_point"].isidentifier() and len(gold["tests"]) >= 4
        assert all(t.startswith("assert ") and gold["entry_point"] in t for t in gold["tests"])
    elif problem_type in (ProblemType.OCR, ProblemType.OPEN_ENDED):
        assert answer == answer.strip() and "\n" not in answer


def test_answers_parse_for_their_problem_type(suite_rows) -> None:
    for task in TASKS:
        for row in suite_rows[task.name]:
            _parse_answer(task.problem_type, row)


def test_boolean_and_critic_answers_are_balanced(suite_rows) -> None:
    # the yes/no pattern repeats every four rows, for each of the two question templates
    booleans = [row["answer"] for row in suite_rows["boolean"][:4]]
    assert sorted(booleans) == ["No", "No", "Yes", "Yes"]
    critics = [row["answer"] for row in suite_rows["critic"]]
    assert critics.count("Response 1") == critics.count("Response 2")


def test_manifest_records_seed_counts_and_files(suite) -> None:
    manifest, out = suite
    written = json.loads((out / "manifest.json").read_text())
    assert written == manifest.to_dict()
    assert written["seed"] == 0 and written["generator_version"] == 1
    assert written["tasks"]["count"] == {
        "file": "count.jsonl",
        "problem_type": "numerical",
        "data_type": "video",
        "rows": manifest.n_per_task,
        "summary": "shapes visible at a time, shown in total, or of one colour",
    }
    videos = sorted(p.relative_to(out).as_posix() for p in (out / "videos").iterdir())
    images = sorted(p.relative_to(out).as_posix() for p in (out / "images").iterdir())
    assert sorted(written["files"]) == sorted(videos + images)
    assert written["n_videos"] == len(videos) == 12 * manifest.n_per_task
    assert written["n_images"] == len(images) == 4 * manifest.n_per_task
    assert "x2, y2 exclusive" in written["conventions"]["box"]


def test_regenerating_with_fewer_rows_removes_only_stale_media(tmp_path: Path) -> None:
    generate_suite(tmp_path, n_per_task=3, tasks=["count", "image_count"])
    keep = tmp_path / "videos" / "my_own_clip.mp4"
    keep.write_bytes(b"not ours")
    generate_suite(tmp_path, n_per_task=1, tasks=["count"])
    assert sorted(p.name for p in (tmp_path / "videos").iterdir()) == [
        "count_0000.mp4",
        "my_own_clip.mp4",
    ]
    # image_count was not regenerated, so its files stay
    assert len(list((tmp_path / "images").iterdir())) == 3
    assert not list(tmp_path.rglob(".*tmp*"))


def test_a_tampered_manifest_cannot_delete_other_files(tmp_path: Path) -> None:
    out, outside = tmp_path / "out", tmp_path / "precious"
    outside.mkdir()
    victim = outside / "count_0005.mp4"
    victim.write_bytes(b"keep me")
    generate_suite(out, n_per_task=1, tasks=["count"])
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"] += ["videos/../../precious/count_0005.mp4", "/etc/hostname", 7]
    (out / "manifest.json").write_text(json.dumps(manifest))
    generate_suite(out, n_per_task=1, tasks=["count"])
    assert victim.read_bytes() == b"keep me"


def test_build_item_matches_the_written_row(suite, suite_rows) -> None:
    for task in ("spatial", "caption", "image_ocr"):
        for index, row in enumerate(suite_rows[task]):
            item = build_item(task, index, seed=0)
            assert (item.problem, item.answer, item.options) == (
                row["problem"],
                row["answer"],
                row["options"],
            )


TEMPLATES_PER_TASK = {
    "multiple_choice": 2,
    "count": 3,
    "regression": 3,
    "boolean": 2,
    "ocr": 2,
    "caption": 2,
    "math": 2,
    "image_multiple_choice": 2,
    "image_count": 2,
    "image_ocr": 2,
    "code": 5,
}


def test_the_shared_suite_exercises_every_question_template() -> None:
    for task in TASKS:
        categories = {build_item(task.name, i).category for i in range(N_PER_TASK)}
        assert len(categories) == TEMPLATES_PER_TASK.get(task.name, 1), (task.name, categories)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_per_task": 0}, "n_per_task must be at least 1"),
        ({"tasks": ["count", "colour"]}, "unknown synth task(s) colour"),
        ({"canvas": Canvas(width=101)}, "canvas must be at least 160x120 with even sides"),
        ({"canvas": Canvas(fps=5)}, "canvas fps must be even"),
    ],
)
def test_bad_arguments_are_user_errors(tmp_path: Path, kwargs: dict, message: str) -> None:
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        generate_suite(tmp_path, **kwargs)


def test_output_path_that_is_a_file_is_a_user_error(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    with pytest.raises(UserError, match="not a directory"):
        generate_suite(target, n_per_task=1, tasks=["count"])
