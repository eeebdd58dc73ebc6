"""VideoChat-R1's training mix (task_specs/datasets/videochat-r1-*.yaml): the shipped specs read
Charades-STA, GoT-10k and NExT-GQA in the layouts their authors publish (fixtures in
task_specs/datasets/fixtures/ mirror them), golds come out in the kit's answer forms, the
cache builds from the fixtures, and the gold answer scores 1 while a wrong one scores less."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import get_args

import pytest
from typer.testing import CliRunner

from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.rewards.task import TaskReward
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import iter_samples
from videorl_kit.spec.models import DataSpec, TaskSpec
from videorl_kit.spec.prompt import render_prompt
from videorl_kit.spec.source_layouts import SOURCE_LAYOUTS, read_layout_rows
from videorl_kit.store import FrameStore

REPO = Path(__file__).resolve().parents[2]
SPECS = REPO / "task_specs" / "datasets"
SOURCES = {  # spec -> (fixture data file, fixture media root or None: the data file's folder)
    "videochat-r1-charades-sta": ("charades-sta/charades_sta_train.txt", "charades-sta/Charades_v1_480"),
    "videochat-r1-got10k": ("got-10k/train/list.txt", None),
    "videochat-r1-nextgqa": ("next-gqa/datasets/nextgqa/val.csv", "next-gqa/NExTVideo"),
}  # fmt: skip
runner = CliRunner()


@pytest.fixture(scope="module")
def fixture_specs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A copy of task_specs/datasets with one spec per source that includes the shipped spec
    and points its data at the fixture (nothing else changes)."""
    root = tmp_path_factory.mktemp("vcr1")
    (root / "pyproject.toml").touch()  # the project root, as in a checkout
    datasets = root / "task_specs" / "datasets"
    shutil.copytree(SPECS, datasets)
    specs = {}
    for spec_id, (data, media) in SOURCES.items():
        path = datasets / f"{spec_id}-fixture.yaml"
        media_line = f"  media_root: fixtures/{media}\n" if media else "  media_root: null\n"
        path.write_text(
            f"include: {spec_id}.yaml\nid: {spec_id}-fixture\n"
            f"data:\n  path: fixtures/{data}\n{media_line}"
        )
        specs[spec_id] = path
    return specs


def samples(fixture_specs: dict[str, Path], spec_id: str):
    return list(iter_samples(load_spec(fixture_specs[spec_id])))


def test_the_shipped_specs_validate_and_name_their_layout() -> None:
    paths = [str(SPECS / f"{spec_id}.yaml") for spec_id in SOURCES]
    result = runner.invoke(app, ["validate", *paths])
    assert result.exit_code == 0, result.output
    layouts = {load_spec(SPECS / f"{s}.yaml").data.layout for s in SOURCES}
    declared = get_args(DataSpec.model_fields["layout"].annotation)[0]  # Literal[...] | None
    assert layouts == set(SOURCE_LAYOUTS) == set(get_args(declared))


@pytest.mark.parametrize("spec_id", sorted(SOURCES))
def test_each_description_marks_its_source_revision(spec_id: str) -> None:
    """No source is pinned: each says NOT CHECKED, and a commit it names is a full hash on
    a github.com page (where it was seen), never a made-up short one."""
    spec = load_spec(SPECS / f"{spec_id}.yaml")
    text = spec.description or ""
    assert "NOT CHECKED" in text
    for commit in re.findall(r"\b[0-9a-f]{7,40}\b", text):
        assert len(commit) == 40 and re.search(rf"github\.com/\S+ commit {commit}", text)


def test_validate_data_passes_on_every_fixture(fixture_specs: dict[str, Path]) -> None:
    paths = [str(p) for p in fixture_specs.values()]
    result = runner.invoke(app, ["validate", "--data", *paths])
    assert result.exit_code == 0, result.output


def test_charades_sta_golds_are_seconds(fixture_specs: dict[str, Path]) -> None:
    found = samples(fixture_specs, "videochat-r1-charades-sta")
    assert [(s.question, json.loads(s.answer), s.videos[0].name) for s in found] == [
        ("a person opens the fridge door.", {"time": [0.0, 3.5]}, "ZQ3PA.mp4"),
        ("the person drinks from a cup.", {"time": [4.1, 7.8]}, "ZQ3PA.mp4"),
        ("a person is sitting on a sofa reading a book.", {"time": [1.2, 5.0]}, "ZT81K.mp4"),
    ]
    assert all(s.problem_type.value == "temporal_grounding" and s.line for s in found)


def test_got10k_golds_are_boxes_per_second_with_absent_seconds_left_out(
    fixture_specs: dict[str, Path],
) -> None:
    first, second = samples(fixture_specs, "videochat-r1-got10k")
    # groundtruth.txt line k*10+1 (x, y, w, h) -> second k, [x, y, x + w, y + h]
    assert json.loads(first.answer) == {
        "boxes": {"0": [4, 10, 16, 20], "1": [24, 10, 36, 20], "2": [44, 10, 56, 20]}
    }
    assert (first.sample_id, first.question, first.raw["absent_seconds"]) == (
        "GOT-10k_Train_000001", "red panda", [],
    )  # fmt: skip
    # frames 10-12 of the second sequence are absent (absence.label 1, cover.label 0)
    assert json.loads(second.answer) == {"boxes": {"0": [4, 10, 16, 20], "2": [44, 10, 56, 20]}}
    assert second.raw["absent_seconds"] == [1] and second.raw["initial_box"] == [4, 10, 16, 20]
    assert second.videos[0].is_dir() and second.videos[0].name == "GOT-10k_Train_000002"
    assert first.raw["frame_size"] == [64, 48]  # meta_info.ini's resolution, for the prompt
    prompt = render_prompt(load_spec(fixture_specs["videochat-r1-got10k"]), first)
    assert "Track the red panda" in prompt and "64x48 pixels" in prompt
    assert "[4, 10, 16, 20]" in prompt


def test_nextgqa_golds_are_option_letters_with_the_evidence_kept(
    fixture_specs: dict[str, Path],
) -> None:
    found = samples(fixture_specs, "videochat-r1-nextgqa")
    assert [(s.sample_id, s.answer) for s in found] == [
        ("7000000001_0", "B"), ("7000000001_3", "C"), ("7000000002_1", "D"),
    ]  # fmt: skip
    assert found[0].options == [
        "A. to throw it", "B. to put it on the shelf", "C. to open it", "D. to sit on it",
        "E. to hide it",
    ]  # fmt: skip
    assert found[0].videos[0].parts[-3:] == ("NExTVideo", "1017", "7000000001.mp4")
    assert found[1].raw["evidence"] == [[4.0, 5.5], [6.0, 7.5]]
    assert (found[2].raw["type"], found[2].raw["duration"]) == ("CH", 6)


def test_the_cache_builds_from_the_fixtures_with_timestamps(
    fixture_specs: dict[str, Path], tmp_path: Path
) -> None:
    store = tmp_path / "store"
    result = runner.invoke(
        app, ["build-cache", *map(str, fixture_specs.values()), "--store", str(store), "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    # 8 samples over 6 distinct videos (2 mp4 per Charades/NExT fixture, 2 GoT-10k folders)
    assert (summary["n_ok"], summary["n_failed"], summary["n_skipped"]) == (6, 0, 0)
    frames = FrameStore.open(store)
    cached = {Path(c.source_uri).name: c for c in map(frames.get, frames.keys())}
    got = cached["GOT-10k_Train_000002"]  # 25 frames at 10 fps, sampled at 2 fps
    assert got.source_fps == 10.0 and got.duration_s == 2.5
    assert list(got.frame_indices) == [0, 8, 16, 24]  # min_frames 4, spread over the clip
    assert list(got.timestamps_s) == [0.0, 0.8, 1.6, 2.4]  # frame i at i / 10 s
    assert cached["ZQ3PA.mp4"].duration_s == pytest.approx(8.0, abs=0.3)


CORRECT_AND_WRONG = {
    "videochat-r1-charades-sta": ('{"time": [0.0, 3.5]}', '{"time": [5.0, 8.0]}'),
    "videochat-r1-got10k": (
        '{"boxes": {"0": [4, 10, 16, 20], "1": [24, 10, 36, 20], "2": [44, 10, 56, 20]}}',
        '{"boxes": {"0": [4, 10, 16, 20], "1": [30, 10, 42, 20]}}',  # shifted, one missing
    ),
    "videochat-r1-nextgqa": ("B", "A"),
}


@pytest.mark.parametrize("spec_id", sorted(SOURCES))
def test_the_gold_scores_one_and_a_wrong_answer_less(
    fixture_specs: dict[str, Path], spec_id: str
) -> None:
    spec = load_spec(fixture_specs[spec_id])
    sample = next(iter_samples(spec))
    task = TaskReward.from_spec(spec)
    correct, wrong = CORRECT_AND_WRONG[spec_id]
    right = task.score_sample(sample, f"<think>look</think><answer>{correct}</answer>")
    off = task.score_sample(sample, f"<think>look</think><answer>{wrong}</answer>")
    assert (right.status, right.accuracy, right.overall) == ("ok", 1.0, 1.0)
    assert off.status == "ok" and off.accuracy < 1.0 and off.overall < right.overall


def test_a_box_at_an_absent_second_neither_rewards_nor_costs(
    fixture_specs: dict[str, Path],
) -> None:
    spec = load_spec(fixture_specs["videochat-r1-got10k"])
    sample = list(iter_samples(spec))[1]  # second 1 is absent
    task = TaskReward.from_spec(spec)
    gold = json.loads(sample.answer)["boxes"]
    with_extra = json.dumps({"boxes": {**gold, "1": [0, 0, 5, 5]}})
    for answer in (sample.answer, with_extra):
        assert task.score_sample(sample, f"<answer>{answer}</answer>").accuracy == 1.0


# --- the layouts' errors name the line and the reason -------------------------------------


def _spec(tmp_path: Path, layout: str, data: str, **extra: object) -> TaskSpec:
    types = {"charades_sta": "temporal_grounding", "got10k": "tracking"}
    return TaskSpec.model_validate(
        {
            "id": "t", "version": 1, "problem_type": types.get(layout, "multiple_choice"),
            "data": {"layout": layout, "path": str(tmp_path / data),
                     "allow_absolute_paths": True, **extra},
            "prompt": {"template": "{{ question }}"},
        }
    )  # fmt: skip


def test_charades_lines_that_cannot_be_read_are_skipped_by_line(tmp_path: Path) -> None:
    (tmp_path / "sta.txt").write_text(
        "AB12C 1.0 2.0##fine.\nAB12C 1.0##no end\n\nAB12C 5.0 2.0##backwards\n"
    )
    found = list(iter_samples(_spec(tmp_path, "charades_sta", "sta.txt")))
    assert [s.line for s in found] == [1, 2, 4]
    assert found[0].skip_reason is None
    assert "not a Charades-STA line" in (found[1].skip_reason or "")
    assert "end 2.0 is before start 5.0" in (found[2].skip_reason or "")


def test_got10k_sequences_that_cannot_be_read_are_skipped_by_name(tmp_path: Path) -> None:
    (tmp_path / "GOT-10k_Train_000010").mkdir()
    (tmp_path / "GOT-10k_Train_000010" / "groundtruth.txt").write_text("1,2,3,4\n5,6,7,8\n")
    (tmp_path / "GOT-10k_Train_000010" / "absence.label").write_text("0\n")
    (tmp_path / "list.txt").write_text(
        "GOT-10k_Train_000009\nGOT-10k_Train_000010\n../x\nGOT-10k_Train_000011\n"
    )
    (tmp_path / "GOT-10k_Train_000011").mkdir()  # 2 boxes but 1 frame
    (tmp_path / "GOT-10k_Train_000011" / "groundtruth.txt").write_text("1,2,3,4\n5,6,7,8\n")
    (tmp_path / "GOT-10k_Train_000011" / "00000001.jpg").write_bytes(b"")
    spec = _spec(tmp_path, "got10k", "list.txt", frames_fps=10.0)
    found = list(iter_samples(spec))
    reasons = [s.skip_reason or "" for s in found]
    assert reasons[0].startswith("row 1 (id 'GOT-10k_Train_000009'): sequence GOT-10k_Train_")
    assert reasons[0].endswith("groundtruth.txt not found")
    assert "absence.label has 1 lines, groundtruth.txt 2 boxes" in reasons[1]
    assert "is not a folder name" in reasons[2]
    assert reasons[3].endswith("1 frames, groundtruth.txt 2 boxes")


def test_got10k_needs_frames_fps() -> None:
    with pytest.raises(ValueError, match="frames_fps: layout got10k"):
        DataSpec.model_validate({"layout": "got10k", "path": "list.txt"})


def test_nextgqa_rows_whose_answer_is_no_option_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "val.csv").write_text(
        "video_id,frame_count,width,height,question,answer,qid,type,a0,a1,a2,a3,a4\n"
        "1,10,64,48,what is it,cat,0,CW,dog,cat,cow,pig,hen\n"
        "1,10,64,48,what next,jump,1,TN,run,walk,sit,lie,stand\n"
    )
    found = list(iter_samples(_spec(tmp_path, "nextgqa", "val.csv")))
    assert [(s.sample_id, s.answer, s.line) for s in found] == [("1_0", "B", 2), ("1_1", "", 3)]
    assert (found[1].skip_reason or "").startswith("row 2 (id '1_1'): answer 'jump' is none")
    assert found[0].videos[0].name == "1.mp4"  # no map_vid_vidorID.json beside the CSV


def test_a_file_that_is_not_the_layout_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "val.csv").write_text("id,question\n1,q\n")
    with pytest.raises(UserError, match="not a NExT-GQA CSV: no column 'video_id'"):
        list(read_layout_rows("nextgqa", tmp_path / "val.csv", DataSpec(path="x").fields))
    with pytest.raises(UserError, match="data file not found"):
        list(iter_samples(_spec(tmp_path, "charades_sta", "missing.txt")))


TINY_MIX = """\
id: vcr1-tiny
model: tiny:qwen2.5-vl
tasks:
  - {spec: ../task_specs/datasets/videochat-r1-charades-sta-fixture.yaml, weight: 12408}
  - {spec: ../task_specs/datasets/videochat-r1-got10k-fixture.yaml, weight: 9335}
  - {spec: ../task_specs/datasets/videochat-r1-nextgqa-fixture.yaml, weight: 3358}
store: ../store
rollout: {group_size: 2, max_new_tokens: 8}
optim: {lr: 1.0e-4, prompts_per_step: 2, micro_batch_size: 4, steps: 2}
backend: trl
output_dir: ../runs/vcr1-tiny
"""


@pytest.mark.slow
def test_the_mix_trains_the_tiny_model_through_trl(fixture_specs: dict[str, Path]) -> None:
    """The three source specs as one recipe's tasks: cached, sampled, rolled out and scored
    (the tiny model's rewards mean nothing; the wiring is what is checked)."""
    root = next(iter(fixture_specs.values())).parents[2]
    built = runner.invoke(
        app, ["build-cache", *map(str, fixture_specs.values()), "--store", str(root / "store")]
    )
    assert built.exit_code == 0, built.output
    (root / "recipes").mkdir(exist_ok=True)
    (root / "recipes" / "vcr1-tiny.yaml").write_text(TINY_MIX)
    result = runner.invoke(app, ["train", str(root / "recipes" / "vcr1-tiny.yaml")])
    assert result.exit_code == 0, result.output
    run = root / "runs" / "vcr1-tiny"
    steps = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [s["step"] for s in steps] == [1, 2]
    for spec_id in SOURCES:
        assert all(f"rewards/{spec_id}-fixture/mean" in s for s in steps)
    golds = {spec_id: {s.answer for s in samples(fixture_specs, spec_id)} for spec_id in SOURCES}
    logged = [json.loads(line) for line in (run / "completions.jsonl").read_text().splitlines()]
    assert logged
    for row in logged:
        assert row["gold"] in golds[row["task"].removesuffix("-fixture")]
