"""``videorl-kit publish`` and ``pull`` through the real console entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.hub.hub_server import HubServer
from videorl_kit.cli import app
from videorl_kit.hub import HubError

runner = CliRunner()
REPO = "my-org/video-tasks"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m videorl_kit ARGS`` the way a user's shell would."""
    return subprocess.run(
        [sys.executable, "-m", "videorl_kit", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def test_publish_dry_run_json_discovers_specs_in_a_folder(task_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["publish", str(task_dir), "--repo", REPO, "--dry-run", "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["dry_run"] is True and data["revision"] is None
    assert sorted(s["id"] for s in data["specs"]) == ["synth-color", "synth-count"]  # no _base
    assert data["files"][-1] == "videorl_kit_manifest.json"
    assert (out / "README.md").is_file()


def test_publish_then_pull_from_another_process_by_revision(
    hub: HubServer, spec_paths: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    published = runner.invoke(app, ["publish", *map(str, spec_paths), "--repo", REPO, "--json"])
    assert published.exit_code == 0, published.output
    revision = json.loads(published.stdout)["revision"]
    assert revision == hub.head(REPO).oid
    monkeypatch.delenv("HF_ENDPOINT")
    dest = tmp_path / "elsewhere"
    pulled = run_cli(
        "pull", f"{REPO}@{revision}", "--out", str(dest), "--endpoint", hub.url, "--json"
    )
    assert pulled.returncode == 0, pulled.stderr
    data = json.loads(pulled.stdout)
    assert data["revision"] == revision and data["local_dir"] == str(dest.resolve())
    assert [s["uri"] for s in data["specs"]] == [
        f"hf://{REPO}@{revision}/specs/synth-count.yaml",
        f"hf://{REPO}@{revision}/specs/synth-color.yaml",
    ]
    human = runner.invoke(app, ["pull", REPO, "--endpoint", hub.url])
    assert human.exit_code == 0 and f"pulled {REPO}@{revision}" in human.stdout


def test_a_tampered_repo_fails_with_one_line_naming_the_file(
    hub: HubServer, spec_paths: list[Path]
) -> None:
    result = runner.invoke(
        app, ["publish", *map(str, spec_paths), "--repo", REPO, "--endpoint", hub.url]
    )
    assert result.exit_code == 0, result.output
    hub.tamper_blob(REPO, "specs/synth-color.yaml", b"id: synth-color\n")
    pulled = run_cli("pull", REPO, "--endpoint", hub.url)
    assert pulled.returncode == 1
    assert "Traceback" not in pulled.stderr
    lines = [line for line in pulled.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "specs/synth-color.yaml: size" in lines[0]


def test_usage_errors_are_one_line(spec_paths: list[Path]) -> None:
    no_out = run_cli("publish", str(spec_paths[0]), "--repo", REPO, "--dry-run")
    assert no_out.returncode == 1
    expected = "error: --dry-run needs --out DIR (the folder to write the repo into)"
    assert no_out.stderr.strip() == expected
    bad_ref = runner.invoke(app, ["pull", "not a repo"])
    assert isinstance(bad_ref.exception, HubError)
    assert "invalid repo id 'not a repo'" in str(bad_ref.exception)


def test_help_shows_examples() -> None:
    for command in ("publish", "pull"):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0
        assert "Examples" in result.output
        assert f"videorl-kit {command} " in result.output
