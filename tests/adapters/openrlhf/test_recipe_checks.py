"""Recipes against OpenRLHF 0.11.2's own parser: every algorithm is accepted, and every
combination OpenRLHF refuses is refused by the kit's recipe validation first, for the same reason.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.adapters.openrlhf.conftest import REPO, require_openrlhf
from videorl_kit.adapters.openrlhf.argv import PromptStats, openrlhf_flags, to_argv
from videorl_kit.cli import app
from videorl_kit.train.algorithms import ALGORITHMS, backend_options, resolve_params
from videorl_kit.train.recipe import load_recipe

STATS = PromptStats(files=[Path("/bundle/data/train.a.jsonl"), Path("/bundle/data/train.b.jsonl")],
                    probabilities=[2 / 3, 1 / 3], n_prompts=40, max_images=16, max_videos=1,
                    max_prompt_tokens=900)  # fmt: skip
runner = CliRunner()
OPENRLHF_ALGORITHMS = [
    n for n, a in ALGORITHMS.items() if not isinstance(a.backends["openrlhf"], str)
]


@pytest.fixture(scope="module")
def parser():
    require_openrlhf()
    from videorl_kit.adapters.openrlhf.parser_check import OpenRLHFParser

    return OpenRLHFParser()


def _namespace(data: Any, key: str = "") -> Any:
    """Attribute access like the recipe model's (``extra_args`` stays a dict of flags)."""
    if isinstance(data, dict) and key != "extra_args":
        return SimpleNamespace(**{k: _namespace(v, k) for k, v in data.items()})
    return data


def _merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def argv_for(recipe_data: dict[str, Any], *, native: bool = True) -> list[str]:
    """The argv the adapter builds for a recipe, without the recipe's own validation (so that
    combinations validation refuses can still be shown to OpenRLHF)."""
    recipe = _namespace(recipe_data)
    name = recipe_data["algorithm"]["name"]
    max_new = recipe_data["rollout"]["max_new_tokens"]
    given = {
        k: v for k, v in (recipe_data["algorithm"].get("params") or {}).items() if v is not None
    }
    params = resolve_params(name, given, max_new_tokens=max_new)
    options, _ = backend_options(name, params, "openrlhf")
    agent = Path("/bundle/agent_func.py") if native else None
    flags = openrlhf_flags(recipe, options, model="/models/m", prompts=STATS,
                           output_dir=Path("/bundle"), reward_file=Path("/bundle/reward_func.py"),
                           agent_file=agent)  # fmt: skip
    return to_argv(flags)


def shipped_recipes() -> list[Path]:
    return sorted((REPO / "recipes").glob("*.yaml"))


@pytest.mark.parametrize("recipe", shipped_recipes(), ids=lambda p: p.stem)
@pytest.mark.parametrize("algorithm", OPENRLHF_ALGORITHMS)
def test_every_shipped_recipe_and_algorithm_is_accepted(parser, recipe, algorithm):
    loaded = load_recipe(recipe, backend="openrlhf")
    data = loaded.recipe.model_dump(mode="json")
    data["algorithm"] = {"name": algorithm, "params": {}}
    for native in (True, False):
        verdict = parser.check(argv_for(data, native=native))
        assert verdict.accepted, f"{recipe.name} {algorithm}: {verdict.error}"
        assert verdict.warnings == (), verdict.warnings
        estimator = ALGORITHMS[algorithm].backends["openrlhf"]["--algo.advantage.estimator"]
        assert verdict.args["algo"]["advantage"]["estimator"] == estimator


REFUSED = [
    # (recipe changes, what validate says, what OpenRLHF says)
    ({"openrlhf": {"gpus_per_node": 2}, "optim": {"micro_batch_size": 4}},
     "must use exactly the actor GPUs", "must be equal to vllm_num_engines * vllm_tensor_parallel_size"),
    ({"openrlhf": {"gpus_per_node": 2, "vllm_engines": 2}},
     "needs a micro-batch per step", "number of sample batches must be greater than or equal"),
    ({"rollout": {"group_size": 1}},
     "greater than or equal to 2", "requires n_samples_per_prompt > 1"),
    ({"algorithm": {"name": "dapo", "params": {"dynamic_sampling_range": [0.5, 0.5]}}},
     "must satisfy 0 <= low < high", "must be less than"),
    ({"openrlhf": {"extra_args": {"--ds.packing_samples": True}}},
     "cannot use --ds.packing_samples", "does not support --packing_samples"),
    ({"openrlhf": {"extra_args": {"--train.async_enable": True}}},
     "async training cannot sleep the vLLM engines", "not supported with --vllm.enable_sleep"),
    ({"openrlhf": {"extra_args": {"--train.partial_rollout_enable": True}}},
     "partial rollouts need --train.async_enable", "requires --train.async_enable"),
    ({"openrlhf": {"extra_args": {"--rollout.n_samples_per_prompt": 1}}},
     "already sets --rollout.n_samples_per_prompt", "requires n_samples_per_prompt > 1"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "kit_says", "openrlhf_says"), REFUSED)
def test_validate_refuses_first_what_openrlhf_refuses(parser, workspace, tmp_path, changes,
                                                      kit_says, openrlhf_says):  # fmt: skip
    base = workspace / "recipes" / "tiny-grpo.yaml"
    variant = base.with_name(f"refused-{tmp_path.name}.yaml")
    document = {"include": base.name, "backend": "openrlhf", **changes}
    variant.write_text(yaml.safe_dump(document), encoding="utf-8")
    refused = runner.invoke(app, ["validate", str(variant)])
    assert refused.exit_code == 1
    lines = [line for line in refused.output.splitlines() if kit_says in line]
    assert lines, refused.output
    assert lines[0].startswith(f"{variant}:") or lines[0].startswith(f"{base}:")  # file:line

    data = _merge(load_recipe(base, backend="openrlhf").recipe.model_dump(mode="json"), changes)
    verdict = parser.check(argv_for(data))
    assert not verdict.accepted
    assert openrlhf_says in verdict.error


def test_truncated_is_sets_openrlhfs_token_clip_correction_capped_at_is_cap(parser):
    from videorl_kit.train.offline.section import OfflineSection

    loaded = load_recipe(shipped_recipes()[0], backend="openrlhf")
    data = loaded.recipe.model_dump(mode="json")
    data["algorithm"] = {"name": "grpo", "params": {}}
    recipe = _namespace(data)
    recipe.offline = OfflineSection(source="curated", correction="truncated_is", is_cap=1.5)
    options, _ = backend_options("grpo", resolve_params("grpo", {}, max_new_tokens=64), "openrlhf")
    flags = openrlhf_flags(recipe, options, model="/models/m", prompts=STATS,
                           output_dir=Path("/bundle"), reward_file=Path("/bundle/reward_func.py"),
                           agent_file=Path("/bundle/agent_func.py"))  # fmt: skip
    verdict = parser.check(to_argv(flags))
    assert verdict.accepted, verdict.error
    advantage = verdict.args["algo"]["advantage"]
    assert advantage["is_correction_level"] == "token"
    assert advantage["is_correction_mode"] == "clip"
    assert advantage["is_correction_gating"] == "ratio"
    assert advantage["is_correction_threshold"] == [0.0, 1.5]
    recipe.offline = OfflineSection(source="curated", correction="recompute")
    flags = openrlhf_flags(recipe, options, model="/models/m", prompts=STATS,
                           output_dir=Path("/bundle"), reward_file=Path("/bundle/reward_func.py"),
                           agent_file=Path("/bundle/agent_func.py"))  # fmt: skip
    assert "--algo.advantage.is_correction_level" not in flags
