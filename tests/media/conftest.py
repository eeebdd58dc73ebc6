"""Fixtures for the media tests: a session-wide set of small videos (``tests/media_kit.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.media_kit import MadeVideo, make_video


@dataclass
class VideoSet:
    cfr: MadeVideo  # 150 frames, 30 fps, 160x120
    long_gop10: MadeVideo  # 600 frames, keyframe every 10
    rotated90: MadeVideo
    rotated90_reference: MadeVideo  # same content, no rotation
    vfr: MadeVideo
    one_frame: MadeVideo
    odd_fps: MadeVideo  # 29.97 fps
    mkv: MadeVideo
    huge: MadeVideo  # 4000x3000
    faststart: MadeVideo
    tmp: Path


@pytest.fixture(scope="session")
def videos(tmp_path_factory: pytest.TempPathFactory) -> VideoSet:
    """Videos shared by the media tests (made once per session, ~2 s)."""
    tmp = tmp_path_factory.mktemp("media")
    return VideoSet(
        cfr=make_video(tmp / "cfr.mp4", 150, 30),
        long_gop10=make_video(tmp / "long.mp4", 600, 30, (96, 64), gop=10),
        rotated90=make_video(tmp / "rot90.mp4", 20, 10, (160, 96), rotation=90),
        rotated90_reference=make_video(tmp / "rot0.mp4", 20, 10, (160, 96)),
        vfr=make_video(tmp / "vfr.mp4", 60, 10, (96, 64), vfr=True),
        one_frame=make_video(tmp / "one.mp4", 1, 25),
        odd_fps=make_video(tmp / "ntsc.mp4", 90, 29.97, (128, 96)),
        mkv=make_video(tmp / "clip.mkv", 48, 24, (96, 64)),
        huge=make_video(tmp / "huge.mp4", 3, 10, (4000, 3000)),
        faststart=make_video(tmp / "faststart.mp4", 120, 30, (96, 64), gop=12, faststart=True),
        tmp=tmp,
    )


@pytest.fixture
def video_factory(tmp_path: Path):
    """``make_video`` bound to a fresh folder: ``video_factory("a.mp4", n_frames, ...)``."""

    def factory(name: str, n_frames: int, *args, **kwargs) -> MadeVideo:
        return make_video(tmp_path / name, n_frames, *args, **kwargs)

    return factory
