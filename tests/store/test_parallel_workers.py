"""`workers=N` decodes in N processes at the same time, none of them the builder's own, and a
worker killed at any moment fails only the item it was working on."""

from __future__ import annotations

import os
import shutil
import time
from functools import partial
from itertools import pairwise
from pathlib import Path

from tests.store.fault_injection import die_while_sending_on_marker, logged_decode
from tests.store.spec_files import video_rows, write_spec
from videorl_kit.store import build_cache
from videorl_kit.store.builder import BuildHooks
from videorl_kit.store.tables import StoreTables


def test_two_workers_decode_two_items_at_once_in_two_processes(
    spec_dir: Path, tmp_path: Path
) -> None:
    log_dir = tmp_path / "log"
    log_dir.mkdir()
    decode = partial(logged_decode, log_dir=str(log_dir))
    names = ["a.mp4", "b.mp4", "c.mp4", "one_frame.mp4"]
    spec = write_spec(spec_dir, "parallel", video_rows(names))

    summary = build_cache([spec], tmp_path / "store", workers=2, _hooks=BuildHooks(decode))

    assert (summary.n_decoded, summary.n_failed) == (4, 0), summary.failed_by_class
    records = [line.split() for line in (p.read_text() for p in sorted(log_dir.glob("*.log")))]
    assert len(records) == 4
    pids = {int(pid) for pid, _, _ in records}
    assert len(pids) == 2 and os.getpid() not in pids
    spans = sorted((float(start), float(end)) for _, start, end in records)
    # every item is held 0.3 s: with two workers some item starts before the previous ends
    assert any(later[0] < earlier[1] for earlier, later in pairwise(spans))


def test_a_worker_killed_while_sending_its_result_fails_only_its_item(
    spec_dir: Path, tmp_path: Path
) -> None:
    """Each worker has a pipe of its own: a worker killed mid-send (an out-of-memory kill
    while it pickles a large result) cannot block or corrupt the others' results. (pebble's
    shared result pipe stalled here for its 60 s lock timeout, then failed other items.)"""
    shutil.copy(spec_dir / "b.mp4", spec_dir / "oom_me.mp4")
    names = ["a.mp4", "oom_me.mp4", "c.mp4", "one_frame.mp4"]
    spec = write_spec(spec_dir, "killed-sending", video_rows(names))
    started = time.monotonic()

    hooks = BuildHooks(die_while_sending_on_marker)
    summary = build_cache([spec], tmp_path / "store", workers=2, _hooks=hooks)

    assert time.monotonic() - started < 50, "the other workers' results were held up"
    assert (summary.n_ok, summary.n_failed) == (3, 1) and summary.invariant_holds
    assert summary.failed_by_class == {"WorkerCrashError": 1}
    (failure,) = StoreTables.open(tmp_path / "store").table("failures").to_table().to_pylist()
    assert failure["source_uri"].endswith("oom_me.mp4")
    assert "killed by SIGKILL" in failure["message"]
