"""Files cut short: found from the container's own sizes, whatever FFmpeg says.

FFmpeg decodes the prefix of a cut Ogg, Matroska, MPEG or AVI file and stops without an
error. :func:`videorl_kit.media.cut.cut_short` reads the container's structure instead; the
PyAV decoder then fails a cut file whose header measures what is missing (frame count, a
Matroska duration), and samples the frames of one whose header does not (Ogg, MPEG streams,
live Matroska), with ``truncation`` saying why.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import av
import numpy as np
import pytest

from tests.media_kit import make_video, truncate_copy
from videorl_kit.core.budget import VideoBudget
from videorl_kit.media.cut import cut_short
from videorl_kit.media.decode import decode_video
from videorl_kit.media.decoders import DecodeOptions
from videorl_kit.media.errors import TruncatedVideoError
from videorl_kit.media.indexed_decode import IndexedFrames, decode_by_index

BUDGET = VideoBudget(max_frames=8, max_pixels=12544)


def make_mpeg_ps(path: Path, n_frames: int = 40) -> Path:
    """An MPEG-1 program stream (PyAV's ``mpeg`` muxer writes 2,048-byte packs)."""
    with av.open(str(path), "w", format="mpeg") as container:
        stream = container.add_stream("mpeg1video", rate=25)
        stream.width, stream.height, stream.pix_fmt = 96, 64, "yuv420p"
        for i in range(n_frames):
            frame = av.VideoFrame.from_ndarray(np.full((64, 96, 3), 5 * i, np.uint8), "rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


MAKERS: dict[str, tuple[Callable[[Path], Path], str, bool]] = {
    # name: (maker, words of the reason, whether the header measures the cut)
    "mp4 (faststart)": (
        lambda d: make_video(d / "a.mp4", 40, 10, (96, 64), gop=5, faststart=True).path,
        "MP4 box 'mdat'", True,
    ),
    "mkv": (lambda d: make_video(d / "a.mkv", 40, 10, (96, 64)).path, "Matroska segment", True),
    "webm": (
        lambda d: make_video(d / "a.webm", 40, 10, (96, 64), "libvpx-vp9").path,
        "Matroska segment", True,
    ),
    "avi": (lambda d: make_video(d / "a.avi", 40, 10, (96, 64), "mpeg4").path, "RIFF", True),
    "live mkv": (
        lambda d: make_video(
            d / "live.mkv", 40, 10, (96, 64), container_options={"live": "1"}
        ).path,
        "Matroska cluster", False,
    ),
    "ogv": (lambda d: make_video(d / "a.ogv", 40, 10, (96, 64), "libvpx").path, "Ogg page", False),
    "ts": (lambda d: make_video(d / "a.ts", 40, 10, (96, 64)).path, "transport packet", False),
    "mpeg-ps": (lambda d: make_mpeg_ps(d / "a.mpg"), "MPEG-PS", False),
}  # fmt: skip


@pytest.fixture(scope="module")
def whole_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("containers")
    return {name: maker(folder) for name, (maker, _, _) in MAKERS.items()}


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_whole_files_look_whole_and_cut_copies_say_where(
    whole_files: dict[str, Path], tmp_path: Path, name: str
) -> None:
    whole = whole_files[name]
    assert cut_short(whole) is None
    assert decode_video(whole, BUDGET).truncation is None
    words = MAKERS[name][1]
    for fraction in (0.3, 0.6, 0.9):
        cut = truncate_copy(whole, tmp_path / f"{fraction}{whole.suffix}", fraction)
        reason = cut_short(cut)
        assert reason is not None and words in reason, (fraction, reason)


@pytest.mark.parametrize("name", sorted(n for n in MAKERS if not n.startswith("mp4")))
def test_a_cut_file_is_refused_when_its_header_measures_the_cut_else_sampled_and_named(
    whole_files: dict[str, Path], tmp_path: Path, name: str
) -> None:
    """Before: every one of these decoded its prefix with no error and no warning."""
    _, words, measured = MAKERS[name]
    whole = whole_files[name]
    cut = truncate_copy(whole, tmp_path / f"cut{whole.suffix}", 0.6)
    if measured:
        with pytest.raises(TruncatedVideoError, match="file is truncated: .*" + words) as info:
            decode_video(cut, BUDGET)
        assert str(cut) in str(info.value)
        allowed = decode_video(cut, BUDGET, allow_truncated=True)
        assert allowed.truncated and words in (allowed.truncation or "")
        return
    video = decode_video(cut, BUDGET)
    assert video.truncated and video.truncation is not None
    assert video.truncation.startswith("file is cut short: ") and words in video.truncation
    assert "frames before the cut" in video.truncation
    assert video.truncation in video.warnings
    assert 0 < video.source_frames < decode_video(whole, BUDGET).source_frames


def _ogg_cut_at_a_page_boundary(whole: Path, target: Path) -> Path:
    data = whole.read_bytes()
    last_page = data.rfind(b"OggS")
    target.write_bytes(data[:last_page])  # whole pages only; the end-of-stream page is gone
    return target


def test_an_ogg_file_without_its_end_of_stream_page(
    whole_files: dict[str, Path], tmp_path: Path
) -> None:
    cut = _ogg_cut_at_a_page_boundary(whole_files["ogv"], tmp_path / "pages.ogv")
    reason = cut_short(cut)
    assert reason is not None and "no end-of-stream flag" in reason
    assert decode_video(cut, BUDGET).truncation == (
        f"file is cut short: {reason}; nothing in it says how long it was, so the "
        f"{decode_video(cut, BUDGET).source_frames} frames before the cut "
        f"({decode_video(cut, BUDGET).duration_s:.3f} s) are sampled"
    )


def test_files_the_check_cannot_read_are_left_to_the_decoder(tmp_path: Path) -> None:
    text = tmp_path / "notes.mp4"
    text.write_text("not a video\n")
    assert cut_short(text) is None
    assert cut_short(tmp_path / "missing.mp4") is None
    empty = tmp_path / "empty.ogv"
    empty.write_bytes(b"")
    assert cut_short(empty) is None


def test_decoders_that_read_by_index_record_the_cut_too(
    whole_files: dict[str, Path], tmp_path: Path
) -> None:
    cut = truncate_copy(whole_files["ogv"], tmp_path / "cut.ogv", 0.6)

    def read_grey(path: Path, params: VideoBudget, threads: int) -> IndexedFrames:
        frames = np.full((4, 64, 96, 3), 128, np.uint8)
        return IndexedFrames(frames, 4, 10.0, [0, 1, 2, 3], [0.0, 0.1, 0.2, 0.3])

    video = decode_by_index(cut, BUDGET, DecodeOptions(), "grey", "grey 1", read_grey)
    assert video.truncation is not None and "Ogg page" in video.truncation
    assert "grey read the frames before the cut" in video.truncation
    assert video.warnings == (video.truncation,)
    whole = decode_by_index(
        whole_files["ogv"], BUDGET, DecodeOptions(), "grey", "grey 1", read_grey
    )
    assert whole.truncation is None and whole.warnings == ()
