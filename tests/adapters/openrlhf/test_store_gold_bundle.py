"""The OpenRLHF bundle's labels carry the spec's gold, never a gold edited into the store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import lance
from typer.testing import CliRunner

from videorl_kit.adapters.openrlhf.labels import decode_label
from videorl_kit.cli import app
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import iter_samples
from videorl_kit.train.recipe import load_recipe

runner = CliRunner()


def _dry_run(workspace: Path, store: Path, out: Path):
    recipe = workspace / "recipes" / "tiny-grpo.yaml"
    return runner.invoke(
        app, ["train", str(recipe), "--backend", "openrlhf", "--dry-run", "--output", str(out),
              "--store", str(store)],
    )  # fmt: skip


def _spec_answers(workspace: Path) -> dict[tuple[str, str], str]:
    loaded = load_recipe(workspace / "recipes" / "tiny-grpo.yaml")
    return {
        (s.task_id, s.sample_id): s.answer
        for entry in loaded.tasks
        for s in iter_samples(load_spec(entry.spec.source_file))
        if s.skip_rule is None
    }


def test_bundle_labels_are_the_specs_gold(workspace: Path, tmp_path: Path) -> None:
    result = _dry_run(workspace, workspace / "store", tmp_path / "bundle")
    assert result.exit_code == 0, result.output
    gold = _spec_answers(workspace)
    labels = [
        decode_label(json.loads(line)["label"])
        for file in sorted((tmp_path / "bundle" / "data").glob("train.*.jsonl"))
        for line in file.read_text(encoding="utf-8").splitlines()
    ]
    assert labels and all(gold[(x.task_id, x.sample_id)] == x.answer for x in labels)


def test_bundle_refuses_a_store_whose_gold_was_edited(workspace: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(workspace / "store", store)
    samples = lance.dataset(str(store / "samples.lance"))
    first = sorted(samples.to_table(columns=["sample_id"], filter="task_id = 'tiny-count'")
                   .column("sample_id").to_pylist())[0]  # fmt: skip
    samples.update({"answer": "'99'"}, where=f"task_id = 'tiny-count' AND sample_id = '{first}'")
    result = _dry_run(workspace, store, tmp_path / "bundle")
    assert result.exit_code != 0
    message = str(result.exception) if result.exception else result.output
    assert f"task tiny-count row 1 (id '{first}'): the store's answer '99'" in message, message
    assert f"--store {store}" in message and "build-cache" in message
    written = list((tmp_path / "bundle").rglob("train.tiny-count.jsonl"))
    assert all("99" not in json.dumps([decode_label(json.loads(line)["label"]).answer
                                       for line in f.read_text().splitlines()])
               for f in written)  # fmt: skip
