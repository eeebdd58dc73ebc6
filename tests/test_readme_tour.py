"""The README's five-minute tour runs as written (in a copy of the repository's specs), and
the exit codes the README states are the real ones."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")

# `videorl-kit` is the console script; the same CLI runs from this interpreter either way
SHELL_PRELUDE = f'set -euo pipefail\nvideorl-kit() {{ "{sys.executable}" -m videorl_kit "$@"; }}\n'


def tour_commands() -> list[str]:
    section = README.split("## Five-minute tour", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL).group(1)
    commands = []
    for line in block.splitlines():
        command = re.sub(r"\s+#\s.*$", "", line).strip()
        if command.startswith("videorl-kit "):
            commands.append(command)
    return commands


def run(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(
        ["bash", "-c", SHELL_PRELUDE + command], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=900,
    )  # fmt: skip


@pytest.mark.slow
def test_the_tour_runs_as_written(tmp_path: Path) -> None:
    commands = tour_commands()
    assert len(commands) >= 8 and commands[0].startswith("videorl-kit synth data/synth")
    for folder in ("task_specs", "examples"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    outputs = []
    for command in commands:
        done = run(command, tmp_path)
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        outputs.append(done.stdout)
    assert "specs valid (with their data)" in outputs[2]
    scored = [json.loads(line) for line in outputs[-1].splitlines()]
    assert [r["overall"] for r in scored] == [1.0, 0.1, 0.9, 0.0]
    assert [r["status"] for r in scored] == ["ok", "ok", "ok", "unverifiable"]


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("videorl-kit validate --no-such-flag task_specs", 2),
        ("videorl-kit build-cache task_specs/synth-count.yaml", 2),  # --store is required
        ("videorl-kit show task_specs/missing.yaml", 1),
    ],
)
def test_exit_codes_are_the_ones_the_readme_states(command: str, code: int) -> None:
    assert f"| {code} |" in README
    done = run(command, ROOT)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
