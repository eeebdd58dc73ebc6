"""engine="ray": Ray Data on a local 2-CPU Ray instance gives the same tables as local."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.store.fault_injection import hang_on_marker
from tests.store.media_factory import make_video, video_rows, write_spec
from videorl_kit.store import build_cache
from videorl_kit.store.tables import StoreTables

pytest.importorskip("ray.data")


def table_content(store: Path) -> dict[str, list]:
    tables = StoreTables.open(store)
    frames = tables.table("frames").to_table(
        columns=["cache_key", "frames_sha256", "frame_indices"]
    )
    failures = tables.table("failures").to_table(columns=["source_uri", "cache_key", "error_class"])
    samples = tables.table("samples").to_table(columns=["sample_id", "status", "video_keys"])
    return {
        "frames": sorted(map(str, frames.to_pylist())),
        "failures": sorted(map(str, failures.to_pylist())),
        "samples": sorted(map(str, samples.to_pylist())),
    }


@pytest.mark.slow
def test_ray_engine_builds_the_same_tables(spec_dir: Path, tmp_path: Path) -> None:
    import ray

    make_video(spec_dir / "hang_me.mp4", seed=40, frames=8)  # its decoder never returns
    names = ["a.mp4", "b.mp4", "c.mp4", "a_copy.mp4", "zero.mp4", "hang_me.mp4"]
    spec = write_spec(spec_dir, "ray-task", video_rows(names))
    options = {"workers": 2, "decode_fn": hang_on_marker, "item_timeout_s": 2}
    via_ray = build_cache([spec], tmp_path / "ray", engine="ray", **options)
    assert not ray.is_initialized()  # the instance started for the build was shut down
    local = build_cache([spec], tmp_path / "local", engine="local", **options)
    for name in ("n_input", "n_ok", "n_failed", "n_skipped", "n_decoded"):
        assert getattr(via_ray, name) == getattr(local, name), name
    assert via_ray.invariant_holds and via_ray.engine == "ray"
    assert via_ray.failed_by_class == {"EmptyFileError": 1, "DecodeTimeoutError": 1}
    assert table_content(tmp_path / "ray") == table_content(tmp_path / "local")

    again = build_cache([spec], tmp_path / "ray", workers=2, engine="ray")
    assert again.n_decoded == 0 and again.n_already_cached == 4
