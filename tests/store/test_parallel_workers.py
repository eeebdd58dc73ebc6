"""`workers=N` decodes in N processes at the same time, none of them the builder's own."""

from __future__ import annotations

import os
from functools import partial
from itertools import pairwise
from pathlib import Path

from tests.store.fault_injection import logged_decode
from tests.store.media_factory import video_rows, write_spec
from videorl_kit.store import build_cache
from videorl_kit.store.builder import BuildHooks


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
