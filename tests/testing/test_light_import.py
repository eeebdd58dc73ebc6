"""Hypothesis is loaded only by ``videorl_kit.testing`` when a check runs: importing the kit,
its testing package, the pytest plugin, or starting the command line never loads it."""

from __future__ import annotations

import subprocess
import sys


def _loaded_after(code: str) -> str:
    probe = (
        f"{code}\nimport sys; print(sorted(m for m in sys.modules if m.startswith('hypothesis')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_importing_the_kit_and_its_testing_package_loads_no_hypothesis() -> None:
    code = (
        "import videorl_kit, videorl_kit.testing, videorl_kit.testing.pytest_plugin\n"
        "import videorl_kit.testing.commands, videorl_kit.rewards.router\n"
        "dir(videorl_kit); dir(videorl_kit.testing)"
    )
    assert _loaded_after(code) == "[]"


def test_the_command_line_loads_no_hypothesis_until_a_check_runs() -> None:
    help_only = (
        "from typer.testing import CliRunner\nfrom videorl_kit.cli import app\n"
        "r = CliRunner().invoke(app, ['reward', 'check', '--help'])\n"
        "assert r.exit_code == 0 and '--examples' in r.output, r.output"
    )
    assert _loaded_after(help_only) == "[]"
    a_check = help_only.replace(
        "['reward', 'check', '--help']",
        "['reward', 'check', 'numeric', '--property', 'never_raises', '--examples', '2']",
    ).replace("'--examples' in r.output", "'held' in r.output")
    assert "hypothesis" in _loaded_after(a_check)  # the probe sees Hypothesis when it is used
