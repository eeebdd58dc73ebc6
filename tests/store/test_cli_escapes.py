"""Store values never reach the terminal as escape sequences (issue 19, outsider round 3).

A source path is a value from the file system (or from a downloaded store): a file named
with an OSC 52 sequence (``ESC ] 52 ; c ; BASE64 BEL``) would write the reader's clipboard
when ``build-cache`` names it as failed, or when ``cache status`` / ``verify`` / ``export``
print it. Every command shows such characters as their escapes.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.store.spec_files import video_rows, write_spec
from videorl_kit.cli import app

runner = CliRunner()
OSC52 = "\x1b]52;c;cHduZWQ=\x07"
CLEAR = "\x1b[2J"
WIDE = {"COLUMNS": "2000"}


def _invoke(*args: str) -> str:
    result = runner.invoke(app, list(args), env=WIDE)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.output


def test_store_commands_show_hostile_source_paths_as_escapes(
    media_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    good, bad = f"good{OSC52}.mp4", f"bad{CLEAR}\u202e.mp4"
    (folder / good).symlink_to(media_dir / "a.mp4")
    (folder / bad).symlink_to(media_dir / "zero.mp4")
    spec = write_spec(folder, "escape-task", video_rows([good, bad]))
    store = tmp_path / "store"

    outputs = {
        "build-cache": _invoke("build-cache", str(spec), "--store", str(store), "--workers", "1"),
        "status": _invoke("cache", "status", "--store", str(store)),
        "verify": _invoke("cache", "verify", "--store", str(store)),
        "export": _invoke("cache", "export", "--store", str(store), "--out", str(tmp_path / "x")),
    }
    assert "good\\x1b]52;c;cHduZWQ=\\x07.mp4" in outputs["verify"]
    assert "bad\\x1b[2J\\u202e.mp4" in outputs["build-cache"]
    assert "bad\\x1b[2J\\u202e.mp4 │ EmptyFileError" in outputs["status"]
    for name, output in outputs.items():
        assert not {"\x1b", "\x07", "\u202e"} & set(output), (name, output)

    shown = _invoke("cache", "status", "--store", str(store), "--json")
    assert not {"\x1b", "\x07", "\u202e"} & set(shown)
    assert json.loads(shown)["store"] == str(store)
