"""The examples in the media modules' docstrings run and stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "videorl_kit.media.geometry",
    "videorl_kit.media.budget",
    "videorl_kit.media.errors",
    "videorl_kit.media.orientation",
    "videorl_kit.media.hashing",
    "videorl_kit.media.container",
    "videorl_kit.media.probe",
    "videorl_kit.media.sampling",
    "videorl_kit.media.resize",
    "videorl_kit.media.decode",
    "videorl_kit.media.backends",
    "videorl_kit.media.processor_inputs",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


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
