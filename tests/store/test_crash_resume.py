"""Crash safety: SIGKILL a build after a commit, resume, and get the same table as a clean
build (same keys and content hashes, no duplicates, the invariant holds)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.media_kit import make_video
from tests.store.spec_files import video_rows, write_spec
from tests.store.store_probe import frames_content, kill_after_first_commit
from videorl_kit.store import build_cache
from videorl_kit.store.tables import StoreTables

REPO = Path(__file__).resolve().parents[2]
N_VIDEOS = 10

BUILD_SCRIPT = """
import sys
from tests.store.fault_injection import slow_decode
from videorl_kit.store import build_cache
from videorl_kit.store.builder import BuildHooks
build_cache([sys.argv[1]], sys.argv[2], workers=1, batch_items=2,
            _hooks=BuildHooks(decode_fn=slow_decode))
"""


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def many_videos_spec(tmp_path: Path) -> Path:
    folder = tmp_path / "specs"
    names = [f"v{i}.mp4" for i in range(N_VIDEOS)]
    for i, name in enumerate(names):
        make_video(folder / name, 10, 10, (96, 64), seed=100 + i)
    return write_spec(folder, "crashy", video_rows(names))


def test_sigkill_then_resume_equals_a_clean_build(many_videos_spec: Path, tmp_path: Path) -> None:
    store = tmp_path / "killed"
    session = kill_after_first_commit(BUILD_SCRIPT, many_videos_spec, store, REPO)
    try:  # the pool workers notice the dead parent and exit on their own
        deadline = time.monotonic() + 20
        while group_alive(session) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not group_alive(session), "worker processes outlived the killed build"
    finally:
        if group_alive(session):
            os.killpg(session, signal.SIGKILL)

    partial = frames_content(store)
    assert 2 <= len(partial) < N_VIDEOS, "kill did not land mid-build"
    assert len(partial) % 2 == 0, "a batch was committed partially"
    assert len({k for k, _ in partial}) == len(partial)

    resumed = build_cache([many_videos_spec], store, workers=2)
    assert resumed.invariant_holds and resumed.n_ok == N_VIDEOS
    assert resumed.n_already_cached == len(partial)
    assert resumed.n_decoded == N_VIDEOS - len(partial)

    clean = tmp_path / "clean"
    build_cache([many_videos_spec], clean, workers=2)
    assert frames_content(store) == frames_content(clean)
    keys = [k for k, _ in frames_content(store)]
    assert len(keys) == len(set(keys)) == N_VIDEOS

    # and nothing more happens on a third run
    version = StoreTables.open(store).table("frames").version
    third = build_cache([many_videos_spec], store, workers=2)
    assert third.n_decoded == 0 and StoreTables.open(store).table("frames").version == version
