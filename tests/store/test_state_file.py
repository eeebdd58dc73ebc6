"""The store's version record (``videorl_kit_state.json``) cannot be used to hide a rollback.

Losing or garbling the record must not switch the lost-newest-manifest check off: a record
that is present but unreadable, or missing from a store with rows, is damage named with
its file and ``cache repair``; repair writes it again and says what that cannot tell.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from videorl_kit.cli import app
from videorl_kit.store import CachedSampleDataset, FrameStore, StoreIntegrityError
from videorl_kit.store.integrity import STATE_NAME, recorded_versions
from videorl_kit.store.repair import repair_store
from videorl_kit.store.tables import StoreTables

runner = CliRunner()

GARBAGE = {
    "truncated JSON": "[1, 2",
    "a list": "[1, 2]",
    "no versions": '{"other": 1}',
    "text versions": '{"versions": {"frames": "nine"}}',
    "negative version": '{"versions": {"frames": -1}}',
    "binary": "\udcff",
}


@pytest.fixture
def store(built_store: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(built_store, copy)
    return copy


def _garble(store: Path, text: str) -> None:
    (store / STATE_NAME).write_bytes(text.encode("utf-8", "surrogateescape"))


def _lose_newest_frames_manifest(store: Path) -> None:
    versions = store / "frames.lance" / "_versions"
    min(versions.glob("*.manifest"), key=lambda p: int(p.stem)).unlink()


@pytest.mark.parametrize("garbage", sorted(GARBAGE))
def test_an_unreadable_state_file_is_refused_by_every_reader(store: Path, garbage: str) -> None:
    _garble(store, GARBAGE[garbage])
    for open_store in (StoreTables.open, FrameStore.open, CachedSampleDataset):
        with pytest.raises(StoreIntegrityError) as caught:
            open_store(store)
        message = str(caught.value)
        assert str(store / STATE_NAME) in message, message
        assert f"cache repair --store {store}" in message, message
        assert "\n" not in message


def test_a_missing_state_file_is_refused_when_the_store_has_rows(store: Path) -> None:
    (store / STATE_NAME).unlink()
    with pytest.raises(StoreIntegrityError, match="is missing"):
        FrameStore.open(store)
    with pytest.raises(StoreIntegrityError) as caught:
        runner.invoke(app, ["cache", "status", "--store", str(store)], catch_exceptions=False)
    assert STATE_NAME in str(caught.value) and "cache repair" in str(caught.value)


def test_a_new_store_gets_a_state_file_and_an_empty_one_may_lack_it(tmp_path: Path) -> None:
    tables = StoreTables.create(tmp_path / "new")
    assert set(recorded_versions(tables.root)) == {"frames", "failures", "samples",
                                                   "trajectories"}  # fmt: skip
    (tables.root / STATE_NAME).unlink()  # an empty store of an older kit: nothing to lose
    StoreTables.open(tables.root)
    StoreTables.create(tables.root)
    assert (tables.root / STATE_NAME).exists()


@pytest.mark.parametrize("state", ["garbled", "deleted"])
def test_rollback_behind_a_lost_state_file_is_refused(store: Path, state: str) -> None:
    _lose_newest_frames_manifest(store)
    if state == "garbled":
        _garble(store, "[1, 2")
    else:
        (store / STATE_NAME).unlink()
    with pytest.raises(StoreIntegrityError) as caught:
        runner.invoke(app, ["cache", "status", "--store", str(store)], catch_exceptions=False)
    assert f"{STATE_NAME} " in str(caught.value) and "cache repair" in str(caught.value)


def test_repair_writes_the_record_again_and_the_check_works_after(store: Path) -> None:
    _garble(store, "not json")
    report = repair_store(store)
    assert report.changed and report.state_reset and "is not JSON" in report.state_reset
    assert "cache verify" in report.summary()
    assert json.loads((store / STATE_NAME).read_text())["versions"]["frames"] >= 1
    FrameStore.open(store)  # whole again
    assert not repair_store(store).changed  # idempotent
    _lose_newest_frames_manifest(store)  # the record catches the next rollback again
    with pytest.raises(StoreIntegrityError, match="manifests of the newer versions are gone"):
        FrameStore.open(store)


def test_build_cache_refuses_a_store_with_a_garbled_state_file(
    store: Path, built_store: Path
) -> None:
    _garble(store, "{")
    spec = built_store.parent / "built-task.yaml"
    with pytest.raises(StoreIntegrityError) as caught:
        runner.invoke(app, ["build-cache", str(spec), "--store", str(store)],
                      catch_exceptions=False)  # fmt: skip
    assert STATE_NAME in str(caught.value) and "cache repair" in str(caught.value)
    assert (store / STATE_NAME).read_text() == "{"  # not silently overwritten
