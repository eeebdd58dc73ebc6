"""CachedSampleDataset: model-ready inputs through tiny, offline Qwen2.5-VL / Qwen3-VL
processors, with the cached timing metadata reaching Qwen3-VL's timestamps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.media_kit import make_video, read_index
from tests.store.spec_files import VIDEO_BUDGET, video_rows, write_spec
from videorl_kit.store import CachedSampleDataset, FrameStore, StoreMismatchError, build_cache

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def processors() -> dict:
    from tests.store.tiny_processor import build_tiny_processor

    return {kind: build_tiny_processor(kind) for kind in ("qwen2_5_vl", "qwen3_vl")}


def test_items_without_processor(built_store: Path) -> None:
    dataset = CachedSampleDataset(built_store)
    assert len(dataset) == 4
    items = [dataset[i] for i in range(len(dataset))]
    video_item = next(i for i in items if i["videos"])
    frames = video_item["videos"][0]
    assert frames.dtype == np.uint8 and frames.ndim == 4
    assert video_item["video_metadata"][0]["frames_indices"]
    assert video_item["messages"][-1]["content"][0] == {"type": "video"}
    image_item = next(i for i in items if i["images"])
    assert image_item["images"][0].ndim == 3


def test_qwen2_5_vl_model_inputs(built_store: Path, processors: dict) -> None:
    dataset = CachedSampleDataset(built_store, processor=processors["qwen2_5_vl"])
    for index in range(len(dataset)):
        item = dataset[index]
        inputs = item["model_inputs"]
        tokenizer = processors["qwen2_5_vl"].tokenizer
        if item["videos"]:
            frames = item["videos"][0]
            t, h, w, _ = frames.shape
            grid = inputs["video_grid_thw"][0].tolist()
            assert grid == [t // 2, h // 14, w // 14]  # no resize, no re-sampling
            n_pad = int(
                (inputs["input_ids"] == tokenizer.convert_tokens_to_ids("<|video_pad|>")).sum()
            )
            assert n_pad == (t // 2) * (h // 28) * (w // 28)
            assert inputs["pixel_values_videos"].shape[0] == grid[0] * grid[1] * grid[2]
        else:
            h, w, _ = item["images"][0].shape
            assert inputs["image_grid_thw"][0].tolist() == [1, h // 14, w // 14]


def test_qwen3_vl_timestamps_come_from_the_cache(
    spec_dir: Path, tmp_path: Path, processors: dict
) -> None:
    # a 10 fps, 30-frame (3.0 s) video whose every frame shows its own number in its colour
    true_fps, n_source = 10, 30
    made = make_video(spec_dir / "coded.mp4", n_source, true_fps, (128, 72))
    spec = write_spec(
        spec_dir,
        "qwen3-task",
        video_rows(["coded.mp4"]),
        video_budget={**VIDEO_BUDGET, "patch": 32},
    )
    store = tmp_path / "store"
    build_cache([spec], store, workers=1)
    processor = processors["qwen3_vl"]
    item = CachedSampleDataset(store, processor=processor)[0]

    # ground truth, independent of the cache: 3.0 s at fps 2.0 is 6 frames (within min 4 /
    # max 8, a multiple of the temporal patch 2), spread uniformly over frames 0..29
    truth_indices = [int(i) for i in np.round(np.linspace(0, n_source - 1, 6))]
    assert truth_indices == [0, 6, 12, 17, 23, 29]
    truth_seconds = [made.times_s[i] for i in truth_indices]
    assert truth_seconds == pytest.approx([i / true_fps for i in truth_indices], abs=1e-9)
    # the pixels are those frames, and the metadata names them at the true rate
    assert [read_index(frame) for frame in item["videos"][0]] == truth_indices
    meta = item["video_metadata"][0]
    assert meta["fps"] == pytest.approx(true_fps, abs=1e-9)
    assert meta["frames_indices"] == truth_indices
    assert meta["total_num_frames"] == n_source
    assert meta["duration"] == pytest.approx(n_source / true_fps, abs=0.11)

    # Qwen3-VL: one marker per temporal patch, the mean time of its two frames
    expected = [
        f"<{(truth_seconds[i] + truth_seconds[i + 1]) / 2:.1f} seconds>"
        for i in range(0, len(truth_seconds), 2)
    ]
    assert expected == ["<0.3 seconds>", "<1.4 seconds>", "<2.6 seconds>"]
    text = processor.tokenizer.decode(item["model_inputs"]["input_ids"])
    found = [part.split(">")[0] + ">" for part in text.split("<")[1:] if "seconds>" in part]
    assert [f"<{x}" for x in found] == expected
    # the cached timestamps are the frames' true presentation times
    cached = FrameStore.open(store).get(FrameStore.open(store).keys()[0])
    assert cached.timestamps_s == pytest.approx(truth_seconds, abs=1e-6)
    assert cached.source_fps == pytest.approx(true_fps, abs=1e-9)

    with pytest.raises(StoreMismatchError, match="patch factor 32 but the processor expects 28"):
        CachedSampleDataset(store, processor=processors["qwen2_5_vl"])[0]
