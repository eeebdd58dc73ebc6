"""Per-item decode time limit: a hung decoder is killed with its worker, the build goes on."""

from __future__ import annotations

import multiprocessing.forkserver
import multiprocessing.resource_tracker
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.store.fault_injection import hang_on_marker
from tests.store.spec_files import video_rows, write_spec
from videorl_kit.core.errors import UserError
from videorl_kit.store import build_cache
from videorl_kit.store.builder import BuildHooks
from videorl_kit.store.engine_local import run_local
from videorl_kit.store.identify import decoder_identity
from videorl_kit.store.tables import StoreTables
from videorl_kit.store.worker import DecodeTask

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def descendants(pid: int) -> set[int]:
    """Every live descendant process of ``pid`` (from /proc; zombies count as alive)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # exited meanwhile
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def multiprocessing_helpers() -> set[int | None]:
    """This process's multiprocessing fork server and resource tracker (they outlive builds)."""
    return {
        getattr(multiprocessing.forkserver._forkserver, "_forkserver_pid", None),
        getattr(multiprocessing.resource_tracker._resource_tracker, "_pid", None),
    }


def describe(pids: set[int]) -> list[str]:
    """``pid: command line`` of each process, for failure messages."""
    lines = []
    for pid in sorted(pids):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            cmdline = b"(exited)"
        lines.append(f"{pid}: {cmdline.decode(errors='replace')[:200]}")
    return lines


def test_a_hung_decode_is_killed_and_the_build_goes_on(spec_dir: Path, tmp_path: Path) -> None:
    shutil.copy(spec_dir / "b.mp4", spec_dir / "hang_me.mp4")
    rows = video_rows(["a.mp4", "hang_me.mp4", "c.mp4"])
    spec = write_spec(spec_dir, "hangs", rows)
    before = descendants(os.getpid())

    # one worker: c.mp4 is queued behind the hung item and must be re-queued, not lost
    summary = build_cache(
        [spec], tmp_path / "store", workers=1, item_timeout_s=2,
        _hooks=BuildHooks(decode_fn=hang_on_marker),
    )  # fmt: skip

    assert (summary.n_input, summary.n_ok, summary.n_failed, summary.n_skipped) == (3, 2, 1, 0)
    assert summary.invariant_holds and summary.item_timeout_s == 2.0
    assert summary.failed_by_class == {"DecodeTimeoutError": 1}
    failures = StoreTables.open(tmp_path / "store").table("failures").to_table().to_pylist()
    assert len(failures) == 1
    failure = failures[0]
    assert failure["source_uri"].endswith("hang_me.mp4")
    assert failure["error_class"] == "DecodeTimeoutError"
    assert "decode timed out after 2 s" in failure["message"]
    samples = StoreTables.open(tmp_path / "store").table("samples").to_table().to_pylist()
    status = {r["sample_id"]: r["status"] for r in samples}
    assert status == {"row-0": "ready", "row-1": "media_failed", "row-2": "ready"}
    # the killed worker and its replacement are gone; only the shared fork server remains
    left = descendants(os.getpid()) - before - multiprocessing_helpers()
    assert not left, f"processes left behind by the build: {describe(left)}"

    # a known timeout is not decoded again (and does not wait again) unless retried
    again = build_cache(
        [spec], tmp_path / "store", workers=1, _hooks=BuildHooks(decode_fn=hang_on_marker)
    )
    assert again.n_failed == 1 and again.n_known_failures == 1 and again.n_decoded == 0


def test_run_local_yields_one_result_per_task_around_a_hang(spec_dir: Path) -> None:
    shutil.copy(spec_dir / "c.mp4", spec_dir / "hang_too.mp4")
    names = ["hang_too.mp4", "a.mp4", "b.mp4"]
    budget = {"fps": 2.0, "min_frames": 4, "max_frames": 4, "min_pixels": 3136,
              "max_pixels": 12544, "patch": 28}  # fmt: skip
    decoder, version = decoder_identity("video")
    tasks = [
        DecodeTask(str(spec_dir / n), "video", budget, "0" * 16, f"h{i}", f"k{i}", decoder, version)
        for i, n in enumerate(names)
    ]
    results = {
        r.task.cache_key: r
        for r in run_local(tasks, workers=2, decode_fn=hang_on_marker, item_timeout_s=1.5)
    }
    assert sorted(results) == ["k0", "k1", "k2"]
    assert results["k0"].status == "failed"
    assert results["k0"].error is not None
    assert results["k0"].error.error_class == "DecodeTimeoutError"
    assert "decode timed out after 1.5 s" in results["k0"].error.message
    assert results["k0"].seconds >= 1.5
    assert results["k1"].status == results["k2"].status == "ok"


def test_negative_item_timeout_is_refused(good_spec: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="item timeout must be >= 0"):
        build_cache([good_spec], tmp_path / "s", item_timeout_s=-1)
