"""A data file cut short or deleted while a reader has the store open: one line, never a signal.

A reader checks the data files when it opens a store (``tests/store/test_damage.py``); a file
cut after that must still be refused when a read reaches it. Each case runs in a subprocess
that opens the store, reads every row, damages the data file holding one cell and reads that
cell again: it must exit through :class:`StoreIntegrityError` with the repair command, not die
of ``SIGBUS`` (a memory map of a file cut short) or an I/O error from inside Lance.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import os, sys
import lance
from videorl_kit.store import FrameStore, StoreIntegrityError
from videorl_kit.store.frame_bytes import blob_locations

store, codec, direct, damage = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
reader = FrameStore.open(store, direct_reads=direct)
reader.get_many(reader.keys())  # everything read once: files opened (and, before, mapped)
rows = reader.metadata().to_pylist()
row = max((i for i, r in enumerate(rows) if r["frames_codec"] == codec),
          key=lambda i: rows[i]["frames_shape"][0] * rows[i]["frames_shape"][1])
location = blob_locations(lance.dataset(store + "/frames.lance"), "frames")[row]
if damage == "cut":  # at the page boundary before the cell: every page of it is past the end
    os.truncate(location.path, location.position // 4096 * 4096)
else:
    os.unlink(location.path)
try:
    reader.get(rows[row]["cache_key"])
except StoreIntegrityError as exc:
    print(rows[row]["cache_key"])
    print(exc)
    sys.exit(3)
print("read without an error")
"""


@pytest.mark.parametrize("damage", ["cut", "deleted"])
@pytest.mark.parametrize("direct", [True, False], ids=["direct", "through-lance"])
@pytest.mark.parametrize("codec", ["lz4", "none"])
def test_a_data_file_damaged_under_an_open_reader_gives_one_line(
    built_store: Path, tmp_path: Path, codec: str, direct: bool, damage: str
) -> None:
    store = tmp_path / "store"
    shutil.copytree(built_store, store)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-c", SCRIPT, str(store), codec, "1" if direct else "0", damage]
    result = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode != -signal.SIGBUS, "the reader died of SIGBUS"
    assert result.returncode == 3, result.stdout + result.stderr
    key, message = result.stdout.strip().split("\n")
    assert str(store) in message and key in message
    assert f"videorl-kit cache repair --store {store}" in message
    if direct:
        expected = "was cut short after the store was opened" if damage == "cut" else "is gone"
        assert expected in message
