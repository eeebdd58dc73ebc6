"""Every real-world video that PyAV can decode is cached, with the frames PyAV decodes.

The videos come from Debian packages (``tests/debian_videos.py``). The reference is a plain
PyAV full decode of each file, frame after frame: a file it decodes without an error must
end as an ok row whose frame count is the number of frames PyAV produced and whose sampled
frames are those same frames, oriented and resized.
"""

from __future__ import annotations

from pathlib import Path

import av
import av.error
import numpy as np
import pytest

from tests.store.spec_files import write_spec
from videorl_kit.media.orientation import apply_orientation
from videorl_kit.media.probe import frame_orientation
from videorl_kit.media.resize import resize_frame
from videorl_kit.store import FrameStore, build_cache, store_status

pytestmark = pytest.mark.slow


def _full_decode(path: Path, keep: set[int]) -> tuple[int, dict[int, np.ndarray]] | None:
    """(frames PyAV decodes, RGB frames at the ``keep`` ordinals), or None if it cannot."""
    kept: dict[int, np.ndarray] = {}
    try:
        with av.open(str(path)) as container:
            streams = [
                s
                for s in container.streams.video
                if not s.disposition & av.stream.Disposition.attached_pic
            ]
            if not streams:
                return None
            count = 0
            for frame in container.decode(streams[0]):
                if count in keep:
                    rgb = frame.to_ndarray(format="rgb24")
                    kept[count] = apply_orientation(rgb, frame_orientation(frame, streams[0]))
                count += 1
    except (av.error.FFmpegError, UnicodeDecodeError):
        return None
    return (count, kept) if count else None


def test_every_real_video_pyav_decodes_is_cached(debian_videos: list[Path], tmp_path: Path) -> None:
    decodable = [p for p in debian_videos if _full_decode(p, set()) is not None]
    assert len(decodable) >= 25, f"expected the packages' 27 decodable videos, found {decodable}"
    names = {p: "__".join(p.parts[-3:]) for p in decodable}
    for path, name in names.items():
        (tmp_path / name).symlink_to(path)
    rows = [
        {"id": n, "problem": "What happens?", "answer": "1", "videos": [n]} for n in names.values()
    ]
    spec = write_spec(tmp_path, "debian-videos", rows)
    summary = build_cache([spec], tmp_path / "store", workers=2)
    assert (summary.n_failed, summary.n_skipped) == (0, 0), summary.as_dict()
    store = FrameStore.open(tmp_path / "store")
    by_source = {item.source_uri: item for item in store.get_many(store.keys())}
    for path, name in names.items():
        item = by_source[str(tmp_path / name)]
        result = _full_decode(path, set(item.frame_indices))
        assert result is not None
        count, reference = result
        assert item.source_frames == count, name
        for slot, ordinal in enumerate(item.frame_indices):
            expected = resize_frame(reference[ordinal], item.height, item.width)
            assert np.array_equal(item.frames[slot], expected), f"{name}: frame {ordinal}"


def test_frames_the_container_announces_but_never_shows_are_recorded(
    debian_videos: list[Path], tmp_path: Path
) -> None:
    """movie-hello.mp4 lists 250 frames; the last lies outside its edit list and never shows."""
    source = next(p for p in debian_videos if p.name == "movie-hello.mp4")
    (tmp_path / "movie.mp4").symlink_to(source)
    spec = write_spec(
        tmp_path, "edit-list", [{"problem": "?", "answer": "1", "videos": ["movie.mp4"]}]
    )
    summary = build_cache([spec], tmp_path / "store", workers=1)
    store = FrameStore.open(tmp_path / "store")
    (item,) = store.get_many(store.keys())
    assert item.source_frames == 249 and max(item.frame_indices) == 248
    assert any("never shown" in w and "249" in w for w in item.decode_warnings)
    assert summary.decode_warnings == {item.source_uri: list(item.decode_warnings)}
    status = store_status(tmp_path / "store")["frames"]["decode_warnings"]
    assert status == [{"source_uri": item.source_uri, "warnings": list(item.decode_warnings)}]
