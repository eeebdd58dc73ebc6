"""build-cache over videos stored as folders of numbered frames (a spec's data.frames_fps)."""

from __future__ import annotations

import json
from pathlib import Path

import PIL.Image
from typer.testing import CliRunner

from tests.media.test_frame_folder import write_frames
from tests.media_kit import make_video, read_index
from tests.store.spec_files import VIDEO_BUDGET, write_spec
from videorl_kit.cli import app
from videorl_kit.store import FrameStore

runner = CliRunner()


def folder_spec(root: Path, *, fps: float | None) -> Path:
    """A spec over one frame folder (GoT-10k's layout) and one video file."""
    write_frames(root / "GOT-10k_Train_000001", 24)
    (root / "GOT-10k_Train_000001" / "groundtruth.txt").write_text("1,2,3,4\n")
    make_video(root / "clip.mp4", 20, 10, (96, 64))
    rows = [
        {"id": "track", "problem": "Where?", "answer": "1", "videos": ["GOT-10k_Train_000001"]},
        {"id": "file", "problem": "How many?", "answer": "2", "videos": ["clip.mp4"]},
    ]
    spec = write_spec(root, "frames", rows)
    if fps is not None:
        data = json.loads(spec.read_text())
        data["data"]["frames_fps"] = fps
        spec.write_text(json.dumps(data))
    return spec


def build(spec: Path, store: Path):
    return runner.invoke(app, ["build-cache", str(spec), "--store", str(store), "--json"])


def by_source(store: Path) -> dict[str, object]:
    frames = FrameStore.open(store)
    return {Path(item.source_uri).name: item for item in map(frames.get, frames.keys())}


def test_a_frame_folder_is_cached_like_a_video_with_timestamps(tmp_path: Path) -> None:
    spec, store = folder_spec(tmp_path / "data", fps=6.0), tmp_path / "store"
    result = build(spec, store)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["n_input"], summary["n_ok"], summary["n_failed"]) == (2, 2, 0)
    cached = by_source(store)["GOT-10k_Train_000001"]
    assert (VIDEO_BUDGET["fps"], VIDEO_BUDGET["max_frames"]) == (2.0, 8)
    budget_frames = 8  # 24 frames at 6 fps: 4 s, 8 frames at 2 fps
    assert cached.frames.shape == (budget_frames, 56, 84, 3)
    assert cached.source_fps == 6.0 and cached.duration_s == 4.0
    assert list(cached.frame_indices) == [0, 3, 7, 10, 13, 16, 20, 23]
    assert list(cached.timestamps_s) == [i / 6 for i in cached.frame_indices]
    assert [read_index(f) for f in cached.frames] == list(cached.frame_indices)
    assert cached.decoder == "frames"
    assert by_source(store)["clip.mp4"].decoder == "pyav"  # files still decode as videos

    again = json.loads(build(spec, store).stdout)
    assert (again["n_ok"], again["n_already_cached"]) == (2, 2)
    verify = runner.invoke(app, ["cache", "verify", "--store", str(store), "-n", "0", "--json"])
    assert verify.exit_code == 0, verify.output
    assert json.loads(verify.stdout)["counts"] == {"ok": 2}

    folder = tmp_path / "data" / "GOT-10k_Train_000001"
    PIL.Image.new("RGB", (96, 64)).save(folder / "00000001.png")  # an edited frame: new content
    changed = json.loads(build(spec, store).stdout)
    assert (changed["n_ok"], changed["n_already_cached"], changed["n_decoded"]) == (2, 1, 1)


def test_the_declared_fps_is_part_of_the_cache_key(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert build(folder_spec(tmp_path / "a", fps=6.0), store).exit_code == 0
    same = json.loads(build(folder_spec(tmp_path / "b", fps=6.0), store).stdout)
    assert same["n_already_cached"] == 2  # the same frames at the same fps, in another folder
    other = json.loads(build(folder_spec(tmp_path / "c", fps=12.0), store).stdout)
    assert (other["n_already_cached"], other["n_decoded"]) == (1, 1)  # the video file is known
    fps = {item.source_fps for item in map(FrameStore.open(store).get, FrameStore.open(store).keys())
           if item.decoder == "frames"}  # fmt: skip
    assert fps == {6.0, 12.0}


def test_a_folder_without_a_declared_fps_fails_by_name(tmp_path: Path, monkeypatch) -> None:
    spec = folder_spec(tmp_path / "data", fps=None)
    result = build(spec, tmp_path / "store")
    summary = json.loads(result.stdout)
    assert (summary["n_ok"], summary["n_failed"]) == (1, 1)
    (reason,) = summary["failed_files"].values()
    assert reason == (
        f"MissingFileError: {tmp_path / 'data' / 'GOT-10k_Train_000001'}: is a folder; a video "
        "stored as numbered frame images needs data.frames_fps in its spec"
    )
    monkeypatch.chdir(tmp_path / "data")
    check = runner.invoke(app, ["validate", "frames.yaml", "--data"], terminal_width=200)
    assert check.stdout.splitlines()[0] == (
        "frames.jsonl:1 (id 'track'): media: GOT-10k_Train_000001 is a folder; a video stored "
        "as numbered frame images needs data.frames_fps in the spec"
    )
    spec = folder_spec(tmp_path / "ok", fps=6.0)
    monkeypatch.chdir(tmp_path / "ok")
    assert runner.invoke(app, ["validate", "frames.yaml", "--data"]).exit_code == 0
