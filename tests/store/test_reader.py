"""FrameStore: keys, get, ordered get_many, version pinning and refusals."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.media_kit import make_video
from tests.store.spec_files import VIDEO_BUDGET, video_rows, write_spec
from videorl_kit.spec.models import ImageBudget, VideoBudget
from videorl_kit.store import (
    FrameStore,
    MissingKeyError,
    StoreMismatchError,
    build_cache,
    frame_codec,
)
from videorl_kit.store.frame_bytes import BlobLocation, FrameBytesReader
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


@pytest.mark.parametrize("threaded", [False, True])
def test_direct_reads_equal_lance_blob_reads(
    built_store: Path, threaded: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The direct read (block by block, threaded for large cells) gives what the plain path
    gives on the cells Lance reads."""
    if threaded:  # the test store's cells are small: make every cell take the threaded branch
        monkeypatch.setattr(frame_codec, "PARALLEL_MIN_BYTES", 0)
        monkeypatch.setattr(frame_codec, "PARALLEL_MIN_CORES", 1)
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


@pytest.mark.parametrize("older", [5, 4])
def test_a_store_of_the_previous_schema_is_refused_with_what_changed(
    built_store: Path, tmp_path: Path, older: int
) -> None:
    """Schema 4 kept one checksum per cell, schema 5 no digest of a row's metadata (its
    shape and timing were read unchecked); this reader needs both: rebuild."""
    copy = tmp_path / "copy"
    shutil.copytree(built_store, copy)
    import lance

    lance.dataset(str(copy / "frames.lance")).update_config({CONFIG_SCHEMA_VERSION: str(older)})
    with pytest.raises(StoreMismatchError) as caught:
        FrameStore.open(copy)
    message = str(caught.value)
    assert len(message.splitlines()) == 1
    assert f"written with cache schema version {older}, this videorl-kit reads version 6" in message
    assert "version 6: a digest of each frames row's metadata" in message
    assert ("version 5: a checksum per stored frame block" in message) == (older < 5)
    assert f"move {copy} away (or delete it) and rebuild" in message


def test_reader_is_pinned_until_refresh(spec_dir: Path, tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    build_cache([write_spec(spec_dir, "first", video_rows(["a.mp4"]))], store_dir, workers=1)
    store = FrameStore.open(store_dir)
    build_cache([write_spec(spec_dir, "second", video_rows(["b.mp4"]))], store_dir, workers=1)
    assert len(store) == 1
    fresh = store.refresh()
    assert len(fresh) == 2 and fresh.version > store.version
    assert set(store.keys()) < set(fresh.keys())


class RecordingBytesReader(FrameBytesReader):
    """The real byte reader, recording the location of every cell it serves, in order."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.served: list[BlobLocation] = []

    def frames(self, location: BlobLocation, *args: Any) -> np.ndarray:
        self.served.append(location)
        return super().frames(location, *args)


@pytest.fixture(scope="module")
def fragmented_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six videos committed one per batch: six data files, whose names (random) do not
    sort in table order, so file order differs from both table and request order."""
    folder = tmp_path_factory.mktemp("fragmented")
    for i in range(6):
        make_video(folder / f"v{i}.mp4", 6, 10, (96, 64), seed=100 + i)
    spec = write_spec(folder, "fragmented", video_rows([f"v{i}.mp4" for i in range(6)]))
    store = folder / "store"
    assert build_cache([spec], store, workers=2, batch_items=1).n_commits >= 6
    return store


@pytest.mark.parametrize("direct_reads", [True, False])
def test_get_many_reads_in_file_order_and_answers_in_asked_order(
    fragmented_store: Path, direct_reads: bool
) -> None:
    store = FrameStore.open(fragmented_store, direct_reads=direct_reads)
    singles = {key: store.get(key) for key in store}
    recorder = RecordingBytesReader(store._dataset, "frames", direct=direct_reads)
    store._bytes = recorder  # the reader's only byte source, wrapped

    def file_place(location: BlobLocation) -> tuple[str, int]:
        return (location.path or "", location.position)

    where = dict(zip(store.keys(), store._index.locations, strict=True))
    assert len({w.path for w in where.values()}) == 6  # one data file per commit
    in_file_order = sorted(store.keys(), key=lambda k: file_place(where[k]))
    asked = list(reversed(in_file_order))
    asked.insert(2, asked[0])  # a repeat is read once

    got = store.get_many(asked)

    assert [file_place(loc) for loc in recorder.served] == [
        file_place(where[k]) for k in in_file_order
    ]  # ascending (path, position), each cell once
    assert [item.cache_key for item in got] == asked
    for item in got:
        np.testing.assert_array_equal(item.frames, singles[item.cache_key].frames)
        assert item.frame_indices == singles[item.cache_key].frame_indices
