"""Building the cache from a mixed file in the public sets' layout: images are cached as
images under the image budget, and media that contradict their declared data_type are
named skips, never a still decoded as a video of repeated frames."""

from __future__ import annotations

import json
from pathlib import Path

import lance
import pytest

from tests.media_kit import make_image, make_video
from tests.public_layout import MIXED_ROWS, write_mixed
from videorl_kit.store import FrameStore, build_cache


@pytest.fixture(scope="module")
def mixed_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("mixed")
    make_video(folder / "videos/clip_a.mp4", 20, 10, (96, 64), seed=1)
    make_video(folder / "videos/clip_b.mp4", 16, 10, (96, 64), seed=2)
    make_image(folder / "images/sign.png", seed=3, width=120, height=90)
    make_image(folder / "images/ruler.png", seed=4)
    rows = [
        *MIXED_ROWS,
        {**MIXED_ROWS[0], "problem_id": 201, "path": "./images/sign.png"},  # a still as video
        {**MIXED_ROWS[2], "problem_id": 202, "path": "./videos/clip_b.mp4"},  # video as image
    ]
    spec = write_mixed(folder, rows)
    store = folder / "store"
    summary = build_cache([spec], store, workers=1)
    return store, summary


def samples(store: Path) -> dict[str, dict]:
    table = lance.dataset(str(store / "samples.lance")).to_table()
    return {row["sample_id"]: row for row in table.to_pylist()}


def test_images_are_cached_as_images_and_videos_as_videos(mixed_store) -> None:
    store, summary = mixed_store
    assert summary.invariant_holds
    rows = samples(store)
    frames = FrameStore.open(store)
    for sample_id, modality in [("101", "video"), ("102", "video"), ("103", "image")]:
        row = rows[sample_id]
        assert row["status"] == "ready", row["skip_reason"]
        keys = row["video_keys"] if modality == "video" else row["image_keys"]
        (cached,) = frames.get_many(keys)
        assert cached.modality == modality
        if modality == "image":
            assert cached.n_frames == 1 and cached.budget["max_pixels"] == 12544
            assert not row["video_keys"]
        else:
            assert cached.n_frames >= 4 and cached.budget["fps"] == 2.0


def test_media_contradicting_their_data_type_are_named_skips(mixed_store) -> None:
    store, summary = mixed_store
    assert summary.skipped_by_rule == {"data_type_mismatch": 2}
    rows = samples(store)
    still, moving = rows["201"], rows["202"]
    assert (still["status"], still["skip_rule"]) == ("skipped", "data_type_mismatch")
    assert still["skip_reason"].startswith("data_type_mismatch: video ")
    assert still["skip_reason"].endswith("sign.png: declared a video, but the file is a PNG image")
    assert moving["skip_rule"] == "data_type_mismatch"
    assert moving["skip_reason"].endswith("clip_b.mp4: declared an image, but the file is a video")
    # the same files under their true modality are cached
    assert rows["103"]["status"] == rows["102"]["status"] == "ready"
    assert summary.samples.skipped_by_rule == {"data_type_mismatch": 2}
    assert summary.samples.skips["data_type_mismatch"]["examples"][0].startswith(
        "mixed row 6 (id '201'): "
    )


def test_samples_keep_the_raw_row_for_per_source_metrics(mixed_store) -> None:
    store, _ = mixed_store
    rows = samples(store)
    raw = json.loads(rows["104"]["row_json"])
    assert raw["data_source"] == "LLaVA-Video-178K" and raw["problem_type"] == "free-form"
    assert rows["104"]["problem_type"] == "open_ended" and rows["104"]["answer"] == (
        "a green bar moves from left to right"
    )
