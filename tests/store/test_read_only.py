"""Readers never write: opening a missing, empty or incomplete store through any read path
(FrameStore, CachedSampleDataset, cache status / verify / export) changes nothing on disk and
says which folder is not a store and what to run."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from videorl_kit.cli import app
from videorl_kit.store import (
    CachedSampleDataset,
    FrameStore,
    StoreNotFoundError,
    export_store,
    store_status,
    verify_store,
)
from videorl_kit.store.tables import StoreTables

runner = CliRunner()


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` (itself included) with its size and mtime."""
    if not root.exists():
        return {}
    paths = [root, *root.rglob("*")]
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in paths}


def make_case(kind: str, tmp_path: Path) -> Path:
    store = tmp_path / "store"
    if kind == "empty":
        store.mkdir()
    elif kind == "incomplete":  # the first build died after creating frames.lance
        StoreTables.create(store)
        for name in ("failures", "samples", "trajectories"):
            shutil.rmtree(store / f"{name}.lance")
    return store


READERS: dict[str, Callable[[Path, Path], object]] = {
    "FrameStore.open": lambda store, out: FrameStore.open(store),
    "CachedSampleDataset": lambda store, out: CachedSampleDataset(store),
    "store_status": lambda store, out: store_status(store),
    "verify_store": lambda store, out: verify_store(store),
    "export_store": lambda store, out: export_store(store, out),
}


@pytest.mark.parametrize("kind", ["missing", "empty", "incomplete"])
def test_read_paths_refuse_a_missing_store_and_write_nothing(kind: str, tmp_path: Path) -> None:
    store = make_case(kind, tmp_path)
    out = tmp_path / "export"
    before = snapshot(tmp_path)
    hint = f"build it with `videorl-kit build-cache SPEC... --store {store}`"
    for name, read in READERS.items():
        with pytest.raises(StoreNotFoundError) as err:
            read(store, out)
        message = str(err.value)
        assert message.startswith(f"{store}: "), (name, message)
        assert hint in message, (name, message)
        if kind == "incomplete":
            assert "no failures.lance, samples.lance, trajectories.lance" in message
        assert snapshot(tmp_path) == before, name  # no folder, table or version written
    assert not out.exists()


@pytest.mark.parametrize("kind", ["missing", "incomplete"])
def test_cache_commands_refuse_a_missing_store_and_write_nothing(kind: str, tmp_path: Path) -> None:
    store = make_case(kind, tmp_path)
    before = snapshot(tmp_path)
    out = tmp_path / "export"
    for command in (
        ["cache", "status", "--store", str(store)],
        ["cache", "verify", "--store", str(store)],
        ["cache", "export", "--store", str(store), "--out", str(out)],
    ):
        result = runner.invoke(app, command)
        assert result.exit_code == 1, (command, result.output)
        assert isinstance(result.exception, StoreNotFoundError), command
        assert f"--store {store}`" in str(result.exception)
        assert snapshot(tmp_path) == before, command


def test_a_complete_store_is_opened_without_a_new_version(tmp_path: Path) -> None:
    store = tmp_path / "store"
    StoreTables.create(store)
    before = snapshot(tmp_path)
    FrameStore.open(store)
    store_status(store)
    assert len(CachedSampleDataset(store)) == 0
    assert snapshot(tmp_path) == before
