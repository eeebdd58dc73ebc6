"""Importing the light media modules pulls in nothing heavy (docstring examples run via pytest)."""

from __future__ import annotations


def test_geometry_imports_nothing_heavy():
    import subprocess
    import sys

    code = (
        "import sys, videorl_kit.media.geometry, videorl_kit.media.processor_inputs;"
        "heavy = {'numpy', 'av', 'torch', 'PIL'} & set(sys.modules);"
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
