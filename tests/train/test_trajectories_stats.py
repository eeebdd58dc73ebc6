"""``trajectories stats`` and ``export``: numbers checked by hand, the table, the histogram, and
an export that ``datasets`` loads."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from tests.train.test_trajectories_import import GOLD, world, write_jsonl  # noqa: F401
from videorl_kit.cli import app
from videorl_kit.train.offline.importer import import_trajectories
from videorl_kit.train.offline.stats import trajectory_stats


@pytest.fixture(scope="module")
def filled(world, tmp_path_factory):  # noqa: F811
    """A store with two sources of trajectories for the demo task."""
    folder = tmp_path_factory.mktemp("stats")
    shutil.copytree(world / "store", folder / "store")
    curated = write_jsonl(
        folder / "curated.jsonl",
        [
            {"task_id": "demo", "sample_id": s, "response": f"<answer>{g}</answer>"}
            for s, g in GOLD.items()
        ],
    )
    wrong = write_jsonl(
        folder / "model.jsonl",
        [
            {
                "task_id": "demo",
                "sample_id": "synth-count-0000",
                "response": "<answer>9</answer>",
                "model": "m",
            },
            {"task_id": "demo", "sample_id": "synth-count-0000", "response": "2", "model": "m"},
        ],
    )
    import_trajectories([curated], folder / "store", source="curated")
    import_trajectories([wrong], folder / "store", source="eval:run-1")
    return folder


def test_stats_per_task_and_source(filled):
    rows = {r["source"]: r for r in trajectory_stats(filled / "store")}
    assert list(rows) == ["(all)", "curated", "eval:run-1"]
    curated, model, both = rows["curated"], rows["eval:run-1"], rows["(all)"]
    assert (curated["n"], curated["share_correct"], curated["n_samples_correct"]) == (4, 1.0, 4)
    assert curated["ready_samples"] == 4
    assert curated["chars_max"] == len("<answer>2</answer>")
    # "<answer>9</answer>": accuracy 0, format 1 -> 0.1; "2": accuracy 1, no tag -> 0.9
    assert model["share_correct"] == 0.5 and model["n_samples_correct"] == 1
    assert model["reward_min"] == pytest.approx(0.1) and model["reward_max"] == pytest.approx(0.9)
    assert both["n"] == 6 and both["n_samples"] == 4
    only = trajectory_stats(filled / "store", sources=["eval:*"])
    assert [r["source"] for r in only] == ["eval:run-1"]


def test_stats_command_prints_a_table_json_and_a_histogram(filled, tmp_path):
    runner = CliRunner()
    plot = tmp_path / "rewards.png"
    done = runner.invoke(
        app, ["trajectories", "stats", "--store", str(filled / "store"), "--plot", str(plot)]
    )
    assert done.exit_code == 0, done.output
    assert "Trajectories per task and source" in done.stdout and "eval:run-1" in done.stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    done = runner.invoke(
        app, ["trajectories", "stats", "--store", str(filled / "store"), "--task", "demo", "--json"]
    )
    payload = json.loads(done.stdout)
    assert [r["source"] for r in payload["rows"]] == ["(all)", "curated", "eval:run-1"]


def test_export_loads_with_datasets_and_filters_by_reward(filled, tmp_path):
    from datasets import load_dataset

    out = tmp_path / "good.parquet"
    runner = CliRunner()
    done = runner.invoke(
        app,
        [
            "trajectories",
            "export",
            "--store",
            str(filled / "store"),
            "--out",
            str(out),
            "--min-reward",
            "0.9",
            "--json",
        ],
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["n_rows"] == 5  # four gold + the untagged right answer
    rows = load_dataset("parquet", data_files=str(out), split="train")
    assert len(rows) == 5 and min(rows["reward_overall"]) == pytest.approx(0.9)
    first = rows[0]
    assert first["answer"] == GOLD[first["sample_id"]]  # joined with its sample
    assert "Put the final answer in <answer></answer>." in first["prompt"]
    assert json.loads(first["reward_details"])["verifier"] == "numeric@2"
