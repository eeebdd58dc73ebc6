"""Fixtures for the training tests: a synthetic world with a built store per model family,
built once per session (the tiny models are the shared ``tiny_models`` fixture)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.train import world
from videorl_kit.train.tiny_model import FAMILIES


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
