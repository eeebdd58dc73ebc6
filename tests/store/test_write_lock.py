"""The store's write lock (videorl_kit.store.lock): held by writers only, released when its
holder dies, bounded waits, and a lock file that is a link or a FIFO is one line, never a hang.

Processes that hold the lock here are real separate processes (``flock`` is per process)."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from videorl_kit.cli import app
from videorl_kit.store import FrameStore, StoreError
from videorl_kit.store.errors import StoreIntegrityError
from videorl_kit.store.lock import LOCK_NAME, held, lock_path, write_lock
from videorl_kit.store.tables import StoreTables

runner = CliRunner()

HOLDER = """
import sys, time
from videorl_kit.store.lock import write_lock
with write_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _hold(store: Path, seconds: float = 60.0) -> subprocess.Popen[str]:
    """Another process that takes the store's write lock and keeps it ``seconds``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store), str(seconds)],
        stdout=subprocess.PIPE, text=True, env=env, start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


@pytest.fixture
def store_copy(built_store: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(built_store, copy, symlinks=True)
    return copy


def test_a_killed_holder_releases_the_lock(store_copy: Path) -> None:
    proc = _hold(store_copy)
    with (
        pytest.raises(StoreError, match="held the store's write lock") as info,
        write_lock(store_copy, timeout_s=0.3),
    ):
        pass
    assert str(lock_path(store_copy)) in str(info.value) and "\n" not in str(info.value)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    started = time.monotonic()
    with write_lock(store_copy, timeout_s=10):
        assert held(store_copy)
    assert time.monotonic() - started < 5
    assert not held(store_copy)


def test_a_writer_waits_for_the_holder_then_commits(store_copy: Path) -> None:
    proc = _hold(store_copy, seconds=1.0)
    try:
        started = time.monotonic()
        StoreTables.create(store_copy).register_budget("video", {"fps": 9.0})
        assert time.monotonic() - started >= 0.3  # it waited for the other process
    finally:
        proc.wait(timeout=30)
    assert any(b["budget"] == {"fps": 9.0} for b in StoreTables.open(store_copy).budgets().values())


def test_readers_take_no_lock(store_copy: Path) -> None:
    """While another process holds the lock, every read path answers at once, and a store
    without a lock file (read-only, or built before the lock) gets none from a reader."""
    proc = _hold(store_copy)
    try:
        started = time.monotonic()
        assert len(FrameStore.open(store_copy)) > 0
        for argv in (["status"], ["verify", "-n", "0"]):
            result = runner.invoke(app, ["cache", *argv, "--store", str(store_copy)])
            assert result.exit_code == 0, result.output
        assert time.monotonic() - started < 60
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    lock_path(store_copy).unlink()
    FrameStore.open(store_copy)
    runner.invoke(app, ["cache", "status", "--store", str(store_copy)])
    assert not lock_path(store_copy).exists()


def test_reentrant_and_forgotten_in_a_forked_child(tmp_path: Path) -> None:
    with write_lock(tmp_path), write_lock(tmp_path):
        assert held(tmp_path)
        with warnings.catch_warnings():  # lance warns on any fork; this child runs no lance
            warnings.simplefilter("ignore")
            pid = os.fork()
        if pid == 0:  # the child neither holds it nor keeps the parent's file open
            os._exit(0 if not held(tmp_path) else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    assert not held(tmp_path)
    proc = _hold(tmp_path, seconds=0)  # another process gets it at once
    proc.wait(timeout=30)


@pytest.mark.parametrize("kind", ["link", "fifo", "folder"])
def test_a_lock_file_that_is_not_a_file_is_one_line(store_copy: Path, kind: str) -> None:
    lock = store_copy / LOCK_NAME
    lock.unlink()
    if kind == "link":
        lock.symlink_to(store_copy.parent / "elsewhere")
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    with (
        pytest.raises(StoreIntegrityError, match="write lock") as info,
        write_lock(store_copy, timeout_s=1),
    ):
        pass
    assert "\n" not in str(info.value) and str(lock) in str(info.value)
    assert not (store_copy.parent / "elsewhere").exists()


def _create_and_write(root: str, index: int, barrier: Any, results: Any) -> None:
    """One of several processes that create one store at the same moment and write to it."""
    try:
        from videorl_kit.store.trajectories import append_trajectories

        barrier.wait(timeout=60)
        tables = StoreTables.create(root)
        tables.register_budget("video", {"fps": float(index + 1)})  # one each
        tables.register_budget("video", {"fps": 99.0})  # the same in every process
        rows = [
            {"trajectory_id": tid, "sample_id": "s", "task_id": "t", "response": tid,
             "source": "test"}
            for tid in (f"own-{index}", "shared")
        ]  # fmt: skip
        append_trajectories(tables, rows)
        tables.record_versions()
        StoreTables.open(root)
        results.put((index, "ok"))
    except BaseException as exc:  # reported to the test, which names it
        results.put((index, f"{type(exc).__name__}: {exc}"))


def test_processes_creating_one_store_at_once_all_succeed(tmp_path: Path) -> None:
    """Four processes create one new store at the same moment, each records budgets and appends
    rows: none fails (before the lock 4 rounds of 4 each gave a Lance UpdateConfig conflict), every
    budget and every row is there, the shared row once."""
    context = multiprocessing.get_context("spawn")
    n = 4
    barrier, results = context.Barrier(n), context.Queue()
    root = str(tmp_path / "store")
    procs = [
        context.Process(target=_create_and_write, args=(root, i, barrier, results))
        for i in range(n)
    ]
    for proc in procs:
        proc.start()
    outcomes = dict(results.get(timeout=120) for _ in procs)
    for proc in procs:
        proc.join(timeout=60)
    assert outcomes == dict.fromkeys(range(n), "ok"), outcomes
    tables = StoreTables.open(root)
    fps = sorted(b["budget"]["fps"] for b in tables.budgets().values())
    assert fps == [*(float(i + 1) for i in range(n)), 99.0]
    ids = tables.table("trajectories").to_table(columns=["trajectory_id"]).column(0).to_pylist()
    assert sorted(ids) == sorted([*(f"own-{i}" for i in range(n)), "shared"])
