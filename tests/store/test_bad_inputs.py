"""Bad media never aborts a build: each ends failed (with a clear reason) or ok, and failures
are retried only with retry_failed (also through ``build-cache --retry-failed``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.media_kit import MadeVideo, make_video, read_index
from tests.store.spec_files import VIDEO_BUDGET, video_rows, write_spec
from videorl_kit.cli import app
from videorl_kit.media.geometry import smart_resize
from videorl_kit.store import FrameStore, build_cache
from videorl_kit.store.builder import BuildHooks
from videorl_kit.store.tables import StoreTables

BAD = ["missing.mp4", "zero.mp4", "truncated.mp4", "text.mp4", "audio.mp4", "thin.mp4"]
# rot90.mp4: coded 160x96 with a 90-degree display matrix; vfr.mp4: 30 frames at 10 fps,
# then 30 at 30 fps (the media tests' generators: every frame shows its number)
GOOD = ["a.mp4", "one_frame.mp4", "large.mp4", "rot90.mp4", "vfr.mp4"]


def failures_by_name(store: Path) -> dict[str, dict]:
    rows = StoreTables.open(store).table("failures").to_table().to_pylist()
    return {Path(r["source_uri"]).name: r for r in rows}


@pytest.fixture(scope="module")
def tricky_videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, MadeVideo]:
    """Rotation metadata and variable frame rate, made as the media tests make them."""
    folder = tmp_path_factory.mktemp("tricky")
    return {
        "rot90.mp4": make_video(folder / "rot90.mp4", 20, 10, (160, 96), rotation=90),
        "vfr.mp4": make_video(folder / "vfr.mp4", 60, 10, (96, 64), vfr=True),
    }


@pytest.fixture
def bad_spec(spec_dir: Path, tricky_videos: dict[str, MadeVideo]) -> Path:
    for name, made in tricky_videos.items():
        (spec_dir / name).symlink_to(made.path)
    return write_spec(spec_dir, "bad-inputs", video_rows(GOOD + BAD))


def test_bad_inputs_fail_with_clear_reasons(bad_spec: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    summary = build_cache([bad_spec], store, workers=2)
    assert summary.invariant_holds
    assert (summary.n_input, summary.n_ok, summary.n_failed) == (11, 5, 6)
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


def test_tricky_videos_are_cached(
    bad_spec: Path, tmp_path: Path, tricky_videos: dict[str, MadeVideo]
) -> None:
    store = tmp_path / "store"
    build_cache([bad_spec], store, workers=2)
    frames = FrameStore.open(store)
    by_name = {Path(frames.get(k).source_uri).name: frames.get(k) for k in frames}
    assert set(by_name) == set(GOOD)
    one = by_name["one_frame.mp4"]
    assert one.source_frames == 1 and one.frames.shape[0] == 2  # padded to a temporal patch
    assert set(one.frame_indices) == {0}
    large = by_name["large.mp4"]
    assert large.frames.shape[1] * large.frames.shape[2] <= 12544
    assert large.source_width == 3840 or large.source_width is None

    # rotation: stored landscape 160x96, cached upright (portrait) as displayed
    rotated = by_name["rot90.mp4"]
    assert (rotated.source_height, rotated.source_width) == (160, 96)
    assert rotated.frames.shape[1:3] == smart_resize(
        160, 96, factor=28, min_pixels=3136, max_pixels=VIDEO_BUDGET["max_pixels"]
    )
    assert rotated.height > rotated.width
    assert [read_index(f) for f in rotated.frames] == rotated.frame_indices  # the right frames
    last = rotated.frames[-1].astype(int).sum(axis=2)  # the square moved left to right coded,
    rows_with_square = np.nonzero((last > 3 * 230).any(axis=1))[0]  # so bottom to top shown
    assert rows_with_square.size and rows_with_square.max() < rotated.height // 2

    # variable frame rate: each cached timestamp is its frame's real presentation time
    vfr, made = by_name["vfr.mp4"], tricky_videos["vfr.mp4"]
    assert vfr.source_frames == made.n_frames
    assert [read_index(f) for f in vfr.frames] == vfr.frame_indices
    assert vfr.timestamps_s == pytest.approx([made.times_s[i] for i in vfr.frame_indices])
    assert vfr.timestamps_s[-1] == pytest.approx(made.times_s[-1])  # the whole span is sampled
    # frame number / average fps would be off by more than half a second somewhere
    assert max(abs(i / vfr.source_fps - t) for i, t in zip(
        vfr.frame_indices, vfr.timestamps_s, strict=True)) > 0.3  # fmt: skip


def test_failures_are_retried_only_when_asked(bad_spec: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    build_cache([bad_spec], store, workers=2)
    versions = StoreTables.open(store).table("failures").version

    again = build_cache([bad_spec], store, workers=2)
    assert (again.n_failed, again.n_known_failures, again.n_new_failures) == (6, 6, 0)
    assert again.n_decoded == 0
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
    make_video(
        broken, 20, 10, (96, 64), seed=42
    )  # new content -> new cache key -> tried without --retry-failed
    summary = build_cache([spec], store, workers=1)
    assert (summary.n_ok, summary.n_failed) == (1, 0)
    assert failures_by_name(store) == {}  # the file is cached under this budget now


def test_retry_that_succeeds_removes_the_failure(spec_dir: Path, tmp_path: Path) -> None:
    from tests.store.fault_injection import raise_on_marker

    (spec_dir / "raise_once.mp4").write_bytes((spec_dir / "c.mp4").read_bytes())
    spec = write_spec(spec_dir, "flaky", video_rows(["raise_once.mp4"]))
    store = tmp_path / "store"
    first = build_cache([spec], store, workers=1, _hooks=BuildHooks(decode_fn=raise_on_marker))
    assert first.n_failed == 1
    second = build_cache([spec], store, workers=1, retry_failed=True)
    assert (second.n_ok, second.n_failed, second.n_retried) == (1, 0, 1)
    assert failures_by_name(store) == {}


def test_retry_failed_through_the_command_line(spec_dir: Path, tmp_path: Path) -> None:
    """A decode that ran out of time is not retried without --retry-failed, even when it
    would now succeed; with the flag it is decoded again (and its failure cleared), while a
    file that still cannot be decoded counts one more attempt."""
    runner = CliRunner()
    store = tmp_path / "store"

    def build(spec: Path, *extra: str) -> dict:
        command = ["build-cache", str(spec), "--store", str(store), "--workers", "1", "--json"]
        result = runner.invoke(app, [*command, *extra])
        summary = json.loads(result.stdout)
        assert result.exit_code == (0 if summary["n_ok"] else 3), result.output  # 3: none ok
        assert summary["n_input"] == summary["n_ok"] + summary["n_failed"] + summary["n_skipped"]
        return summary

    text_only = write_spec(spec_dir, "cli-text", video_rows(["text.mp4"]))
    assert build(text_only)["failed_by_class"] == {"NotAVideoError": 1}
    spec = write_spec(spec_dir, "cli-retry", video_rows(["large.mp4", "text.mp4"]))
    # a 4K frame cannot be decoded and resized in a millisecond: it times out
    first = build(spec, "--item-timeout", "0.001")
    assert (first["n_ok"], first["n_failed"], first["n_known_failures"]) == (0, 2, 1)
    assert first["failed_by_class"] == {"DecodeTimeoutError": 1, "NotAVideoError": 1}

    again = build(spec)  # default time limit, no flag: both failures stand, nothing decoded
    assert (again["n_ok"], again["n_failed"], again["n_known_failures"]) == (0, 2, 2)
    assert (again["n_retried"], again["n_decoded"], again["n_commits"]) == (0, 0, 0)
    assert {r["attempts"] for r in failures_by_name(store).values()} == {1}

    retried = build(spec, "--retry-failed")
    assert (retried["n_ok"], retried["n_failed"], retried["n_retried"]) == (1, 1, 2)
    assert retried["failed_by_class"] == {"NotAVideoError": 1}
    failures = failures_by_name(store)
    assert set(failures) == {"text.mp4"} and failures["text.mp4"]["attempts"] == 2
    cached = FrameStore.open(store)
    assert [Path(cached.get(key).source_uri).name for key in cached] == ["large.mp4"]
