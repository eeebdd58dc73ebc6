"""Bad media never aborts a build: each ends failed (with a clear reason) or ok, and failures
are retried only with retry_failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.store.media_factory import make_video, video_rows, write_spec
from videorl_kit.store import FrameStore, build_cache
from videorl_kit.store.tables import StoreTables

BAD = ["missing.mp4", "zero.mp4", "truncated.mp4", "text.mp4", "audio.mp4", "thin.mp4"]
GOOD = ["a.mp4", "one_frame.mp4", "large.mp4"]


def failures_by_name(store: Path) -> dict[str, dict]:
    rows = StoreTables.open(store).table("failures").to_table().to_pylist()
    return {Path(r["source_uri"]).name: r for r in rows}


@pytest.fixture
def bad_spec(spec_dir: Path) -> Path:
    return write_spec(spec_dir, "bad-inputs", video_rows(GOOD + BAD))


def test_bad_inputs_fail_with_clear_reasons(bad_spec: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    summary = build_cache([bad_spec], store, workers=2)
    assert summary.invariant_holds
    assert (summary.n_input, summary.n_ok, summary.n_failed) == (9, 3, 6)
    failures = failures_by_name(store)
    assert set(failures) == set(BAD)
    for name, row in failures.items():
        assert row["attempts"] == 1 and row["message"] and row["traceback"], name
        assert row["decoder"] and row["error_class"], name
        assert name in row["message"] or row["source_uri"] in row["message"], (name, row["message"])
    # unreadable files fail before decoding: no content hash, no cache key
    assert failures["missing.mp4"]["cache_key"] == ""
    assert failures["missing.mp4"]["error_class"] == "MissingFileError"
    assert failures["missing.mp4"]["message"].endswith("missing.mp4: file does not exist")
    expected = {
        "zero.mp4": "EmptyFileError", "truncated.mp4": "TruncatedVideoError",
        "text.mp4": "NotAVideoError", "audio.mp4": "NoVideoStreamError",
        "thin.mp4": "BudgetTooSmallError",
    }  # fmt: skip
    assert {n: failures[n]["error_class"] for n in expected} == expected
    assert failures["thin.mp4"]["cache_key"] != ""
    assert "aspect ratio" in failures["thin.mp4"]["message"]
    samples = {
        Path(r["video_uris"][0]).name: r
        for r in StoreTables.open(store).table("samples").to_table().to_pylist()
    }
    assert {n for n, r in samples.items() if r["status"] == "media_failed"} == set(BAD)


def test_one_frame_and_large_videos_are_cached(bad_spec: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    build_cache([bad_spec], store, workers=2)
    frames = FrameStore.open(store)
    by_name = {Path(frames.get(k).source_uri).name: frames.get(k) for k in frames}
    one = by_name["one_frame.mp4"]
    assert one.source_frames == 1 and one.frames.shape[0] == 2  # padded to a temporal patch
    assert set(one.frame_indices) == {0}
    large = by_name["large.mp4"]
    assert large.frames.shape[1] * large.frames.shape[2] <= 12544
    assert large.source_width == 3840 or large.source_width is None


def test_failures_are_retried_only_when_asked(bad_spec: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    build_cache([bad_spec], store, workers=2)
    versions = StoreTables.open(store).table("failures").version

    again = build_cache([bad_spec], store, workers=2)
    assert (again.n_failed, again.n_known_failures, again.n_new_failures) == (6, 6, 0)
    assert StoreTables.open(store).table("failures").version == versions
    assert all(r["attempts"] == 1 for r in failures_by_name(store).values())

    retried = build_cache([bad_spec], store, workers=2, retry_failed=True)
    assert retried.n_failed == 6 and retried.n_retried == 5  # missing.mp4 has no cache key
    assert all(r["attempts"] == 2 for r in failures_by_name(store).values())


def test_a_fixed_file_is_cached_and_its_failure_cleared(spec_dir: Path, tmp_path: Path) -> None:
    broken = spec_dir / "fixme.mp4"
    broken.write_bytes(b"not a video")
    spec = write_spec(spec_dir, "fixable", video_rows(["fixme.mp4"]))
    store = tmp_path / "store"
    assert build_cache([spec], store, workers=1).n_failed == 1
    make_video(broken, seed=42)  # new content -> new cache key -> tried without --retry-failed
    summary = build_cache([spec], store, workers=1)
    assert (summary.n_ok, summary.n_failed) == (1, 0)
    assert failures_by_name(store) == {}  # the file is cached under this budget now


def test_retry_that_succeeds_removes_the_failure(spec_dir: Path, tmp_path: Path) -> None:
    from tests.store.fault_injection import raise_on_marker

    (spec_dir / "raise_once.mp4").write_bytes((spec_dir / "c.mp4").read_bytes())
    spec = write_spec(spec_dir, "flaky", video_rows(["raise_once.mp4"]))
    store = tmp_path / "store"
    first = build_cache([spec], store, workers=1, decode_fn=raise_on_marker)
    assert first.n_failed == 1
    second = build_cache([spec], store, workers=1, retry_failed=True)
    assert (second.n_ok, second.n_failed, second.n_retried) == (1, 0, 1)
    assert failures_by_name(store) == {}
