"""The docstring examples of the reward modules run and stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "videorl_kit.rewards",
    "videorl_kit.rewards.base",
    "videorl_kit.rewards.boolean",
    "videorl_kit.rewards.choice",
    "videorl_kit.rewards.extract",
    "videorl_kit.rewards.format",
    "videorl_kit.rewards.grounding",
    "videorl_kit.rewards.math",
    "videorl_kit.rewards.numeric",
    "videorl_kit.rewards.ocr",
    "videorl_kit.rewards.open_ended",
    "videorl_kit.rewards.preference",
    "videorl_kit.rewards.registry",
    "videorl_kit.rewards.result",
    "videorl_kit.rewards.router",
    "videorl_kit.rewards.sequence",
    "videorl_kit.rewards.text",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0
    if name != "videorl_kit.rewards":
        assert attempted > 0, f"{name} has no examples"


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
