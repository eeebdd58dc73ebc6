"""Importing the reward package is light (docstring examples run via pytest --doctest-modules)."""

from __future__ import annotations


def test_package_import_is_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, videorl_kit.rewards, videorl_kit.rewards.router;"
        "heavy = [m for m in ('torch', 'math_verify', 'sympy', 'videorl_kit.spec', 'rouge_score')"
        " if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
