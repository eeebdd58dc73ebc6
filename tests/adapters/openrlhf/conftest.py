"""Fixtures for the OpenRLHF adapter: OpenRLHF's own code, a tiny model, a synthetic store.

Tests that need OpenRLHF call :func:`require_openrlhf`: in the main ``.venv`` (no OpenRLHF)
they skip; ``make test-openrlhf`` runs them in ``.venv-openrlhf`` with
``VIDEORL_REQUIRE_OPENRLHF=1``, where a missing OpenRLHF is a failure, not a skip.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
TINY_RECIPE = Path("recipes") / "tiny-grpo.yaml"


def require_openrlhf() -> None:
    """Skip (main venv) or fail (``VIDEORL_REQUIRE_OPENRLHF=1``) without OpenRLHF installed."""
    if importlib.util.find_spec("openrlhf") is not None:
        return
    if os.environ.get("VIDEORL_REQUIRE_OPENRLHF") == "1":
        pytest.fail("openrlhf is not installed; run these tests in .venv-openrlhf")
    pytest.skip("openrlhf lives in .venv-openrlhf (make test-openrlhf)")


def stub_flash_attn_kernels() -> None:
    """Run ``openrlhf.models`` on CPU with flash-attn's Python-only install: its CUDA kernel
    module gets an empty stand-in (only packing and ring attention, unused here, call it), and
    its Triton cross-entropy is made unimportable so OpenRLHF takes its own fallback (the
    log-softmax path it uses wherever flash-attn is missing)."""
    sys.modules.setdefault("flash_attn_2_cuda", types.ModuleType("flash_attn_2_cuda"))
    sys.modules["flash_attn.ops.triton.cross_entropy"] = None  # type: ignore[assignment]


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the shipped recipes and specs with synthetic data and a built store:
    ``recipes/tiny-grpo.yaml`` runs here exactly as in a checkout after ``make run``, and
    ``task_specs/tiny/tiny-count-qwen3.yaml`` is its counting task cached for Qwen3-VL."""
    from videorl_kit.store import build_cache
    from videorl_kit.synth import generate_suite
    from videorl_kit.train.recipe import load_recipe

    root = tmp_path_factory.mktemp("workspace")
    shutil.copytree(REPO / "recipes", root / "recipes")
    shutil.copytree(REPO / "task_specs", root / "task_specs")
    (root / "pyproject.toml").touch()  # the project root, as in a checkout: ../data stays inside
    generate_suite(root / "data" / "synth", n_per_task=2, seed=0)
    specs = [entry.spec.source_file for entry in load_recipe(root / TINY_RECIPE).tasks]
    qwen3 = root / "task_specs" / "tiny" / "tiny-count-qwen3.yaml"  # Qwen3-VL: multiples of 32
    qwen3.write_text(
        "include: tiny-count.yaml\nid: tiny-count-qwen3\n"
        "budget: {video: {patch: 32}, image: {patch: 32}}\n",
        encoding="utf-8",
    )
    build_cache([*specs, qwen3], root / "store", workers=1)
    return root
