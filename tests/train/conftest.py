"""Fixtures for the training tests: tiny models, a synthetic world with a built store per
model family, built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.train import world
from videorl_kit.train.tiny_model import FAMILIES, build_tiny_model


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One tiny random model per family (seed 0), read-only for the tests."""
    root = tmp_path_factory.mktemp("tiny-models")
    return {family: build_tiny_model(root / family, family, seed=0).path for family in FAMILIES}


@pytest.fixture(scope="session")
def train_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Synthetic data, specs per family and one built store per family (``store-<family>``)."""
    from videorl_kit.store import build_cache
    from videorl_kit.synth import generate_suite

    root = tmp_path_factory.mktemp("train-world")
    generate_suite(root / "synth", n_per_task=2, seed=0, tasks=list(world.SYNTH_TASKS))
    world.write_routing_rows(root / "synth")
    for family in FAMILIES:
        build_cache(world.write_specs(root, family), root / f"store-{family}", workers=1)
    return root
