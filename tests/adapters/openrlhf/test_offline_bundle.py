"""A recipe's ``offline:`` section in the OpenRLHF run bundle (``train --dry-run``, main venv:
the store's trajectories are read with polars; the agent itself is checked in
``test_offline_agent.py`` with OpenRLHF's code)."""

from __future__ import annotations

import json

import pytest

from tests.adapters.openrlhf.test_bundle import recipe_variant, runner
from videorl_kit.cli import app
from videorl_kit.store import CachedSampleDataset
from videorl_kit.train.offline.importer import import_trajectories
from videorl_kit.train.recipe import load_recipe

OFFLINE = {"source": ["curated-bundle"], "per_group": 1, "correction": "none"}


@pytest.fixture(scope="module")
def sample(workspace, tmp_path_factory):
    """One stored correct response for the first sample of the recipe's first task."""
    spec = load_recipe(workspace / "recipes" / "tiny-grpo.yaml").tasks[0].spec
    row = CachedSampleDataset(workspace / "store", spec=spec).rows[0]
    file = tmp_path_factory.mktemp("curated") / "curated.jsonl"
    response = f"<answer>{row['answer']}</answer>"
    record = {"task_id": spec.id, "sample_id": row["sample_id"], "response": response}
    file.write_text(json.dumps(record) + "\n")
    import_trajectories([file], workspace / "store", source="curated-bundle")
    return spec.id, row["sample_id"], response


def test_the_bundle_carries_the_selected_trajectories_and_its_agent_reads_them(
    workspace, sample, tmp_path
):
    task_id, sample_id, response = sample
    recipe = recipe_variant(workspace, "tiny-offline", offline=OFFLINE)
    out = tmp_path / "bundle"
    result = runner.invoke(app, ["train", str(recipe), "--backend", "openrlhf", "--dry-run",
                                 "--output", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads((out / "offline.json").read_text())
    assert payload["n"] == 4 and payload["per_group"] == 1 and payload["when"] == "always"
    [stored] = payload["samples"][f"{task_id}\t{sample_id}"]
    assert stored["response"] == response
    assert len(payload["samples"]) == 1  # only samples with a trajectory
    agent = (out / "agent_func.py").read_text()
    assert f"OFFLINE_FILE = '{out.resolve()}/offline.json'" in agent


def test_frames_as_images_with_offline_mixing_is_refused_naming_the_backend(
    workspace, sample, tmp_path
):
    recipe = recipe_variant(workspace, "tiny-offline-frames", offline=OFFLINE,
                            openrlhf={"video": "frames_as_images"})  # fmt: skip
    result = runner.invoke(app, ["train", str(recipe), "--backend", "openrlhf", "--dry-run",
                                 "--output", str(tmp_path / "b")])  # fmt: skip
    assert result.exit_code != 0  # the CLI's entry point prints the error (run in-process here)
    message = str(result.exception)
    assert "openrlhf.video: backend openrlhf" in message and "frames_as_images" in message
