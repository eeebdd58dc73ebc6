"""Fixtures for the training tests: tiny models of both families, built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from videorl_kit.train.tiny_model import FAMILIES, build_tiny_model


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One tiny random model per family (seed 0), read-only for the tests."""
    root = tmp_path_factory.mktemp("tiny-models")
    return {family: build_tiny_model(root / family, family, seed=0).path for family in FAMILIES}
