"""The shipped cluster recipes (Qwen2.5-VL-7B on Video-R1, Qwen3-VL-8B on OneThinker; one node
of 8 GPUs and four nodes) write bundles OpenRLHF accepts.

Their data is the public sets' three-row fixtures, served under each spec's own repo and
revision by a Hub server on loopback, with small media made at the paths the rows name; the
7B/8B model is swapped for a tiny one of the same family (``--model``), whose processor sizes
the prompts. Sizing, algorithm, per-row routing and the video path are the recipes' own.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.adapters.openrlhf.conftest import REPO, require_openrlhf
from tests.hub.hub_server import HubServer
from tests.media_kit import make_image, make_video
from videorl_kit.adapters.openrlhf.labels import decode_label
from videorl_kit.adapters.openrlhf.reward import BundleReward
from videorl_kit.cli import app

RECIPES = {
    "qwen2.5-vl-7b-grpo": ("qwen2.5-vl", 1),
    "qwen2.5-vl-7b-grpo-multinode": ("qwen2.5-vl", 4),
    "qwen3-vl-8b-grpo": ("qwen3-vl", 1),
    "qwen3-vl-8b-grpo-multinode": ("qwen3-vl", 4),
}
"""recipe -> (the tiny stand-in's family, nodes)."""

runner = CliRunner()


def _media_refs(row: dict) -> list[str]:
    refs = []
    for column in ("path", "videos", "images"):
        value = row.get(column)
        refs += [value] if isinstance(value, str) else list(value or [])
    return refs


@pytest.fixture(scope="module")
def cluster_workspace(tmp_path_factory):
    """Recipes and specs, the fixtures on a loopback Hub, their media, and the recipes' stores."""

    from videorl_kit.spec import load_spec
    from videorl_kit.store import build_cache
    from videorl_kit.train.recipe import load_recipe

    root = tmp_path_factory.mktemp("cluster")
    shutil.copytree(REPO / "recipes", root / "recipes")
    shutil.copytree(REPO / "task_specs", root / "task_specs")
    (root / "pyproject.toml").touch()  # the project root, as in a checkout: ../data stays inside
    saved = {k: os.environ.get(k) for k in ("HF_ENDPOINT", "HF_HUB_CACHE", "HF_HUB_OFFLINE")}
    server = HubServer.start(root / "hub")
    os.environ.update(HF_ENDPOINT=server.url, HF_HUB_CACHE=str(root / "hf-cache"))
    os.environ.pop("HF_HUB_OFFLINE", None)
    try:
        datasets = root / "task_specs" / "datasets"
        for spec_file in sorted(datasets.glob("[!_]*.yaml")):
            spec = load_spec(spec_file)
            if spec.data.hub is None:  # a source read from disk (VideoChat-R1's sets)
                continue
            fixture = next((datasets / "fixtures").glob(f"*/{spec.data.hub.file}"))
            hub = spec.data.hub
            server.serve_dataset_file(hub.repo, hub.file, fixture.read_bytes(), hub.revision)
            media_root = spec.resolve(spec.data.media_root)
            for seed, row in enumerate(json.loads(fixture.read_text(encoding="utf-8"))):
                for ref in _media_refs(row):
                    path = media_root / ref
                    if path.exists():
                        continue
                    if path.suffix == ".mp4":
                        make_video(path, 40, 8, (128, 96), seed=seed)
                    else:
                        make_image(path, width=160, height=120, seed=seed)
        stores = {}
        for name in RECIPES:
            loaded = load_recipe(root / "recipes" / f"{name}.yaml")
            store = loaded.resolve(loaded.recipe.store)
            if store not in stores.values():
                build_cache([entry.spec.source_file for entry in loaded.tasks], store, workers=1)
            stores[name] = store
        yield root, stores
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="module", params=sorted(RECIPES))
def cluster_bundle(request, cluster_workspace, tiny_models, tmp_path_factory):
    root, stores = cluster_workspace
    family, nodes = RECIPES[request.param]
    out = tmp_path_factory.mktemp("cluster-bundles") / request.param
    result = runner.invoke(
        app, ["train", str(root / "recipes" / f"{request.param}.yaml"), "--dry-run",
              "--model", str(tiny_models[family]), "--store", str(stores[request.param]),
              "--output", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return request.param, nodes, out


def test_cluster_bundle_is_accepted_by_openrlhf_with_the_recipes_sizing(cluster_bundle):
    require_openrlhf()
    from videorl_kit.adapters.openrlhf.parser_check import OpenRLHFParser
    from videorl_kit.train.recipe import load_recipe

    name, nodes, out = cluster_bundle
    verdict = OpenRLHFParser().check(json.loads((out / "argv.json").read_text(encoding="utf-8")))
    assert verdict.accepted, f"{name}: {verdict.error}"
    args, sizing = verdict.args, load_recipe(REPO / "recipes" / f"{name}.yaml").recipe.openrlhf
    assert sizing.nodes == nodes and sizing.gpus_per_node == 8
    assert (args["actor"]["num_nodes"], args["actor"]["num_gpus_per_node"]) == (nodes, 8)
    assert args["vllm"]["num_engines"] == sizing.vllm_engines
    assert args["vllm"]["tensor_parallel_size"] == sizing.vllm_tensor_parallel_size
    assert args["train"]["colocate_all"] == sizing.colocate
    assert args["ds"]["zero_stage"] == sizing.zero_stage
    assert args["train"]["agent_func_path"] == str(out / "agent_func.py")  # native video


def test_cluster_bundle_labels_route_each_row_to_its_problem_types_verifier(cluster_bundle):
    _, _, out = cluster_bundle
    reward = BundleReward.from_file(out / "tasks.resolved.json")
    header = reward.markers.assistant_header
    types = set()
    for prompts in sorted((out / "data").glob("train.*.jsonl")):
        for line in prompts.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            label = decode_label(row["label"])
            types.add(label.problem_type)
            assert row["datasource"] == label.task_id
            assert all(Path(ref).is_file() for ref in row["images"])
            prompt = f"<|im_start|>user\nQ<|im_end|>\n{header}"
            right = reward([f"{prompt}<answer>{label.answer}</answer>"], [prompt], [row["label"]])
            assert right["scores"] == 1.0, (label, right["extra_logs"])
            wrong = reward([f"{prompt}<answer>no idea</answer>"], [prompt], [row["label"]])
            assert wrong["scores"] == 0.0 and wrong["extra_logs"]["error/verifier"] == 0.0
    assert len(types) >= 3  # the public sets mix problem types within one task
