"""FrameStore: keys, get, ordered get_many, version pinning and refusals."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.store.media_factory import VIDEO_BUDGET, video_rows, write_spec
from videorl_kit.spec.models import ImageBudget, VideoBudget
from videorl_kit.store import FrameStore, MissingKeyError, StoreMismatchError, build_cache
from videorl_kit.store.schema import CONFIG_SCHEMA_VERSION


def test_keys_and_get(built_store: Path) -> None:
    store = FrameStore.open(built_store)
    keys = store.keys()
    assert len(keys) == len(store) == 4 and len(set(keys)) == 4
    for key in keys:
        item = store.get(key)
        assert item.cache_key == key
        assert item.frames.dtype == np.uint8 and item.frames.ndim == 4
        assert item.frames.shape[-1] == 3 and not item.frames.flags.writeable
        assert item.n_frames == len(item.frame_indices) == len(item.timestamps_s)
        assert (item.height, item.width) == item.frames.shape[1:3]
        meta = item.video_metadata()
        assert meta["fps"] == item.source_fps and meta["frames_indices"] == item.frame_indices


def test_get_many_restores_order_and_repeats(built_store: Path) -> None:
    store = FrameStore.open(built_store)
    keys = store.keys()
    asked = [keys[3], keys[0], keys[3], keys[2], keys[1]]
    singles = {k: store.get(k) for k in keys}
    got = store.get_many(asked)
    assert [g.cache_key for g in got] == asked
    for g in got:
        np.testing.assert_array_equal(g.frames, singles[g.cache_key].frames)
        assert g.timestamps_s == singles[g.cache_key].timestamps_s
    assert got[0] is got[2]  # a repeated key is read once
    assert store.get_many([]) == []


def test_direct_reads_equal_lance_blob_reads(built_store: Path) -> None:
    direct = FrameStore.open(built_store)
    via_lance = FrameStore.open(built_store, direct_reads=False)
    keys = direct.keys()
    for a, b in zip(direct.get_many(keys), via_lance.get_many(keys), strict=True):
        np.testing.assert_array_equal(a.frames, b.frames)
        assert hashlib.sha256(a.frames.tobytes()).hexdigest() == a.frames_sha256
    assert direct._bytes.n_fallbacks == 0 and via_lance._bytes.n_fallbacks == len(keys)


def test_missing_key_says_what_to_do(built_store: Path) -> None:
    store = FrameStore.open(built_store)
    with pytest.raises(MissingKeyError, match=r"not in store .* build-cache"):
        store.get("0" * 64)
    with pytest.raises(KeyError):
        store.get_many([store.keys()[0], "nope"])


def test_expected_budget_is_checked(built_store: Path) -> None:
    FrameStore.open(built_store, budget=VideoBudget(**VIDEO_BUDGET))
    FrameStore.open(built_store, budget=ImageBudget(), modality="image")
    with pytest.raises(StoreMismatchError) as err:
        FrameStore.open(built_store, budget=VideoBudget(**{**VIDEO_BUDGET, "fps": 1.0}))
    message = str(err.value)
    assert "no frames for the expected video budget" in message
    assert '"fps": 1.0' in message and "the store holds budgets" in message
    assert "videorl-kit build-cache" in message


def test_rows_of_another_budget_are_refused(built_store: Path) -> None:
    plain = FrameStore.open(built_store)
    modality = {key: plain.get(key).modality for key in plain}
    image_key = next(k for k, m in modality.items() if m == "image")
    video_key = next(k for k, m in modality.items() if m == "video")
    store = FrameStore.open(built_store, budget=VideoBudget(**VIDEO_BUDGET))
    assert store.get(video_key).modality == "video"
    with pytest.raises(StoreMismatchError, match="was built with budget"):
        store.get(image_key)


def test_other_schema_version_is_refused(built_store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(built_store, copy)
    FrameStore.open(copy)
    import lance

    lance.dataset(str(copy / "frames.lance")).update_config({CONFIG_SCHEMA_VERSION: "999"})
    with pytest.raises(StoreMismatchError, match=r"cache schema version 999.*rebuild"):
        FrameStore.open(copy)


def test_reader_is_pinned_until_refresh(spec_dir: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    build_cache([write_spec(spec_dir, "first", video_rows(["a.mp4"]))], store_dir, workers=1)
    store = FrameStore.open(store_dir)
    build_cache([write_spec(spec_dir, "second", video_rows(["b.mp4"]))], store_dir, workers=1)
    assert len(store) == 1
    fresh = store.refresh()
    assert len(fresh) == 2 and fresh.version > store.version
    assert set(store.keys()) < set(fresh.keys())
