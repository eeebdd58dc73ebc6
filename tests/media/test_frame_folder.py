"""Videos stored as folders of numbered frame images decode like the same frames in a video."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import PIL.Image
import pytest

from tests.media_kit import draw_frame, make_video, read_index
from videorl_kit.media.decode import decode_video
from videorl_kit.media.errors import DecodeError, MissingFileError, NoFramesError
from videorl_kit.media.frame_folder import decode_frame_folder, frame_files, frame_folder_hash

BUDGET = {"fps": 2.0, "min_frames": 4, "max_frames": 16, "min_pixels": 3136,
          "max_pixels": 12544, "patch": 28}  # fmt: skip
SIZE = (96, 64)  # width, height


def write_frames(folder: Path, n: int, name: str = "{:08d}.png", start: int = 1) -> Path:
    """Frames ``draw_frame(0..n-1)`` saved as ``00000001.png`` ... (GoT-10k numbers from 1)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        picture = draw_frame(i, n, *SIZE)
        PIL.Image.fromarray(picture).save(folder / name.format(start + i))
    return folder


def test_a_folder_decodes_like_the_same_frames_in_a_video(tmp_path: Path) -> None:
    n, fps = 40, 10.0
    video = decode_video(make_video(tmp_path / "clip.mp4", n, fps, SIZE).path, BUDGET)
    folder = decode_frame_folder(write_frames(tmp_path / "clip", n), BUDGET, fps=fps)
    assert folder.frames.shape == video.frames.shape == (8, 56, 84, 3)
    assert folder.frame_indices == video.frame_indices
    assert folder.timestamps_s == pytest.approx(video.timestamps_s)
    assert (folder.source_fps, folder.source_frames, folder.duration_s) == (10.0, 40, 4.0)
    assert (video.source_frames, video.duration_s) == (40, pytest.approx(4.0))
    # the same source frames, read back from their colour code
    assert [read_index(f) for f in folder.frames] == [read_index(f) for f in video.frames]
    assert [read_index(f) for f in folder.frames] == folder.frame_indices
    assert (folder.decoder, folder.source_width, folder.source_height) == ("frames", *SIZE)


def test_frames_play_in_the_order_of_their_numbers(tmp_path: Path) -> None:
    folder = tmp_path / "seq"
    write_frames(folder, 12, name="img_{}.jpg")  # img_1 ... img_12: text order is not play order
    (folder / "groundtruth.txt").write_text("1,2,3,4\n")
    (folder / ".hidden.png").write_bytes(b"")
    assert [p.name for p in frame_files(folder)][:3] == ["img_1.jpg", "img_2.jpg", "img_3.jpg"]
    decoded = decode_frame_folder(folder, {**BUDGET, "fps": 4.0, "max_frames": 12}, fps=4.0)
    assert decoded.frame_indices == list(range(12))
    assert decoded.timestamps_s == [i / 4 for i in range(12)]
    assert [read_index(f) for f in decoded.frames] == list(range(12))


def test_the_hash_covers_every_frame_and_the_declared_fps(tmp_path: Path) -> None:
    folder = write_frames(tmp_path / "h", 6)
    first = frame_folder_hash(folder, 25.0)
    assert frame_folder_hash(folder, 25.0) == first
    assert frame_folder_hash(folder, 30.0) != first
    PIL.Image.fromarray(np.zeros((64, 96, 3), np.uint8)).save(folder / "00000004.png")
    assert frame_folder_hash(folder, 25.0) != first


def test_bad_folders_are_named_errors(tmp_path: Path) -> None:
    with pytest.raises(MissingFileError, match=re.escape("does not exist")):
        frame_files(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("")
    with pytest.raises(NoFramesError, match=re.escape("holds no frame image")):
        frame_files(tmp_path / "empty")
    twins = write_frames(tmp_path / "twins", 3)
    PIL.Image.fromarray(draw_frame(0, 3, *SIZE)).save(twins / "frame_2.png")
    with pytest.raises(
        DecodeError, match=re.escape("'00000002.png' and 'frame_2.png' share the number 2")
    ):
        frame_files(twins)
    unnumbered = write_frames(tmp_path / "unnumbered", 2)
    (unnumbered / "cover.jpg").write_bytes(b"")
    with pytest.raises(DecodeError, match=re.escape("'cover.jpg' has no number")):
        frame_files(unnumbered)
    mixed = write_frames(tmp_path / "mixed", 8)
    PIL.Image.fromarray(np.zeros((32, 32, 3), np.uint8)).save(mixed / "00000008.png")
    with pytest.raises(DecodeError, match=re.escape("'00000008.png' is 32x32, the first frame")):
        decode_frame_folder(mixed, BUDGET, fps=2.0)
    broken = write_frames(tmp_path / "broken", 8)
    (broken / "00000008.png").write_bytes(b"not a png")
    with pytest.raises(DecodeError, match=re.escape("'00000008.png' is not a readable image")):
        decode_frame_folder(broken, BUDGET, fps=2.0)
    with pytest.raises(MissingFileError, match=re.escape("set data.frames_fps")):
        frame_folder_hash(broken, None)  # type: ignore[arg-type]
