"""A frames row's metadata is covered by its ``row_digest`` and a cache key is never a path
(issue 19 §4, outsider round 3, attacks 9-12).

Each edit below is made the way an outsider would, with Lance's own ``update`` on a copy of a
built store. Before schema 6 every one of them (but the byte checksums) was read back without
a word: a transposed ``frames_shape`` scrambled the frames, edited timing reached the trainer,
a key of ``../../x`` made ``cache export`` write outside ``--out``, and ``cache verify`` hung
on a row whose source was a FIFO.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pytest

from videorl_kit.store import FrameStore, MissingKeyError, StoreIntegrityError
from videorl_kit.store.commit import sql_quote
from videorl_kit.store.repair import repair_store
from videorl_kit.store.row_digest import DIGEST_FIELDS, row_digest
from videorl_kit.store.tables import StoreTables
from videorl_kit.store.verify import export_store, verify_store


@pytest.fixture
def store(built_store: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(built_store, copy)
    return copy


def _row(store: Path, modality: str = "video") -> dict[str, Any]:
    columns = [name for name, _ in DIGEST_FIELDS] + ["row_digest"]
    rows = lance.dataset(str(store / "frames.lance")).to_table(columns=columns).to_pylist()
    return sorted((r for r in rows if r["modality"] == modality), key=lambda r: r["cache_key"])[0]


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return sql_quote(value)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return repr(value)


def _edit(store: Path, key: str, changes: dict[str, Any], *, forge: bool = False) -> None:
    """Update one frames row with Lance directly; ``forge`` also recomputes its row_digest
    (someone who knows the recipe: only re-decoding the source can tell)."""
    values = {name: _literal(value) for name, value in changes.items()}
    if forge:
        row = {**_row_by_key(store, key), **changes}
        values["row_digest"] = sql_quote(row_digest(row))
    dataset = lance.dataset(str(store / "frames.lance"))
    dataset.update(values, where=f"cache_key = {sql_quote(key)}")


def _row_by_key(store: Path, key: str) -> dict[str, Any]:
    columns = [name for name, _ in DIGEST_FIELDS]
    table = lance.dataset(str(store / "frames.lance")).to_table(
        columns=columns, filter=f"cache_key = {sql_quote(key)}"
    )
    return table.to_pylist()[0]


def _refused(store: Path, key: str, *, verify: bool = True) -> str:
    with pytest.raises(StoreIntegrityError) as caught:
        FrameStore.open(store, verify=verify).get(key)
    message = str(caught.value)
    assert len(message.splitlines()) == 1, message
    assert str(store) in message and key in message
    assert f"videorl-kit cache repair --store {store}" in message
    return caught.value.problem


EDITS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "transposed shape": lambda r: {"frames_shape": [r["frames_shape"][i] for i in (0, 2, 1, 3)]},
    "shape, height and width transposed together": lambda r: {
        "frames_shape": [r["frames_shape"][i] for i in (0, 2, 1, 3)],
        "height": r["width"],
        "width": r["height"],
    },
    "timestamps shifted": lambda r: {"timestamps_s": [t + 9.0 for t in r["timestamps_s"]]},
    "frame indices": lambda r: {"frame_indices": list(range(len(r["frame_indices"])))},
    "source fps": lambda r: {"source_fps": r["source_fps"] * 10},
    "duration": lambda r: {"duration_s": r["duration_s"] + 1.0},
    "source frames": lambda r: {"source_frames": r["source_frames"] + 1},
    "visual tokens": lambda r: {"visual_tokens": 1},
    "source uri": lambda r: {"source_uri": "/etc/hostname"},
    "budget json": lambda r: {"budget_json": r["budget_json"].replace("}", ',"x":1}')},
    "budget json that is not json": lambda r: {"budget_json": "{not json"},
    "decoder version": lambda r: {"decoder_version": "other"},
    "frames sha256": lambda r: {"frames_sha256": "0" * 64},
    "block checksums": lambda r: {"frames_block_xxh3": [0] * len(r["frames_block_xxh3"])},
    "truncation": lambda r: {"truncation": "cut"},
    "decode warnings": lambda r: {"decode_warnings": ["forged"]},
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_row_edited_outside_the_kit_is_refused_with_the_repair_line(
    store: Path, edit: str
) -> None:
    row = _row(store)
    _edit(store, row["cache_key"], EDITS[edit](row))
    problem = _refused(store, row["cache_key"])
    assert any(word in problem for word in ("row_digest", "frames_shape", "budget_json")), problem


def test_a_shape_that_disagrees_with_height_and_width_is_refused_even_without_verify(
    store: Path, built_store: Path
) -> None:
    """The shape decides how the (checked) bytes become frames: always checked."""
    row = _row(store)
    t, h, w, c = row["frames_shape"]
    _edit(store, row["cache_key"], {"frames_shape": [t, w, h, c]})
    problem = _refused(store, row["cache_key"], verify=False)
    assert problem == f"has frames_shape {[t, w, h, c]} but height {h} and width {w}"


def test_timing_lists_of_another_length_than_the_frames_are_refused_even_without_verify(
    store: Path,
) -> None:
    row = _row(store)
    _edit(store, row["cache_key"], {"timestamps_s": [*row["timestamps_s"], 99.0]})
    problem = _refused(store, row["cache_key"], verify=False)
    n = row["frames_shape"][0]
    assert problem.endswith(f"but {n + 1} timestamps_s"), problem


def test_a_forged_digest_over_a_row_moved_to_another_key_is_refused(store: Path) -> None:
    """Someone who recomputes the digest still cannot serve a row under a key that is not the
    hash of the row's own key inputs (the content hash, budget, decoder...)."""
    row = _row(store)
    _edit(store, row["cache_key"], {"source_content_hash": "ab" * 32}, forge=True)
    problem = _refused(store, row["cache_key"])
    assert problem == "is stored under a key that is not the hash of its own key inputs"


def test_a_forged_digest_is_not_detected_on_read_but_by_cache_verify(store: Path) -> None:
    """The threat model: the digest is no signature. A forger who recomputes it is caught
    only by re-decoding the source (``cache verify``)."""
    row = _row(store)
    forged = [t + 0.5 for t in row["timestamps_s"]]
    _edit(store, row["cache_key"], {"timestamps_s": forged}, forge=True)
    assert FrameStore.open(store).get(row["cache_key"]).timestamps_s == forged
    report = verify_store(store, keys=[row["cache_key"]])
    assert [(c.status, c.detail) for c in report.checked] == [("mismatch", "timestamps differ")]


def test_the_digest_is_checked_once_per_reader_and_rows_read_whole(store: Path) -> None:
    reader = FrameStore.open(store)
    items = reader.get_many(reader.keys())
    assert len(items) == len(reader) and all(item.frames.size for item in items)
    assert reader._verified == set(range(len(reader)))
    unchecked = FrameStore.open(store, verify=False)
    unchecked.get_many(unchecked.keys())
    assert unchecked._verified == set()


def test_repair_decodes_an_edited_row_again(store: Path) -> None:
    row = _row(store)
    before = FrameStore.open(store).get(row["cache_key"])
    _edit(store, row["cache_key"], {"timestamps_s": [9.0] * len(row["timestamps_s"])})
    report = repair_store(store)
    assert report.redecoded == [row["cache_key"]] and report.removed == []
    after = FrameStore.open(store).get(row["cache_key"])
    assert after.timestamps_s == before.timestamps_s
    assert np.array_equal(after.frames, before.frames)


# -- a cache key is never a path ----------------------------------------------------------

TRAVERSAL = "../" * 12 + "tmp/escaped"


def test_a_key_that_is_not_a_cache_key_refuses_the_store_at_open(store: Path) -> None:
    row = _row(store)
    _edit(store, row["cache_key"], {"cache_key": TRAVERSAL})
    with pytest.raises(StoreIntegrityError) as caught:
        FrameStore.open(store)
    message = str(caught.value)
    assert len(message.splitlines()) == 1 and str(store) in message
    assert f"has cache key {TRAVERSAL!r}, which is not a cache key (64 lowercase hex" in message
    assert "cache repair" in message
    with pytest.raises(StoreIntegrityError, match="which is not a cache key"):
        StoreTables.open(store)  # every command that opens the store: status, build, verify
    with pytest.raises(StoreIntegrityError, match="which is not a cache key"):
        FrameStore(StoreTables.open(store, check=False))  # a reader made another way


def test_export_writes_nothing_for_a_store_with_a_traversal_key(
    store: Path, tmp_path: Path
) -> None:
    row = _row(store)
    target = tmp_path / "escaped"
    evil = "../" * 24 + str(target).lstrip("/")
    _edit(store, row["cache_key"], {"cache_key": evil})
    out = tmp_path / "export" / "x"
    with pytest.raises(StoreIntegrityError):
        export_store(store, out)
    assert not target.exists() and not (out / "frames").exists()


def test_repair_removes_a_row_whose_key_is_not_a_cache_key(store: Path) -> None:
    row = _row(store)
    _edit(store, row["cache_key"], {"cache_key": TRAVERSAL})
    report = repair_store(store)
    assert [r["cache_key"] for r in report.removed] == [TRAVERSAL]
    assert f"removed {TRAVERSAL!r} (" in report.summary()
    reader = FrameStore.open(store)  # readable again; the sample's key is decoded anew
    assert TRAVERSAL not in reader
    assert row["cache_key"] in reader and reader.get(row["cache_key"]).frames.size


def test_a_samples_key_that_is_not_a_cache_key_is_named_as_such(store: Path) -> None:
    with pytest.raises(MissingKeyError) as caught:
        FrameStore.open(store).get_many([TRAVERSAL + "\x1b[2J"])
    message = str(caught.value)
    assert "is not a cache key" in message and str(store) in message
    assert "\x1b" not in message  # shown escaped


# -- cache verify never reads a FIFO or device ----------------------------------------------

VERIFY = """
import json, sys
from videorl_kit.store.verify import verify_store
report = verify_store(sys.argv[1], sample=None)
print(json.dumps([[c.cache_key, c.status, c.detail] for c in report.checked]))
"""


@pytest.mark.parametrize("source", ["fifo", "/dev/zero", "/dev/urandom"])
def test_verify_reports_a_fifo_or_device_source_as_unverifiable(
    store: Path, tmp_path: Path, source: str
) -> None:
    """The row is forged consistently (digest recomputed), so only verify's own check of the
    source stands between it and a read that never ends."""
    if source == "fifo":
        source = str(tmp_path / "source.mp4")
        os.mkfifo(source)
    row = _row(store)
    _edit(store, row["cache_key"], {"source_uri": source}, forge=True)
    script = tmp_path / "verify.py"
    script.write_text(VERIFY)
    try:
        cp = subprocess.run(
            [sys.executable, str(script), str(store)], capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"verify hung on a row whose source is {source}")
    assert cp.returncode == 0, cp.stderr
    checked = {key: (status, detail) for key, status, detail in json.loads(cp.stdout)}
    kind = "a FIFO" if source.endswith(".mp4") else "a character device"
    assert checked.pop(row["cache_key"]) == (
        "unverifiable",
        f"the source is not a regular file ({kind}); not read",
    )
    assert {status for status, _ in checked.values()} == {"ok"}  # and verify went on


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_hashing_a_source_never_reads_a_fifo_or_device(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "v.mp4"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    code = (
        "import sys\nfrom videorl_kit.media.hashing import file_content_hash\n"
        "try:\n    file_content_hash(sys.argv[1])\nexcept Exception as exc:\n    print(exc)\n"
    )
    cp = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60
    )
    expected = "a FIFO" if kind == "fifo" else "a character device"
    assert cp.stdout.strip() == f"{path}: not a regular file ({expected})", cp.stderr
