"""engine="ray": Ray workers decode *and* write the frames table, in chunks, on 2 local CPUs.

Every test runs the real pipeline (Ray Data, lance-ray, Lance, PyAV); none mocks Ray. The
tests share one Ray instance (starting one costs seconds on 2 CPUs); the crash test runs
its own build, with its own Ray, in a subprocess that it SIGKILLs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tests.media_kit import make_video
from tests.procfs import live_processes
from tests.store.fault_injection import hang_on_marker
from tests.store.spec_files import video_rows, write_spec
from tests.store.store_probe import frames_content, kill_after_first_commit
from videorl_kit.store import FrameStore, build_cache
from videorl_kit.store.builder import BuildHooks
from videorl_kit.store.commands import _print_summary
from videorl_kit.store.commit import BatchCommitter, CommitEvent
from videorl_kit.store.schema import FRAMES_SCHEMA
from videorl_kit.store.tables import StoreTables
from videorl_kit.store.worker import DecodeResult, DecodeTask, decode_task

pytest.importorskip("ray.data")
pytest.importorskip("lance_ray")

REPO = Path(__file__).resolve().parents[2]
VOLATILE = {"created_at", "decode_seconds", "updated_at", "frames"}
"""Columns that differ between two builds of the same inputs (``frames`` is compared as arrays)."""


# -- decode functions run by the Ray workers (importable by name) ---------------------------

OTHER_BUILDER_NOTE = "other_builder_store.txt"
RACE_MARKER = "race"


def decode_while_another_builder_commits(task: DecodeTask) -> DecodeResult:
    """The real decode; for a ``race`` file, another builder commits the same row meanwhile.

    The store that "other builder" writes to is named in a note next to the media file. It
    commits through the kit's own committer (``merge_insert``), as a concurrent local build
    of the same store would, while the Ray build is still decoding the chunk.
    """
    result = decode_task(task)
    note = Path(task.source_uri).parent / OTHER_BUILDER_NOTE
    if result.status == "ok" and RACE_MARKER in Path(task.source_uri).name and note.exists():
        assert result.row is not None
        committer = BatchCommitter(StoreTables(note.read_text(encoding="utf-8")))
        committer.add_frames(dict(result.row))
        committer.flush()
    return result


# -- helpers -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_ray() -> Iterator[None]:
    """One local 2-CPU Ray instance for the in-process tests (builds find and keep it)."""
    import ray

    from videorl_kit.store.engine_ray import start_local_ray

    assert not ray.is_initialized()
    start_local_ray(ray, 2)
    yield
    ray.shutdown()


def rows_of(store: Path, table: str, drop: set[str] = VOLATILE) -> list[dict]:
    data = StoreTables(store).table(table).to_table()
    data = data.select([n for n in data.schema.names if n not in drop])
    return sorted(data.to_pylist(), key=repr)


def operations(store: Path, versions: list[int]) -> list[str]:
    """The Lance transaction operation that produced each frames-table version."""
    dataset = StoreTables(store).table("frames")
    return [type(dataset.read_transaction(v).operation).__name__ for v in versions]


def failure_rows(store: Path) -> list[dict]:
    columns = ["failure_id", "source_uri", "cache_key", "error_class", "attempts"]
    return sorted(
        StoreTables(store).table("failures").to_table(columns=columns).to_pylist(), key=repr
    )


# -- tests ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_ray_build_equals_a_local_build(spec_dir: Path, tmp_path: Path) -> None:
    import ray

    assert not ray.is_initialized()  # the build starts a Ray instance of its own ...
    make_video(spec_dir / "hang_me.mp4", 8, 10, (96, 64), seed=40)  # its decoder never returns
    names = ["a.mp4", "b.mp4", "c.mp4", "a_copy.mp4", "zero.mp4", "hang_me.mp4"]
    spec = write_spec(spec_dir, "ray-task", video_rows(names))
    options = {"workers": 2, "item_timeout_s": 2, "batch_items": 2}
    ray_events: list[CommitEvent] = []
    via_ray = build_cache(
        [spec], tmp_path / "ray", engine="ray",
        _hooks=BuildHooks(hang_on_marker, on_commit=ray_events.append), **options,
    )  # fmt: skip
    assert not ray.is_initialized()  # ... and shuts it down at the end
    local_events: list[CommitEvent] = []
    local = build_cache(
        [spec], tmp_path / "local", _hooks=BuildHooks(hang_on_marker, local_events.append),
        **options,
    )  # fmt: skip

    for name in ("n_input", "n_ok", "n_failed", "n_skipped", "n_decoded", "failed_by_class"):
        assert getattr(via_ray, name) == getattr(local, name), name
    assert via_ray.invariant_holds and via_ray.engine == "ray"
    assert via_ray.failed_by_class == {"EmptyFileError": 1, "DecodeTimeoutError": 1}
    assert via_ray.engine_fallback is None and via_ray.as_dict()["engine_fallback"] is None

    # same rows: every frames column but the timing ones, the frames themselves, failures
    # and samples
    for table in ("frames", "samples"):
        assert rows_of(tmp_path / "ray", table) == rows_of(tmp_path / "local", table), table
    assert failure_rows(tmp_path / "ray") == failure_rows(tmp_path / "local")
    ray_store, local_store = FrameStore.open(tmp_path / "ray"), FrameStore.open(tmp_path / "local")
    local_keys = local_store.keys()
    assert sorted(ray_store.keys()) == sorted(local_keys) and len(local_keys) == 3
    for key in local_keys:
        np.testing.assert_array_equal(ray_store.get(key).frames, local_store.get(key).frames)

    # Ray workers decoded: every decode ran in a process other than this one
    stats = via_ray.engine_stats
    assert stats["driver_pid"] == os.getpid()
    assert stats["decode_pids"] and os.getpid() not in stats["decode_pids"]
    assert stats["ray_task_pids"] and os.getpid() not in stats["ray_task_pids"]
    # ... and Ray workers wrote the frames: one lance-ray Append per chunk with ok items
    # (3 ok tasks in chunks of 2 tasks: a+b, c+zero, hang_me), never the committer's
    # merge_insert (an Update), which wrote every frames row of the local build
    frames_commits = [e.frames_version for e in ray_events if e.frames_rows]
    assert stats["frames_commits"] == len(frames_commits) == 2
    assert operations(tmp_path / "ray", frames_commits) == ["Append", "Append"]
    assert [e.frames_rows for e in ray_events if e.frames_rows] == [2, 1]
    dataset = StoreTables(tmp_path / "ray").table("frames")
    for event in (e for e in ray_events if e.frames_rows):
        fragments = dataset.read_transaction(event.frames_version).operation.fragments
        assert 1 <= len(fragments) <= 2  # one data file per Ray write task, one per block
        assert sum(f.physical_rows for f in fragments) == event.frames_rows
    assert stats["rows_written"] == 3 and stats["duplicates_removed"] == 0
    local_commits = [e.frames_version for e in local_events if e.frames_rows]
    assert set(operations(tmp_path / "local", local_commits)) == {"Update"}
    version = StoreTables(tmp_path / "ray").table("frames").version
    again = build_cache([spec], tmp_path / "ray", workers=2, engine="ray")
    assert again.n_decoded == 0 and again.n_already_cached == 4 and again.n_commits == 0
    assert StoreTables(tmp_path / "ray").table("frames").version == version


@pytest.mark.slow
def test_a_key_committed_meanwhile_by_another_builder_keeps_one_row(
    shared_ray: None, spec_dir: Path, tmp_path: Path
) -> None:
    make_video(spec_dir / "race.mp4", 8, 10, (96, 64), seed=41)
    spec = write_spec(spec_dir, "race-task", video_rows(["a.mp4", "race.mp4"]))
    store = tmp_path / "store"
    (spec_dir / OTHER_BUILDER_NOTE).write_text(str(store), encoding="utf-8")
    events: list[CommitEvent] = []
    summary = build_cache(
        [spec], store, workers=2, engine="ray",
        _hooks=BuildHooks(decode_while_another_builder_commits, on_commit=events.append),
    )  # fmt: skip
    assert summary.n_ok == 2 and summary.engine_fallback is None
    assert summary.engine_stats["duplicates_removed"] == 1

    tables = StoreTables(store)
    (append_version,) = [e.frames_version for e in events]
    assert operations(store, [append_version]) == ["Append"]
    # right after the Ray chunk's commit the key had two rows: the other builder's, then ours
    race_filter = "source_uri LIKE '%race.mp4'"
    both = tables.table("frames", version=append_version).to_table(filter=race_filter)
    assert both.num_rows == 2
    earliest = min(both.column("created_at").to_pylist())
    # now one row per key, and the row kept is the one committed first
    kept = tables.table("frames").to_table(filter=race_filter)
    assert kept.num_rows == 1 and kept.column("created_at").to_pylist() == [earliest]
    keys = tables.table("frames").to_table(columns=["cache_key"]).column("cache_key").to_pylist()
    assert len(keys) == len(set(keys)) == 2
    # the Ray-written table reads back through Ray Data's own Lance reader
    import ray.data

    with warnings.catch_warnings():  # Ray's reader calls a deprecated Lance accessor
        warnings.simplefilter("ignore", DeprecationWarning)
        read = ray.data.read_lance(tables.uri("frames"), columns=["cache_key"]).take_all()
    assert sorted(row["cache_key"] for row in read) == sorted(keys)


def test_duplicates_left_by_an_interrupted_ray_build_are_removed(
    spec_dir: Path, tmp_path: Path
) -> None:
    spec = write_spec(spec_dir, "dup-task", video_rows(["a.mp4", "b.mp4", "c.mp4"]))
    store = tmp_path / "store"
    build_cache([spec], store, workers=2)
    clean = frames_content(store)
    # a build killed between its Append commit and its duplicate check leaves copies
    uri = str(store / "frames.lance")
    copies = lance.dataset(uri).to_table(blob_handling="all_binary").slice(0, 2)
    lance.write_dataset(copies.cast(FRAMES_SCHEMA), uri, mode="append")
    assert lance.dataset(uri).count_rows() == 5

    again = build_cache([spec], store, workers=2, engine="ray")  # nothing to decode
    assert again.n_decoded == 0 and again.n_already_cached == 3
    assert again.engine_stats["duplicates_removed"] == 2
    assert frames_content(store) == clean
    reader = FrameStore.open(store)  # the rows kept still read
    assert all(reader.get(key).frames.size for key, _ in clean)


@pytest.mark.slow
def test_a_failing_ray_pipeline_finishes_locally_and_says_so(
    shared_ray: None,
    spec_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # a decode function the Ray workers cannot import (its folder joined sys.path after
    # Ray started), as on a cluster whose workers lack a module the driver has
    late = tmp_path / "late_modules"
    late.mkdir()
    (late / "late_decoders_for_ray_test.py").write_text(
        "from videorl_kit.store.worker import decode_task\n\n\n"
        "def late_decode(task):\n    return decode_task(task)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(late))
    from late_decoders_for_ray_test import late_decode  # type: ignore[import-not-found]

    spec = write_spec(spec_dir, "fallback-task", video_rows(["a.mp4", "b.mp4", "zero.mp4"]))
    summary = build_cache(
        [spec], tmp_path / "ray", workers=2, engine="ray", _hooks=BuildHooks(late_decode)
    )
    assert summary.engine == "ray"
    fallback = summary.engine_fallback
    assert fallback is not None and summary.as_dict()["engine_fallback"] == fallback
    assert "the Ray pipeline failed on chunk 1/1" in fallback
    assert "late_decoders_for_ray_test" in fallback
    assert "3 item(s) finished by the local engine" in fallback
    assert summary.engine_stats["frames_commits"] == 0
    assert summary.n_ok == 2 and summary.failed_by_class == {"EmptyFileError": 1}
    _print_summary(summary)  # the CLI's summary: the fallback is a warning on stderr
    assert "warning: --engine ray fell back to the local engine" in capsys.readouterr().err
    local = build_cache([spec], tmp_path / "local", workers=2)
    assert frames_content(tmp_path / "ray") == frames_content(tmp_path / "local")
    assert local.n_ok == summary.n_ok


# -- crash safety --------------------------------------------------------------------------

N_VIDEOS = 6
BUILD_SCRIPT = """
import sys
from tests.store.fault_injection import slow_decode
from videorl_kit.store import build_cache
from videorl_kit.store.builder import BuildHooks
build_cache([sys.argv[1]], sys.argv[2], workers=2, batch_items=2, engine="ray",
            _hooks=BuildHooks(decode_fn=slow_decode))
"""


RAY_AGENTS = ("ray::DashboardAgent", "ray::RuntimeEnvAgent")
"""Ray's per-node agent processes; they wait for their raylet longer than this test does."""


def group_processes(pgid: int) -> list[str]:
    """Command lines of the live processes of process group ``pgid``."""
    return [p.command for p in live_processes() if p.process_group == pgid]


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


@pytest.mark.slow
def test_sigkill_mid_ray_build_then_resume_equals_a_clean_build(
    shared_ray: None, tmp_path: Path
) -> None:
    folder = tmp_path / "specs"
    names = [f"v{i}.mp4" for i in range(N_VIDEOS)]
    for i, name in enumerate(names):
        make_video(folder / name, 10, 10, (96, 64), seed=200 + i)
    spec = write_spec(folder, "crashy-ray", video_rows(names))
    store = tmp_path / "killed"
    session = kill_after_first_commit(BUILD_SCRIPT, spec, store, REPO)  # 2 tasks a chunk
    try:
        # Ray's GCS, raylet and workers, and the decode processes of the Ray tasks, exit
        # with the killed build
        deadline = time.monotonic() + 20
        left = group_processes(session)
        while time.monotonic() < deadline:
            left = [c for c in group_processes(session) if not c.startswith(RAY_AGENTS)]
            if not left:
                break
            time.sleep(0.2)
        assert not left, f"processes outlived the killed build: {left}"
    finally:
        kill_group(session)  # the build's session: Ray's agents, or all of it on a failure

    partial = frames_content(store)
    assert 2 <= len(partial) < N_VIDEOS, "kill did not land mid-build"
    assert len(partial) % 2 == 0, "a chunk was committed partially"
    assert len({k for k, _ in partial}) == len(partial)

    clean = tmp_path / "clean"
    build_cache([spec], clean, workers=2, batch_items=2)
    # what a kill between a chunk's fragment writes and its commit leaves: data files of
    # the next chunk that no version references (written here with Lance's fragment writer,
    # as lance-ray's write tasks do); readers never see them
    uri = str(store / "frames.lance")
    done = {k for k, _ in partial}
    pending = lance.dataset(str(clean / "frames.lance")).to_table(blob_handling="all_binary")
    pending = pending.filter(
        pc.invert(pc.is_in(pending.column("cache_key"), value_set=pa.array(sorted(done))))
    )
    files_before = len(list((store / "frames.lance" / "data").iterdir()))
    lance.fragment.write_fragments(
        pending.slice(0, 2).cast(FRAMES_SCHEMA), uri, schema=FRAMES_SCHEMA,
        data_storage_version=lance.dataset(uri).data_storage_version,
    )  # fmt: skip
    assert len(list((store / "frames.lance" / "data").iterdir())) > files_before
    assert frames_content(store) == partial

    resumed = build_cache([spec], store, workers=2, batch_items=2, engine="ray")
    assert resumed.invariant_holds and resumed.n_ok == N_VIDEOS
    assert resumed.engine_fallback is None
    assert resumed.n_already_cached == len(partial)
    assert resumed.n_decoded == N_VIDEOS - len(partial)
    assert frames_content(store) == frames_content(clean)
    keys = [k for k, _ in frames_content(store)]
    assert len(keys) == len(set(keys)) == N_VIDEOS
    assert rows_of(store, "samples") == rows_of(clean, "samples")

    # and nothing more happens on a third run
    version = StoreTables(store).table("frames").version
    third = build_cache([spec], store, workers=2, engine="ray")
    assert third.n_decoded == 0 and third.n_commits == 0
    assert StoreTables(store).table("frames").version == version
