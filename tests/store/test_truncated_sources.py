"""A source cut short whose frames still decode is cached only with the reason, never silently.

The cut is found from the container's own sizes (``tests/media/test_media_cut.py``). A file
whose header measures the cut fails as truncated; one whose header does not (here an Ogg file)
is cached from the frames before the cut, and the row, ``build-cache`` (a warning line naming
the file and the reason, and ``truncated`` in its JSON summary) and ``cache status`` say so.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.media_kit import make_video, truncate_copy
from tests.store.spec_files import video_rows, write_spec
from videorl_kit.cli import app
from videorl_kit.store import FrameStore, store_status

runner = CliRunner()


def test_a_cut_ogg_is_cached_with_its_reason_and_a_cut_mkv_fails(tmp_path: Path) -> None:
    whole = make_video(tmp_path / "whole.ogv", 40, 10, (96, 64), "libvpx").path
    cut_ogg = truncate_copy(whole, tmp_path / "cut.ogv", 0.6)
    mkv = make_video(tmp_path / "whole.mkv", 40, 10, (96, 64)).path
    cut_mkv = truncate_copy(mkv, tmp_path / "cut.mkv", 0.6)
    spec = write_spec(tmp_path, "cuts", video_rows(["whole.ogv", "cut.ogv", "cut.mkv"]))
    store = tmp_path / "store"

    built = runner.invoke(app, ["build-cache", str(spec), "--store", str(store), "--json"])
    assert built.exit_code == 0, built.output
    summary = json.loads(built.stdout)
    assert (summary["n_ok"], summary["n_failed"]) == (2, 1)
    assert summary["failed_by_class"] == {"TruncatedVideoError": 1}
    reason = summary["truncated"][str(cut_ogg)]
    assert list(summary["truncated"]) == [str(cut_ogg)]
    assert reason.startswith("file is cut short: it ends inside the Ogg page")
    assert f"warning: {cut_ogg}: cached from a cut-short file ({reason})" in built.stderr

    reader = FrameStore.open(store)
    by_source = {item.source_uri: item for item in reader.get_many(reader.keys())}
    assert by_source[str(cut_ogg)].truncation == reason
    assert reason in by_source[str(cut_ogg)].decode_warnings
    assert by_source[str(whole)].truncation is None
    assert by_source[str(cut_ogg)].n_frames > 0
    failures = store_status(store)["failures"]["items"]
    assert [(f["source_uri"], f["error_class"]) for f in failures] == [
        (str(cut_mkv), "TruncatedVideoError")
    ]
    assert "Matroska segment" in failures[0]["message"]

    status = runner.invoke(app, ["cache", "status", "--store", str(store), "--json"])
    assert json.loads(status.stdout)["frames"]["truncated"] == [
        {"source_uri": str(cut_ogg), "truncation": reason}
    ]
    human = runner.invoke(app, ["cache", "status", "--store", str(store)])
    assert "cached from cut-short files (1)" in human.stdout and "cut.ogv" in human.stdout

    again = runner.invoke(app, ["build-cache", str(spec), "--store", str(store), "--json"])
    assert json.loads(again.stdout)["n_already_cached"] == 2  # idempotent: nothing re-decoded
    assert store_status(store)["frames"]["truncated"] == [
        {"source_uri": str(cut_ogg), "truncation": reason}
    ]
