"""The Lance file layout the direct frames read relies on, pinned to the installed pylance.

``videorl_kit/store/frame_bytes.py`` reads blob cells with ``preadv`` at the byte ranges a scan
reports, in the data files the manifest names (its docstring says why: Lance's own readers
are several times slower). Each test checks one thing that read assumes on a table written
the way the frames table is (blob encoding, the kit's data storage version), with several
fragments and a deletion, and fails naming the pylance version and what changed. If one
fails after a pylance upgrade, the reader already falls back to Lance's reader under that
version (``LAYOUT_VERIFIED_FOR``); adapt the reader, then the constant.
"""

from __future__ import annotations

from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

from videorl_kit.store.frame_bytes import (
    LAYOUT_VERIFIED_FOR,
    FrameBytesReader,
    blob_locations,
    layout_verified,
)
from videorl_kit.store.schema import FRAMES_SCHEMA, FRAMES_STORAGE_VERSION

CHANGED = f"pylance {lance.__version__} changed the layout frame_bytes.py reads directly: "


@pytest.fixture
def blob_table(tmp_path: Path) -> tuple[lance.LanceDataset, dict[int, bytes]]:
    """A blob column like the frames column, in three fragments, one row deleted."""
    field = pa.field("b", pa.large_binary(), metadata=FRAMES_SCHEMA.field("frames").metadata)
    schema = pa.schema([pa.field("id", pa.int64()), field])
    rng = np.random.default_rng(0)
    cells: dict[int, bytes] = {}
    uri = str(tmp_path / "t.lance")
    for part, ids in enumerate(([0, 1, 2], [3, 4], [5, 6, 7])):
        for i in ids:
            cells[i] = rng.integers(0, 256, 1000 + 70_001 * i, dtype=np.uint8).tobytes()
        table = pa.table({"id": ids, "b": [cells[i] for i in ids]}, schema=schema)
        lance.write_dataset(
            table, uri, mode="create" if part == 0 else "append",
            data_storage_version=FRAMES_STORAGE_VERSION,
        )  # fmt: skip
    dataset = lance.dataset(uri)
    dataset.delete("id = 4")
    del cells[4]
    return lance.dataset(uri), cells


def test_the_installed_pylance_is_the_one_the_layout_was_verified_for() -> None:
    assert layout_verified(), (
        f"pylance {lance.__version__} is installed, but the direct frames read was verified "
        f"for pylance {LAYOUT_VERIFIED_FOR}x: run this file's other tests with it; if they "
        "pass, set LAYOUT_VERIFIED_FOR in videorl_kit/store/frame_bytes.py (until then reads "
        "go through Lance's blob reader, slower)"
    )


def test_a_scan_gives_each_cell_its_position_and_size(blob_table) -> None:
    dataset, cells = blob_table
    scanned = dataset.to_table(columns=["id", "b"])
    for cell_id, descriptor in zip(
        scanned.column("id").to_pylist(), scanned.column("b").to_pylist(), strict=True
    ):
        assert isinstance(descriptor, dict) and {"position", "size"} <= set(descriptor), (
            CHANGED + f"a scan of a blob column gives {descriptor!r}, not {{position, size}}"
        )
        assert descriptor["size"] == len(cells[cell_id]), CHANGED + "the size is not the cell's"


def test_each_fragment_keeps_the_column_in_one_file_under_data(blob_table) -> None:
    dataset, _ = blob_table
    field_id = dataset.lance_schema.field("b").id()
    for fragment in dataset.get_fragments():
        holding = [f for f in fragment.data_files() if field_id in f.fields]
        assert len(holding) == 1, CHANGED + f"fragment {fragment.fragment_id}: {holding}"
        data_file = holding[0]
        assert data_file.base_id is None, CHANGED + "the data file lives in another base"
        path = Path(dataset.uri) / "data" / data_file.path
        assert path.is_file(), CHANGED + f"the data file is not at <dataset>/data/<path> ({path})"


def test_a_row_address_names_its_fragment_in_its_upper_32_bits(blob_table) -> None:
    dataset, _ = blob_table
    for fragment in dataset.get_fragments():
        addresses = fragment.to_table(columns=["id"], with_row_address=True).column("_rowaddr")
        assert {a >> 32 for a in addresses.to_pylist()} == {fragment.fragment_id}, (
            CHANGED + "row addresses no longer carry the fragment id in their upper 32 bits"
        )


def test_the_byte_ranges_hold_the_cells_lance_reads(blob_table) -> None:
    dataset, cells = blob_table
    scanned = dataset.to_table(columns=["id"], with_row_address=True)
    ids = scanned.column("id").to_pylist()
    locations = blob_locations(dataset, "b")
    assert [loc.row_address for loc in locations] == scanned.column("_rowaddr").to_pylist()
    reader = FrameBytesReader(dataset, "b")
    direct = [bytes(cell) for cell in reader.read(locations)]
    assert reader.n_fallbacks == 0, CHANGED + "a direct read fell back to Lance's reader"
    by_lance = dict(dataset.read_blobs("b", addresses=[loc.row_address for loc in locations]))
    for cell_id, loc, got in zip(ids, locations, direct, strict=True):
        assert by_lance[loc.row_address] == cells[cell_id], "Lance itself reads another cell"
        assert got == cells[cell_id], (
            CHANGED + f"bytes {loc.position}..{loc.position + loc.size} of {loc.path} are not "
            f"cell {cell_id}"
        )


def test_under_another_pylance_the_reader_goes_through_lance_and_says_so(
    blob_table, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset, cells = blob_table
    monkeypatch.setattr(lance, "__version__", "99.0.0")
    with pytest.warns(
        RuntimeWarning, match=r"pylance 99\.0\.0: the direct frames read was verified"
    ):
        reader = FrameBytesReader(dataset, "b")
    locations = blob_locations(dataset, "b")
    read = [bytes(cell) for cell in reader.read(locations)]
    assert reader.n_fallbacks == len(locations) and not reader.direct
    assert sorted(read) == sorted(cells.values())
