"""The main job, as ``make run`` runs it: ``videorl-kit synth data/synth``, ``validate`` and
``build-cache task_specs/*.yaml --store store`` on the shipped specs, in a copy of the
repository's layout under a temporary folder (the repository's data/ and store/ stay
untouched)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def kit_command() -> list[str]:
    """The installed ``videorl-kit`` entry point (what the Makefile calls)."""
    script = Path(sys.executable).parent / "videorl-kit"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from videorl_kit.cli import main; main()"]


def run_kit(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [*kit_command(), *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"videorl-kit {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_make_run_builds_the_shipped_specs_and_a_rerun_does_nothing(tmp_path: Path) -> None:
    specs = sorted((REPO / "task_specs").glob("*.yaml"))
    assert len([s for s in specs if not s.name.startswith("_")]) >= 10
    (tmp_path / "task_specs").mkdir()
    for spec in specs:  # the shell glob of the Makefile: top-level files, bases included
        shutil.copy(spec, tmp_path / "task_specs" / spec.name)
    spec_args = [f"task_specs/{s.name}" for s in specs]

    run_kit(tmp_path, "synth", "data/synth")
    run_kit(tmp_path, "validate", *spec_args)
    first = json.loads(run_kit(tmp_path, "build-cache", *spec_args, "--store", "store", "--json"))

    assert first["n_input"] == first["n_ok"] + first["n_failed"] + first["n_skipped"]
    assert first["n_failed"] == 0 and first["n_skipped"] == 0, first["failed_by_class"]
    assert first["n_ok"] > 0 and first["n_decoded"] > 0 and first["n_commits"] > 0
    assert first["samples"]["n_ready"] == first["samples"]["n_samples"] > 0
    assert (tmp_path / "store" / "frames.lance").is_dir()

    second = json.loads(run_kit(tmp_path, "build-cache", *spec_args, "--store", "store", "--json"))
    assert second["n_input"] == second["n_ok"] + second["n_failed"] + second["n_skipped"]
    assert (second["n_input"], second["n_ok"]) == (first["n_input"], first["n_ok"])
    assert second["n_already_cached"] == second["n_ok"]
    assert (second["n_decoded"], second["n_commits"], second["n_failed"]) == (0, 0, 0)
    assert second["samples"]["rows_written"] == 0
    assert second["frames_version"] == first["frames_version"]
