"""Every kind of bad input gets its own MediaError naming the file and the reason."""

from __future__ import annotations

import pickle

import pytest

from tests.media_kit import make_audio_only, read_index, truncate_copy
from videorl_kit.media.decode import decode_video, probe_video
from videorl_kit.media.errors import (
    DecodeError,
    EmptyFileError,
    MediaError,
    MissingFileError,
    NotAVideoError,
    NoVideoStreamError,
    TruncatedVideoError,
)

BUDGET = {
    "fps": 2.0,
    "min_frames": 4,
    "max_frames": 32,
    "min_pixels": 3136,
    "max_pixels": 200704,
    "patch": 28,
}
READERS = [
    pytest.param(lambda path: decode_video(path, BUDGET), id="decode_video"),
    pytest.param(probe_video, id="probe_video"),
]


@pytest.mark.parametrize("read", READERS)
def test_missing_file(tmp_path, read):
    path = tmp_path / "nope.mp4"
    with pytest.raises(MissingFileError) as info:
        read(path)
    assert str(info.value) == f"{path}: file does not exist"
    assert info.value.path == str(path)


@pytest.mark.parametrize("read", READERS)
def test_directory_is_not_a_file(tmp_path, read):
    with pytest.raises(MissingFileError, match="path is a directory"):
        read(tmp_path)


@pytest.mark.parametrize("read", READERS)
def test_zero_byte_file(tmp_path, read):
    path = tmp_path / "empty.mp4"
    path.write_bytes(b"")
    with pytest.raises(EmptyFileError, match=r"empty\.mp4: file is empty \(0 bytes\)"):
        read(path)


@pytest.mark.parametrize("read", READERS)
def test_text_file_named_mp4(tmp_path, read):
    path = tmp_path / "notes.mp4"
    path.write_text("these are my notes, not a video\n" * 20)
    with pytest.raises(NotAVideoError, match=r"notes\.mp4: a text file \("):
        read(path)


@pytest.mark.parametrize("read", READERS)
def test_random_bytes_named_mp4(tmp_path, read):
    path = tmp_path / "noise.mp4"
    path.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(NotAVideoError, match="not a media file FFmpeg can read"):
        read(path)


@pytest.mark.parametrize("suffix", [".wav", ".m4a"])
@pytest.mark.parametrize("read", READERS)
def test_audio_only_file(tmp_path, read, suffix):
    path = make_audio_only(tmp_path / f"tone{suffix}")
    with pytest.raises(NoVideoStreamError, match=r"no video stream \(streams found: 1 audio\)"):
        read(path)


@pytest.mark.parametrize("read", READERS)
def test_mp4_cut_before_its_index(videos, tmp_path, read):
    # PyAV writes the moov index at the end: cutting the file loses it entirely
    path = truncate_copy(videos.cfr.path, tmp_path / "cut.mp4", 0.5)
    with pytest.raises(TruncatedVideoError, match="starts like a MP4/MOV file") as info:
        read(path)
    assert "truncated" in info.value.reason


def test_faststart_mp4_missing_its_tail_fails_by_default(videos, tmp_path):
    path = truncate_copy(videos.faststart.path, tmp_path / "tail.mp4", 0.6)
    with pytest.raises(
        TruncatedVideoError, match=r"frames cover 2\.\d+ s of the declared 4\.000 s \(\d+ of 120"
    ):
        decode_video(path, BUDGET)


def test_faststart_mp4_missing_its_tail_can_be_decoded_partially(videos, tmp_path):
    path = truncate_copy(videos.faststart.path, tmp_path / "tail.mp4", 0.6)
    video = decode_video(path, BUDGET, allow_truncated=True)
    assert video.truncated
    assert any("of the declared 4.000 s" in w for w in video.warnings)
    assert 0 < video.source_frames < 120
    assert max(video.frame_indices) < video.source_frames
    assert [read_index(f) for f in video.frames] == video.frame_indices
    assert not decode_video(videos.faststart.path, BUDGET).truncated


def test_zeroed_payload_is_a_decode_error(videos, tmp_path):
    """2 kB of zeros in the middle of a 12 kB stream break many packets: DecodeError."""
    data = bytearray(videos.faststart.path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 2000] = bytes(2000)
    path = tmp_path / "garbled.mp4"
    path.write_bytes(bytes(data))
    with pytest.raises(DecodeError, match=r"garbled\.mp4: too many decode errors"):
        decode_video(path, BUDGET)


def test_errors_pickle_with_their_fields():
    for cls in (MissingFileError, EmptyFileError, NotAVideoError, TruncatedVideoError):
        err = cls("a/b.mp4", "reason here")
        again = pickle.loads(pickle.dumps(err))
        assert type(again) is cls and again.path == "a/b.mp4" and again.reason == "reason here"
        assert str(again) == "a/b.mp4: reason here"
        assert isinstance(again, MediaError)
