"""CachedSampleDataset for trainer authors: raw row fields per item, lookup by sample id,
and a collate function for variable-length videos (lists for media, padding for tokens)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.media_kit import make_image, make_video
from tests.public_layout import MIXED_ROWS, write_mixed
from tests.store.spec_files import video_rows, write_spec
from videorl_kit.store import CachedSampleDataset, build_cache, collate_samples
from videorl_kit.store.errors import MissingKeyError

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("api")
    make_video(folder / "videos/clip_a.mp4", 20, 10, (96, 64), seed=1)
    make_video(folder / "videos/clip_b.mp4", 36, 10, (128, 72), seed=2)
    make_image(folder / "images/sign.png", seed=3, width=120, height=90)
    make_image(folder / "images/ruler.png", seed=4)
    make_video(folder / "a.mp4", 20, 10, (96, 64), seed=5)
    mixed = write_mixed(folder)
    other = write_spec(folder, "other", video_rows(["a.mp4"]))  # its sample id "row-0"
    other_rows = (folder / "other.jsonl").read_text().replace('"row-0"', '"101"')
    (folder / "other.jsonl").write_text(other_rows)  # the same id as a mixed row
    build_cache([mixed, other], folder / "store", workers=1)
    return folder / "store"


def test_items_carry_the_raw_row_for_per_source_metrics(store: Path) -> None:
    dataset = CachedSampleDataset(store, task_ids=["mixed"])
    sources = {dataset[i]["sample_id"]: dataset[i]["row"]["data_source"] for i in range(5)}
    assert sources == {str(r["problem_id"]): r["data_source"] for r in MIXED_ROWS}
    item = dataset[dataset.index_of("103")]
    assert item["problem_type"] == "ocr" and item["answer"] == "STOP"
    assert len(item["images"]) == 1 and item["videos"] == []


def test_lookup_by_sample_id(store: Path) -> None:
    dataset = CachedSampleDataset(store)
    with pytest.raises(MissingKeyError, match="'101' is in tasks mixed, other: pass task_id"):
        dataset.index_of("101")
    videos, images = dataset.media("101", task_id="mixed")
    assert len(videos) == 1 and images == [] and videos[0].source_uri.endswith("clip_a.mp4")
    assert dataset[dataset.index_of("101", "other")]["task_id"] == "other"
    with pytest.raises(MissingKeyError, match="'nope' is not a ready sample of any task"):
        dataset.media("nope")


def test_collate_keeps_media_as_lists(store: Path) -> None:
    dataset = CachedSampleDataset(store, task_ids=["mixed"])
    batch = dataset.collate_fn([dataset[i] for i in range(len(dataset))])
    lengths = [v[0].shape[0] if v else 0 for v in batch["videos"]]
    assert len(set(lengths) - {0}) == 2  # two clips sampled to different frame counts
    assert [len(i) for i in batch["images"]] == [0, 0, 1, 0, 1]
    assert batch["task_id"] == ["mixed"] * 5 and "model_inputs" not in batch


def test_collate_pads_tokens_and_concatenates_vision_tensors(store: Path) -> None:
    import torch

    from tests.store.tiny_processor import build_tiny_processor

    processor = build_tiny_processor("qwen2_5_vl")
    dataset = CachedSampleDataset(store, task_ids=["mixed"], processor=processor)
    items = [dataset[dataset.index_of(i)] for i in ("101", "102", "103")]
    batch = dataset.collate_fn(items)
    inputs = batch["model_inputs"]
    lengths = [int(item["model_inputs"]["input_ids"].shape[-1]) for item in items]
    assert inputs["input_ids"].shape == (3, max(lengths))
    pad = processor.tokenizer.pad_token_id
    shortest = lengths.index(min(lengths))
    n_pad = max(lengths) - min(lengths)
    assert n_pad > 0
    assert inputs["input_ids"][shortest, :n_pad].tolist() == [pad] * n_pad  # left padding
    assert inputs["attention_mask"][shortest].tolist() == [0] * n_pad + [1] * min(lengths)
    assert torch.equal(
        inputs["input_ids"][shortest, n_pad:], items[shortest]["model_inputs"]["input_ids"]
    )
    grids = [item["model_inputs"]["video_grid_thw"] for item in items[:2]]
    assert torch.equal(inputs["video_grid_thw"], torch.cat(grids))
    pixels = [item["model_inputs"]["pixel_values_videos"] for item in items[:2]]
    assert torch.equal(inputs["pixel_values_videos"], torch.cat(pixels))
    assert torch.equal(inputs["image_grid_thw"], items[2]["model_inputs"]["image_grid_thw"])
    right = collate_samples(items, pad_token_id=pad, padding_side="right")["model_inputs"]
    assert right["attention_mask"][shortest].tolist() == [1] * min(lengths) + [0] * n_pad


def test_collate_refuses_mixed_batches() -> None:
    with pytest.raises(ValueError, match="empty batch"):
        collate_samples([])
    with pytest.raises(ValueError, match="some items have model_inputs"):
        collate_samples([{"model_inputs": {}}, {}])
