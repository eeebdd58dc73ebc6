"""Containers that mislead a decoder: a Matroska file FFmpeg cannot seek in, and a file
whose index lists a frame that never decodes. Both decode, from the frames that exist."""

from __future__ import annotations

from pathlib import Path

import av
import av.error
import pytest

from tests.media_kit import make_video, read_index
from videorl_kit.media.container import open_video, scan_frame_index
from videorl_kit.media.decode import decode_video

BUDGET = {"fps": 10.0, "min_frames": 4, "max_frames": 32, "min_pixels": 3136,
          "max_pixels": 50176, "patch": 28}  # fmt: skip


def test_matroska_without_cues_or_keyframe_flags_decodes(tmp_path: Path) -> None:
    """No cues and no keyframe flags on its blocks: FFmpeg has no seek index, and even a seek
    back to the start fails with EPERM. The decoder reopens the file instead."""
    path = tmp_path / "live.mkv"
    make_video(
        path, 60, 10, (96, 64), gop=10, keyframe_flags=False, container_options={"live": "1"}
    )
    assert b"\x1c\x53\xbb\x6b" not in path.read_bytes()  # no Cues element
    container, stream = open_video(path)
    try:
        index = scan_frame_index(container, stream)
        assert index.keyframes[:1] == (0,)  # the H.264 parser still finds keyframes
        with pytest.raises(av.error.PermissionError, match="Operation not permitted"):
            container.seek(index.pts[0], stream=stream, backward=True)
    finally:
        container.close()
    video = decode_video(path, BUDGET)
    assert video.source_frames == 60
    assert [read_index(f) for f in video.frames] == video.frame_indices
    sequential = decode_video(path, BUDGET, seek=False)
    assert (sequential.frames == video.frames).all()


def test_a_frame_that_never_decodes_is_left_out_of_the_sampling(tmp_path: Path) -> None:
    """The index lists 20 frames; the last one's JPEG data is garbage, so 19 decode."""
    path = tmp_path / "broken_last.avi"
    make_video(path, 20, 10, (96, 64), "mjpeg")
    with av.open(str(path)) as container:
        last = [p for p in container.demux(video=0) if p.size][-1]
        position, size = int(last.pos), int(last.size)
    data = bytearray(path.read_bytes())
    data[position + 4 : position + size] = bytes(
        b ^ 0x5A for b in data[position + 4 : position + size]
    )
    path.write_bytes(bytes(data))
    video = decode_video(path, BUDGET)
    assert video.source_frames == 19
    assert max(video.frame_indices) == 18
    assert [read_index(f) for f in video.frames] == video.frame_indices
    assert any("20 frames but only 19 decode" in w for w in video.warnings)
