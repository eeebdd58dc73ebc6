"""An outsider's attacks on a store folder: each is refused with one line, never read.

Written without reading the reader's code (issue 19 §4 "attack once more"): links that lead
out of the store, a manifest entry that climbs out of it, blocks swapped inside a cell, an
older manifest copied over the newest, a data file swapped for a link under an open reader.
Before the fix the first three were read without a word (the direct reader joined the
manifest's path onto the folder and followed links), the third failing later inside Lance.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import lance
import pytest
from lance.fragment import DataFile

from videorl_kit.store import FrameStore, StoreIntegrityError
from videorl_kit.store.frame_bytes import blob_locations
from videorl_kit.store.tables import StoreTables


@pytest.fixture
def store(built_store: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(built_store, copy)
    return copy


def frames_data_file(store: Path) -> Path:
    return sorted((store / "frames.lance" / "data").iterdir())[0]


def refused(store: Path) -> str:
    with pytest.raises(StoreIntegrityError) as caught:
        reader = FrameStore.open(store)
        reader.get_many(reader.keys())
    message = str(caught.value)
    assert len(message.splitlines()) == 1, message
    assert str(store) in message
    return message


def test_a_data_file_linked_to_a_file_outside_the_store_is_refused(
    store: Path, tmp_path: Path
) -> None:
    data = frames_data_file(store)
    outside = tmp_path / "elsewhere.lance"
    shutil.copy(data, outside)  # the very same bytes: only the link is wrong
    data.unlink()
    data.symlink_to(outside)
    message = refused(store)
    assert "is a symbolic link to" in message and str(outside) in message
    assert "cache repair" in message


def test_a_table_folder_linked_outside_the_store_is_refused(store: Path, tmp_path: Path) -> None:
    folder = store / "frames.lance"
    outside = tmp_path / "elsewhere" / "frames.lance"
    outside.parent.mkdir()
    shutil.move(folder, outside)
    folder.symlink_to(outside)
    message = refused(store)
    assert "table folder" in message and "symbolic link" in message


def test_a_manifest_entry_that_climbs_out_of_the_store_is_refused(
    store: Path, tmp_path: Path
) -> None:
    table = store / "frames.lance"
    dataset = lance.dataset(str(table))
    fragment = dataset.get_fragments()[0].metadata
    original = fragment.files[0]
    outside = tmp_path / "outside" / "x.lance"
    outside.parent.mkdir()
    shutil.copy(table / "data" / original.path, outside)
    climbing = DataFile(
        os.path.relpath(outside, table / "data"), original.fields, original.column_indices,
        original.file_major_version, original.file_minor_version, original.file_size_bytes,
    )  # fmt: skip
    operation = lance.LanceOperation.Overwrite(
        dataset.schema, [dataclasses.replace(fragment, files=[climbing])]
    )
    lance.LanceDataset.commit(str(table), operation, read_version=dataset.version)
    for path in (table / "data").iterdir():
        path.unlink()
    StoreTables(store).record_versions()  # the attacker also forges the kit's version record
    message = refused(store)
    assert "lies outside the table folder" in message and "cache repair" in message


def test_blocks_swapped_inside_a_cell_are_refused(store: Path) -> None:
    dataset = lance.dataset(str(store / "frames.lance"))
    rows = dataset.to_table(columns=["cache_key", "frames_shape"]).to_pylist()
    row = next(i for i, r in enumerate(rows) if r["frames_shape"][0] > 1)
    location = blob_locations(dataset, "frames")[row]
    assert location.path is not None
    with open(location.path, "r+b") as handle:
        handle.seek(location.position)
        first = handle.read(location.size // 2)
        second = handle.read(location.size - location.size // 2)
        handle.seek(location.position)
        handle.write(second + first)  # same bytes, same size, other order
    message = refused(store)
    assert rows[row]["cache_key"] in message and "do not match their checksum" in message


def test_an_older_manifest_copied_over_the_newest_is_refused(store: Path) -> None:
    versions = store / "frames.lance" / "_versions"
    manifests = sorted(versions.glob("*.manifest"), key=lambda p: int(p.stem))
    assert len(manifests) > 1
    shutil.copy(manifests[-1], manifests[0])  # V2 names: the smallest number is the newest
    message = refused(store)
    assert "the manifests of the newer versions are gone" in message


def test_a_data_file_swapped_for_a_link_under_an_open_reader_is_refused(
    store: Path, tmp_path: Path
) -> None:
    reader = FrameStore.open(store)
    keys = reader.keys()
    reader.get_many(keys)
    data = frames_data_file(store)
    outside = tmp_path / "elsewhere.lance"
    shutil.copy(data, outside)
    data.unlink()
    data.symlink_to(outside)
    with pytest.raises(StoreIntegrityError) as caught:
        reader.get_many(keys)
    message = str(caught.value)
    assert len(message.splitlines()) == 1 and "replaced by a symbolic link" in message
