"""build_cache: inputs, accounting, idempotence, samples table, fault isolation."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.media_kit import make_image, make_video
from tests.store.fault_injection import raise_on_marker, segfault_on_marker
from tests.store.spec_files import VIDEO_BUDGET, video_rows, write_spec
from videorl_kit.core.errors import UserError
from videorl_kit.store import FrameStore, build_cache
from videorl_kit.store.builder import BuildHooks, BuildProgress
from videorl_kit.store.commit import CommitEvent
from videorl_kit.store.integrity import recorded_versions
from videorl_kit.store.tables import StoreTables


def table_versions(store: Path) -> dict[str, int]:
    tables = StoreTables.open(store)
    return {n: tables.table(n).version for n in ("frames", "failures", "samples", "trajectories")}


def samples_by_id(store: Path) -> dict[str, dict]:
    rows = StoreTables.open(store).table("samples").to_table().to_pylist()
    return {r["sample_id"]: r for r in rows}


def test_build_counts_caches_and_describes_every_input(good_spec: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    events: list[BuildProgress] = []
    summary = build_cache([good_spec], store, workers=2, progress=events.append)

    # 4 video items (a_copy has a's content but is its own input) + 1 image item
    assert (summary.n_input, summary.n_ok, summary.n_failed, summary.n_skipped) == (5, 5, 0, 0)
    assert summary.invariant_holds and summary.n_already_cached == 0
    assert summary.n_decoded == 4  # a and a_copy share one cache key
    assert events[-1].phase == "done" and events[-1].done == events[-1].total == 5

    frames = FrameStore.open(store)
    assert len(frames) == 4
    samples = samples_by_id(store)
    assert {s["status"] for s in samples.values()} == {"ready"}
    assert samples["row-0"]["video_keys"] == samples["row-3"]["video_keys"]  # same content
    assert samples["text-only"]["video_keys"] == [] and samples["text-only"]["visual_tokens"] == 0
    image_key = samples["img-row"]["image_keys"][0]
    image = frames.get(image_key)
    assert image.modality == "image" and image.frames.shape[0] == 1

    for sample_id in ("row-0", "row-1", "row-2"):
        row = samples[sample_id]
        item = frames.get(row["video_keys"][0])
        t, h, w, c = item.frames.shape
        assert item.frames.dtype == np.uint8 and c == 3
        assert h % 28 == 0 and w % 28 == 0 and t % 2 == 0
        assert h * w <= VIDEO_BUDGET["max_pixels"]
        assert len(item.frame_indices) == len(item.timestamps_s) == t
        assert item.frame_indices == sorted(item.frame_indices)
        assert item.source_fps > 0 and item.source_frames >= max(item.frame_indices) + 1
        assert row["visual_tokens"] == item.visual_tokens == (t // 2) * (h // 28) * (w // 28)
        assert row["prompt_tokens_estimate"] > row["visual_tokens"]
        assert row["prompt"].startswith("How many bars?")


def test_cached_frames_equal_a_direct_decode(
    good_spec: Path, spec_dir: Path, tmp_path: Path
) -> None:
    from videorl_kit.media.decode import decode_video
    from videorl_kit.spec.models import VideoBudget

    store = tmp_path / "store"
    build_cache([good_spec], store, workers=1)
    key = samples_by_id(store)["row-1"]["video_keys"][0]
    cached = FrameStore.open(store).get(key)
    direct = decode_video(str(spec_dir / "b.mp4"), VideoBudget(**VIDEO_BUDGET))
    np.testing.assert_array_equal(cached.frames, direct.frames)
    assert cached.frame_indices == [int(i) for i in direct.frame_indices]
    assert cached.timestamps_s == pytest.approx([float(x) for x in direct.timestamps_s])
    assert cached.source_fps == pytest.approx(float(direct.source_fps))


def test_second_build_adds_nothing(good_spec: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    build_cache([good_spec], store, workers=2)
    before = table_versions(store)
    again = build_cache([good_spec], store, workers=2)
    assert table_versions(store) == before
    assert (again.n_input, again.n_ok, again.n_already_cached, again.n_decoded) == (5, 5, 5, 0)
    assert again.n_commits == 0 and again.samples.rows_written == 0


def test_same_video_under_two_budgets_is_two_inputs(spec_dir: Path, tmp_path: Path) -> None:
    rows = video_rows(["a.mp4"])
    one = write_spec(spec_dir, "task-one", rows)
    same = write_spec(spec_dir, "task-same", rows)
    other = write_spec(spec_dir, "task-other", rows, video_budget={**VIDEO_BUDGET, "fps": 1.0})
    summary = build_cache([one, same, other], tmp_path / "store", workers=1)
    assert summary.n_input == 2 and summary.n_ok == 2
    store = FrameStore.open(tmp_path / "store")
    assert len(store) == 2
    assert len({store.get(k).budget_hash for k in store}) == 2


def test_two_specs_with_one_id_are_refused(spec_dir: Path, tmp_path: Path) -> None:
    first = write_spec(spec_dir, "dup-task", video_rows(["a.mp4"]))
    (spec_dir / "other").mkdir()
    for name in ("a.mp4",):
        (spec_dir / "other" / name).symlink_to(spec_dir / name)
    second = write_spec(spec_dir / "other", "dup-task", video_rows(["a.mp4"]))
    with pytest.raises(UserError, match="task id 'dup-task' is used by two specs"):
        build_cache([first, second], tmp_path / "store", workers=1)


def test_malformed_rows_are_skipped_inputs(spec_dir: Path, tmp_path: Path) -> None:
    rows = video_rows(["a.mp4"])
    rows += ['{"problem": "broken', {"id": "no-answer", "problem": "x"}, dict(rows[0])]
    spec = write_spec(spec_dir, "messy", rows)
    summary = build_cache([spec], tmp_path / "store", workers=1)
    assert (summary.n_input, summary.n_ok, summary.n_skipped) == (4, 1, 3)
    assert summary.skipped_by_rule == {"malformed_row": 2, "duplicate_id": 1}
    assert summary.invariant_holds
    samples = samples_by_id(tmp_path / "store")
    reasons = sorted(s["skip_reason"] for s in samples.values() if s["status"] == "skipped")
    assert any("invalid JSON" in r for r in reasons)
    assert any("missing field 'answer'" in r for r in reasons)
    assert any("duplicate sample id 'row-0'" in r for r in reasons)
    assert summary.samples.n_samples == 4 and summary.samples.n_skipped == 3
    assert summary.samples.skipped_by_rule == {"malformed_row": 2, "duplicate_id": 1}
    (duplicate,) = summary.samples.skips["duplicate_id"]["examples"]
    assert duplicate.startswith(
        "messy row 4 (id 'row-0'): duplicate sample id 'row-0' (first used by row 1)"
    )


def test_token_limits_skip_by_rule(spec_dir: Path, tmp_path: Path) -> None:
    spec = write_spec(spec_dir, "tokens", video_rows(["a.mp4", "b.mp4"]))
    summary = build_cache([spec], tmp_path / "s1", workers=1, max_visual_tokens=1)
    assert summary.skipped_by_rule == {"over_token_budget": 2}
    assert (summary.n_ok, summary.n_skipped) == (0, 2) and len(
        FrameStore.open(tmp_path / "s1")
    ) == 0
    reasons = [s["skip_reason"] for s in samples_by_id(tmp_path / "s1").values()]
    assert all(
        r.startswith("over_token_budget") and "visual tokens > limit 1" in r for r in reasons
    )

    summary = build_cache([spec], tmp_path / "s2", workers=1, max_prompt_tokens=5)
    assert summary.n_ok == 2 and summary.samples.n_skipped == 2
    assert summary.samples.skipped_by_rule == {"over_token_budget": 2}


def test_a_segfaulting_worker_fails_only_its_item(spec_dir: Path, tmp_path: Path) -> None:
    shutil.copy(spec_dir / "b.mp4", spec_dir / "crash_me.mp4")
    spec = write_spec(spec_dir, "crashy", video_rows(["a.mp4", "crash_me.mp4", "c.mp4"]))
    hooks = BuildHooks(decode_fn=segfault_on_marker)
    summary = build_cache([spec], tmp_path / "store", workers=2, _hooks=hooks)
    assert (summary.n_ok, summary.n_failed) == (2, 1)
    assert summary.failed_by_class == {"WorkerCrashError": 1}
    failures = StoreTables.open(tmp_path / "store").table("failures").to_table().to_pylist()
    assert len(failures) == 1 and failures[0]["source_uri"].endswith("crash_me.mp4")
    assert "worker process died" in failures[0]["message"]


def test_an_exception_in_one_decode_fails_only_that_item(spec_dir: Path, tmp_path: Path) -> None:
    shutil.copy(spec_dir / "c.mp4", spec_dir / "raise_me.mp4")
    spec = write_spec(spec_dir, "raisy", video_rows(["a.mp4", "raise_me.mp4", "b.mp4"]))
    hooks = BuildHooks(decode_fn=raise_on_marker)
    summary = build_cache([spec], tmp_path / "store", workers=1, _hooks=hooks)
    assert (summary.n_ok, summary.n_failed) == (2, 1)
    failure = StoreTables.open(tmp_path / "store").table("failures").to_table().to_pylist()[0]
    assert failure["error_class"] == "RuntimeError"
    assert "injected failure while decoding raise_me.mp4" in failure["message"]
    assert "_explode" in failure["traceback"] and failure["attempts"] == 1
    sample = samples_by_id(tmp_path / "store")["row-1"]
    assert sample["status"] == "media_failed" and "raise_me.mp4" in sample["skip_reason"]
    assert sample["video_keys"] == [None]


def test_fork_context_is_refused(good_spec: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="fork"):
        build_cache([good_spec], tmp_path / "s", mp_context="fork")


def test_content_hash_is_reused_while_size_and_mtime_match(spec_dir: Path, tmp_path: Path) -> None:
    import os

    video = spec_dir / "memo.mp4"
    video.write_bytes((spec_dir / "a.mp4").read_bytes())
    spec = write_spec(spec_dir, "memo", video_rows(["memo.mp4"]))
    store = tmp_path / "store"
    build_cache([spec], store, workers=1)
    # same size and mtime, other bytes: trusted by default (like make/rsync), caught by rehash
    stat = video.stat()
    video.write_bytes((spec_dir / "b.mp4").read_bytes()[: stat.st_size].ljust(stat.st_size, b"\0"))
    os.utime(video, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert build_cache([spec], store, workers=1).n_already_cached == 1
    rehashed = build_cache([spec], store, workers=1, rehash=True)
    assert rehashed.n_already_cached == 0 and rehashed.n_input == 1


IMAGE_BUDGET = {"min_pixels": 3136, "max_pixels": 65536, "patch": 32}


def test_images_and_videos_of_one_row_get_their_own_budgets(spec_dir: Path, tmp_path: Path) -> None:
    from videorl_kit.media.geometry import smart_resize
    from videorl_kit.spec.models import ImageBudget, VideoBudget
    from videorl_kit.store.schema import budget_hash

    # a 320x240 video and a 320x240 image in the same row: only the budgets differ
    make_video(spec_dir / "wide.mp4", 20, 10, (320, 240), seed=8)
    make_image(spec_dir / "wide.png", seed=9, width=320, height=240)
    row = {"id": "joint", "problem": "Same?", "answer": "1", "videos": ["wide.mp4"],
           "images": ["wide.png"]}  # fmt: skip
    spec = write_spec(spec_dir, "joint", [row], image_budget=IMAGE_BUDGET)
    store = tmp_path / "store"
    summary = build_cache([spec], store, workers=2)
    assert (summary.n_input, summary.n_ok) == (2, 2)

    video_hash = budget_hash("video", VideoBudget(**VIDEO_BUDGET).model_dump(mode="json"))
    image_hash = budget_hash("image", ImageBudget(**IMAGE_BUDGET).model_dump(mode="json"))
    assert video_hash != image_hash
    sample = samples_by_id(store)["joint"]
    assert (sample["video_budget_hash"], sample["image_budget_hash"]) == (video_hash, image_hash)
    frames = FrameStore.open(store)
    video = frames.get(sample["video_keys"][0])
    image = frames.get(sample["image_keys"][0])

    # video: factor 28 within max_pixels 12544 -> 84x112, every frame
    assert video.modality == "video" and video.budget_hash == video_hash
    assert video.budget == VideoBudget(**VIDEO_BUDGET).model_dump(mode="json")
    assert (
        video.frames.shape[1:3]
        == (84, 112)
        == smart_resize(240, 320, factor=28, min_pixels=3136, max_pixels=VIDEO_BUDGET["max_pixels"])
    )
    assert video.patch == 28 and video.n_frames == 4  # 2 s at 2 fps
    # image: factor 32 within max_pixels 65536 -> 192x288, not the video budget's 84x112
    assert image.modality == "image" and image.budget_hash == image_hash
    assert image.budget == ImageBudget(**IMAGE_BUDGET).model_dump(mode="json")
    assert image.frames.shape == (1, 192, 288, 3)
    assert smart_resize(240, 320, factor=32, min_pixels=3136, max_pixels=65536) == (192, 288)
    assert image.patch == 32 and image.visual_tokens == (192 // 32) * (288 // 32)
    # readers expecting either budget accept the store and that budget's row
    by_video = FrameStore.open(store, budget=VideoBudget(**VIDEO_BUDGET))
    by_image = FrameStore.open(store, budget=ImageBudget(**IMAGE_BUDGET), modality="image")
    assert by_video.get(video.cache_key).budget_hash == video_hash
    assert by_image.get(image.cache_key).budget_hash == image_hash


def test_every_commit_records_the_table_versions(good_spec: Path, tmp_path: Path) -> None:
    """The state file follows each commit, not only the end of a build, so a manifest lost
    after an interrupted build is noticed too."""
    store = tmp_path / "store"
    seen: list[tuple[int, int]] = []

    def on_commit(event: CommitEvent) -> None:
        seen.append((event.frames_version, recorded_versions(store)["frames"]))

    hooks = BuildHooks(on_commit=on_commit)
    build_cache([good_spec], store, workers=1, batch_items=1, _hooks=hooks)
    assert len(seen) >= 4
    assert all(version == recorded for version, recorded in seen), seen
