"""`build-cache --decoder`: optional video decoders reach the build, the key and `verify`."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.store.spec_files import video_rows, write_spec
from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.media.decode import decode_video
from videorl_kit.store import FrameStore, build_cache
from videorl_kit.store.verify import verify_store


def _torchcodec_loads() -> bool:
    if importlib.util.find_spec("torchcodec") is None:
        return False
    try:
        from torchcodec.decoders import VideoDecoder  # noqa: F401
    except (ImportError, OSError, RuntimeError):  # FFmpeg libraries missing
        return False
    return True


DECODERS = [
    "decord",
    pytest.param(
        "torchcodec",
        marks=pytest.mark.skipif(not _torchcodec_loads(), reason="torchcodec cannot load here"),
    ),
]


@pytest.mark.parametrize("decoder", DECODERS)
def test_a_build_decodes_with_the_chosen_decoder_and_keys_rows_by_it(
    spec_dir: Path, tmp_path: Path, decoder: str
) -> None:
    spec = write_spec(spec_dir, f"dec-{decoder}", video_rows(["a.mp4", "c.mp4"]))
    store_dir = tmp_path / "store"

    summary = build_cache([spec], store_dir, workers=1, decoder=decoder)
    assert (summary.n_ok, summary.n_failed, summary.decoder) == (2, 0, decoder)

    store = FrameStore.open(store_dir)
    items = store.get_many(store.keys())
    assert {item.decoder for item in items} == {decoder}
    for item in items:
        assert item.decoder_version.startswith(f"{decoder} ")
        expected = decode_video(item.source_uri, item.budget, decoder=decoder)
        np.testing.assert_array_equal(item.frames, expected.frames)
        assert item.frame_indices == list(expected.frame_indices)

    # the decoder is part of the key: a PyAV build of the same files adds its own rows
    pyav = build_cache([spec], store_dir, workers=1)
    assert (pyav.n_already_cached, pyav.n_decoded) == (0, 2)
    both = FrameStore.open(store_dir)
    assert len(both) == 4
    assert sorted(both.get(k).decoder for k in both) == sorted(["pyav", "pyav", decoder, decoder])

    # verify re-decodes each row with the decoder that row names
    report = verify_store(store_dir, sample=None)
    assert report.ok and report.counts == {"ok": 4}, report.as_dict()


def test_an_unknown_decoder_is_refused_before_anything_is_written(
    spec_dir: Path, tmp_path: Path
) -> None:
    spec = write_spec(spec_dir, "dec-bad", video_rows(["a.mp4"]))
    with pytest.raises(UserError, match="--decoder 'opencv' is unknown; choose one of pyav"):
        build_cache([spec], tmp_path / "store", decoder="opencv")
    assert not (tmp_path / "store").exists()


def test_the_command_line_passes_the_decoder_and_reports_it(spec_dir: Path, tmp_path: Path) -> None:
    spec = write_spec(spec_dir, "dec-cli", video_rows(["c.mp4"]))
    store_dir = tmp_path / "store"
    runner = CliRunner()
    args = ["build-cache", str(spec), "--store", str(store_dir), "--workers", "1", "--json"]

    done = runner.invoke(app, [*args, "--decoder", "decord"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert (summary["decoder"], summary["n_ok"]) == ("decord", 1)
    assert FrameStore.open(store_dir).get(FrameStore.open(store_dir).keys()[0]).decoder == "decord"

    command = "from videorl_kit.cli import main; main()"
    refused = subprocess.run(
        [sys.executable, "-c", command, *args, "--decoder", "opencv"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "error: --decoder 'opencv' is unknown; choose one of pyav, decord, torchcodec"
    )
