"""Fixtures for the synth tests: one small suite generated once per session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from videorl_kit.synth import SuiteManifest, generate_suite

#: Rows per task in the shared suite: enough for every question template to appear.
N_PER_TASK = 6


@pytest.fixture(scope="session")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[SuiteManifest, Path]:
    out = tmp_path_factory.mktemp("synth") / "suite"
    return generate_suite(out, n_per_task=N_PER_TASK, seed=0), out


@pytest.fixture(scope="session")
def suite_rows(suite) -> dict[str, list[dict]]:
    manifest, out = suite
    return {
        task.name: [json.loads(line) for line in (out / task.file).read_text().splitlines()]
        for task in manifest.tasks
    }
