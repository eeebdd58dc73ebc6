"""A store damaged on disk: detected on read, one clear line from every command, repairable.

Each test damages a real store (a copy of the session's built store) the way disks and
people do: bytes flipped inside a frames cell, a data file truncated or deleted, the newest
manifest deleted, the whole store read-only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import lance
import numpy as np
import pytest
from typer.testing import CliRunner

from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.store import CachedSampleDataset, FrameStore, StoreIntegrityError
from videorl_kit.store.frame_bytes import blob_locations
from videorl_kit.store.repair import UNRECOVERABLE, repair_store
from videorl_kit.store.tables import StoreTables

runner = CliRunner()


@pytest.fixture
def store(built_store: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(built_store, copy)
    return copy


@pytest.fixture
def spec(built_store: Path) -> Path:
    return built_store.parent / "built-task.yaml"


def frames_of(store: Path, *, verify: bool = True) -> dict[str, np.ndarray]:
    reader = FrameStore.open(store, verify=verify)
    return {item.cache_key: item.frames.copy() for item in reader.get_many(reader.keys())}


def flip_bytes_in_cell(store: Path, codec: str = "none") -> str:
    """XOR 16 bytes in the middle of the first frames cell stored with ``codec`` ("none":
    raw pixels, the case a decompressor cannot catch); returns its cache key."""
    dataset = lance.dataset(str(store / "frames.lance"))
    codecs = dataset.to_table(columns=["cache_key", "frames_codec"]).to_pylist()
    row = next(i for i, r in enumerate(codecs) if r["frames_codec"] == codec)
    location = blob_locations(dataset, "frames")[row]
    assert location.path is not None
    middle = location.position + location.size // 2
    with open(location.path, "r+b") as handle:
        handle.seek(middle)
        data = handle.read(16)
        handle.seek(middle)
        handle.write(bytes(b ^ 0xFF for b in data))
    return codecs[row]["cache_key"]


def data_files(store: Path, table: str = "frames") -> list[Path]:
    return sorted((store / f"{table}.lance" / "data").iterdir())


def truncate_data_file(store: Path) -> None:
    path = data_files(store)[0]
    os.truncate(path, path.stat().st_size // 2)


def delete_data_file(store: Path) -> None:
    data_files(store)[0].unlink()


def delete_latest_manifest(store: Path) -> None:
    """Remove the frames table's newest manifest (V2 names: u64::MAX - version)."""
    versions = store / "frames.lance" / "_versions"
    newest = min(versions.glob("*.manifest"), key=lambda p: int(p.stem))
    newest.unlink()


DAMAGES: dict[str, Callable[[Path], None]] = {
    "truncated data file": truncate_data_file,
    "deleted data file": delete_data_file,
    "deleted latest manifest": delete_latest_manifest,
}
COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "cache status": lambda store, spec: ["cache", "status", "--store", str(store)],
    "cache verify": lambda store, spec: ["cache", "verify", "--store", str(store)],
    "build-cache": lambda store, spec: ["build-cache", str(spec), "--store", str(store)],
}


# -- B: integrity on read --------------------------------------------------------------------


def test_flipped_bytes_are_detected_on_read(store: Path) -> None:
    intact = frames_of(store)
    key = flip_bytes_in_cell(store)
    with pytest.raises(StoreIntegrityError) as caught:
        FrameStore.open(store).get(key)
    message = str(caught.value)
    assert len(message.splitlines()) == 1
    assert str(store) in message and key in message and "img.png" in message
    assert f"videorl-kit cache repair --store {store}" in message
    # the opt-out for trusted hot loops reads the damaged bytes without the check
    unchecked = FrameStore.open(store, verify=False).get(key).frames
    assert not np.array_equal(unchecked, intact[key])
    assert not np.array_equal(FrameStore.open(store).get(key, verify=False).frames, intact[key])
    with pytest.raises(StoreIntegrityError):
        FrameStore.open(store, verify=False).get(key, verify=True)


def test_the_torch_dataset_checks_by_default_and_can_opt_out(store: Path) -> None:
    flip_bytes_in_cell(store)
    checked = CachedSampleDataset(store)
    with pytest.raises(StoreIntegrityError):
        for index in range(len(checked)):
            checked[index]
    unchecked = CachedSampleDataset(store, verify=False)
    assert all(unchecked[i] for i in range(len(unchecked)))


# -- C: damaged stores give one clear line ---------------------------------------------------


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_store_gives_one_line(store: Path, spec: Path, damage: str, command: str) -> None:
    DAMAGES[damage](store)
    with pytest.raises(StoreIntegrityError) as caught:
        runner.invoke(app, COMMANDS[command](store, spec), catch_exceptions=False)
    message = str(caught.value)
    assert len(message.splitlines()) == 1, message
    assert str(store) in message and "cache repair" in message
    expected = {"truncated data file": "truncated", "deleted data file": "is missing",
                "deleted latest manifest": "manifests of the newer versions are gone"}  # fmt: skip
    assert expected[damage] in message


def _run_cli_on_read_only(store: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run the CLI with ``store`` read-only: a read-only bind mount for root (permissions do
    not stop root), permissions otherwise."""
    command = [sys.executable, "-c", "from videorl_kit.cli import main; main()", *argv]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    if os.geteuid() != 0:
        for path in [store, *store.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    script = (
        f'mount --bind "{store}" "{store}" && mount -o remount,bind,ro "{store}" "{store}" '
        '&& exec "$@"'
    )
    wrapped = ["unshare", "-m", "sh", "-c", script, "sh", *command]
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a read-only mount here: {probe.stderr.decode().strip()}")
    return subprocess.run(wrapped, capture_output=True, text=True, env=env, timeout=300)


def test_read_only_store_gives_one_line(store: Path, spec: Path) -> None:
    before = {p: p.stat().st_mtime_ns for p in store.rglob("*")}
    result = _run_cli_on_read_only(store, ["build-cache", str(spec), "--store", str(store)])
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "cannot write to the store" in lines[0] and str(store) in lines[0]
    assert {p: p.stat().st_mtime_ns for p in store.rglob("*")} == before


# -- D: repair -------------------------------------------------------------------------------


def _assert_healthy(store: Path, expected: dict[str, np.ndarray]) -> None:
    verify = runner.invoke(app, ["cache", "verify", "--store", str(store), "-n", "0", "--json"])
    assert verify.exit_code == 0, verify.output
    assert json.loads(verify.stdout)["counts"] == {"ok": len(expected)}
    found = frames_of(store)
    assert found.keys() == expected.keys()
    assert all(np.array_equal(found[k], expected[k]) for k in expected)


@pytest.mark.parametrize("damage", ["flipped bytes", *sorted(DAMAGES)])
def test_repair_restores_the_frames(store: Path, spec: Path, damage: str) -> None:
    intact = frames_of(store)
    if damage == "flipped bytes":
        flip_bytes_in_cell(store)
    else:
        DAMAGES[damage](store)
    result = runner.invoke(app, ["cache", "repair", "--store", str(store), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["changed"] and not report["removed"]
    if damage == "deleted latest manifest":
        # the rows committed in the lost version come back from the samples that need them
        assert report["accepted_versions"]
    _assert_healthy(store, intact)
    again = repair_store(store)
    assert not again.changed
    assert "nothing to repair" in again.summary()


def test_repair_removes_what_it_cannot_recover(store: Path, tmp_path: Path) -> None:
    intact = frames_of(store)
    key = flip_bytes_in_cell(store, codec="lz4")
    rows = FrameStore.open(store).metadata().select(["cache_key", "source_uri"]).to_pylist()
    source = Path(next(r["source_uri"] for r in rows if r["cache_key"] == key))
    moved = tmp_path / "elsewhere.mp4"
    source.rename(moved)  # the source is gone: the row cannot be decoded again
    try:
        report = repair_store(store)
        assert not repair_store(store).changed  # the removal is recorded: nothing left to do
    finally:
        moved.rename(source)
    assert [r["cache_key"] for r in report.removed] == [key]
    assert "source file is gone" in report.removed[0]["reason"]
    assert "build-cache" in report.summary()
    failures = StoreTables.open(store).table("failures").to_table().to_pylist()
    assert [(f["cache_key"], f["error_class"]) for f in failures] == [(key, UNRECOVERABLE)]
    del intact[key]
    _assert_healthy(store, intact)


def test_build_cache_repair_repairs_then_builds(store: Path, spec: Path) -> None:
    intact = frames_of(store)
    delete_data_file(store)
    with pytest.raises(UserError):
        runner.invoke(
            app, ["build-cache", str(spec), "--store", str(store)], catch_exceptions=False
        )
    result = runner.invoke(
        app, ["build-cache", str(spec), "--store", str(store), "--repair", "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["repair"]["changed"] and payload["n_failed"] == 0
    _assert_healthy(store, intact)
