"""Shared test configuration: Hypothesis profiles and small helpers.

Profiles: ``dev`` (fast, random), ``ci`` (derandomized, more examples; default when
the ``CI`` environment variable is set) and ``stress`` (nightly-sized). Select one
with ``HYPOTHESIS_PROFILE=stress``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile(
    "ci",
    max_examples=200,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("stress", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One tiny random model per family (seed 0), read-only for the tests."""
    from videorl_kit.train.tiny_model import FAMILIES, build_tiny_model

    root = tmp_path_factory.mktemp("tiny-models")
    return {family: build_tiny_model(root / family, family, seed=0).path for family in FAMILIES}
