"""Fixtures for the store tests: small real videos, specs over them, a built store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.media_kit import make_audio_only, make_image, make_video, truncate_copy
from tests.store.spec_files import video_rows, write_spec


@pytest.fixture(scope="session")
def media_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three good videos, a copy of one (same content, other path), an image, and bad inputs."""
    root = tmp_path_factory.mktemp("media")
    make_video(root / "a.mp4", 20, 10, (96, 64), seed=1)
    make_video(root / "b.mp4", 30, 10, (128, 72), seed=2)
    make_video(root / "c.mp4", 12, 5, (96, 64), seed=3)
    (root / "a_copy.mp4").write_bytes((root / "a.mp4").read_bytes())
    make_image(root / "img.png", seed=4)
    # bad inputs
    (root / "zero.mp4").write_bytes(b"")
    truncate_copy(root / "b.mp4", root / "truncated.mp4", 0.3)
    (root / "text.mp4").write_text("this is not a video\n" * 20, encoding="utf-8")
    make_audio_only(root / "audio.mp4")
    make_video(root / "one_frame.mp4", 1, 10, (96, 64), seed=5)
    make_video(root / "large.mp4", 2, 10, (3840, 2160), seed=6)
    make_video(root / "thin.mp4", 4, 10, (2400, 8), "mpeg4", seed=7)
    return root


@pytest.fixture
def spec_dir(tmp_path: Path, media_dir: Path) -> Path:
    """A fresh folder for spec files whose media root is the shared media folder."""
    folder = tmp_path / "specs"
    folder.mkdir()
    for item in media_dir.iterdir():
        (folder / item.name).symlink_to(item)
    return folder


@pytest.fixture
def good_spec(spec_dir: Path) -> Path:
    """A spec over the three good videos (plus the duplicate-content copy) and one image row."""
    rows = video_rows(["a.mp4", "b.mp4", "c.mp4", "a_copy.mp4"])
    rows.append({"id": "img-row", "problem": "Count", "answer": "1", "images": ["img.png"]})
    rows.append({"id": "text-only", "problem": "2+2?", "answer": "4"})
    return write_spec(spec_dir, "good-task", rows)


@pytest.fixture(scope="session")
def built_store(tmp_path_factory: pytest.TempPathFactory, media_dir: Path) -> Path:
    """A store built once from the good videos and the image (read-only for the tests)."""
    from videorl_kit.store import build_cache

    folder = tmp_path_factory.mktemp("built")
    for name in ("a.mp4", "b.mp4", "c.mp4", "img.png"):
        (folder / name).symlink_to(media_dir / name)
    rows = video_rows(["a.mp4", "b.mp4", "c.mp4"])
    rows.append({"id": "img-row", "problem": "Count", "answer": "1", "images": ["img.png"]})
    spec = write_spec(folder, "built-task", rows)
    store = folder / "store"
    build_cache([spec], store, workers=2)
    return store


@pytest.fixture(scope="session")
def debian_videos() -> list[Path]:
    """Every video-like file of the Debian packages in ``tests/debian_videos.py`` (fetched once).

    Without network the test skips with the reason; in CI (``CI`` set) it fails instead.
    """
    import os

    from tests.debian_videos import FetchError, candidate_videos, fetch_debian_videos

    try:
        root = fetch_debian_videos()
    except FetchError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"real videos could not be fetched: {exc}")
        pytest.skip(f"real videos could not be fetched: {exc}")
    return candidate_videos(root)
