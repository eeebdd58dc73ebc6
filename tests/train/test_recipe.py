"""Training recipes: validated like specs (every error at once, file:line, did-you-mean)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from videorl_kit.cli import app
from videorl_kit.core.errors import UserError
from videorl_kit.spec.loader import SpecError
from videorl_kit.train.recipe import is_recipe_document, load_recipe

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p for p in (REPO / "recipes").glob("*.yaml") if not p.name.startswith("_"))
runner = CliRunner()

SPEC = """\
id: {id}
version: 1
problem_type: numerical
data: {{path: rows.jsonl}}
budget:
  video: {{patch: {patch}}}
  image: {{patch: {patch}}}
prompt: {{template: "{{{{ question }}}}"}}
"""

RECIPE = """\
id: demo
model: tiny:qwen2.5-vl
tasks:
  - count.yaml
  - {spec: "more/*.yaml", weight: 2}
store: store
optim: {prompts_per_step: 2, micro_batch_size: 4, steps: 3}
output_dir: runs/demo
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with three specs (one behind a glob) and the cwd set to it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "more").mkdir()
    (tmp_path / "count.yaml").write_text(SPEC.format(id="count", patch=28))
    (tmp_path / "more" / "a.yaml").write_text(SPEC.format(id="more-a", patch=28))
    (tmp_path / "more" / "b.yaml").write_text(SPEC.format(id="more-b", patch=28))
    (tmp_path / "more" / "_base.yaml").write_text("version: 1\n")
    return tmp_path


def write(folder: Path, text: str, name: str = "recipe.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def issues(path: Path, **kwargs) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_recipe(path, **kwargs)
    return [str(issue) for issue in caught.value.issues]


@pytest.mark.parametrize("recipe", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_recipe_validates(recipe: Path) -> None:
    loaded = load_recipe(recipe)
    assert loaded.tasks and loaded.options
    result = runner.invoke(app, ["validate", str(recipe)])
    assert result.exit_code == 0, result.output


def test_tasks_globs_and_weights_resolve(folder: Path) -> None:
    loaded = load_recipe(write(folder, RECIPE))
    assert [(t.spec.id, t.weight) for t in loaded.tasks] == [
        ("count", 1.0), ("more-a", 2.0), ("more-b", 2.0),
    ]  # fmt: skip
    assert loaded.algorithm == "grpo" and loaded.options["loss_type"] == "grpo"
    resolved = loaded.resolved_dict()
    assert resolved["algorithm"]["params"]["kl_coef"] == 0.04
    assert resolved["tasks"][1] == {"spec": "more/*.yaml", "id": "more-a", "weight": 2.0}
    assert loaded.resolve(loaded.recipe.store) == folder / "store"


def test_every_problem_at_once_with_lines_and_suggestions(folder: Path) -> None:
    (folder / "broken.yaml").write_text(SPEC.format(id="broken", patch=28) + "fsp: 2\n")
    path = write(
        folder,
        """\
        id: demo
        model: tiny:qwen2.5-vl
        tasks:
          - missing.yaml
          - nothing/*.yaml
          - broken.yaml
          - count.yaml
          - count.yaml
        store: store
        algorithm: {name: grop}
        optim: {prompts_per_step: 2, micro_batch_size: 4, steps: 3}
        output_dir: runs/demo
        """,
    )
    assert issues(path) == [
        "recipe.yaml:4: tasks.0.spec: spec file not found: missing.yaml (looked for "
        f"{folder / 'missing.yaml'})",
        "recipe.yaml:5: tasks.1.spec: no spec file matches 'nothing/*.yaml'",
        "recipe.yaml:8: tasks.4.spec: task 'count' is already listed (tasks.3)",
        "recipe.yaml:10: algorithm.name: unknown algorithm 'grop'; did you mean 'grpo'? (valid: "
        "grpo, dapo, gspo, dr_grpo, rloo, reinforce_pp, reinforce_pp_baseline)",
        "broken.yaml:9: fsp: unknown key 'fsp' (allowed: id, version, "
        "description, tags, problem_type, data, budget, verifier, verifiers, reward, prompt, eval)",
    ]


def test_unknown_keys_anywhere_get_suggestions(folder: Path) -> None:
    path = write(
        folder,
        RECIPE.replace("- count.yaml", "- {spec: count.yaml, wieght: 1}")
        + "rollout: {group_sise: 4}\nalgorithm: {name: dapo, params: {clip_hgh: 0.3}}\n"
        + "trl: {save_step: 3}\n",
    )
    assert issues(path) == [
        "recipe.yaml:4: tasks.0.wieght: unknown key 'wieght'; did you mean 'weight'?",
        "recipe.yaml:9: rollout.group_sise: unknown key 'group_sise'; did you mean 'group_size'?",
        "recipe.yaml:10: algorithm.params.clip_hgh: unknown key 'clip_hgh'; did you mean "
        "'clip_high' or 'clip_low'?",
        "recipe.yaml:11: trl.save_step: unknown key 'save_step'; did you mean 'save_steps'?",
    ]


def test_batch_arithmetic_and_parameter_consistency(folder: Path) -> None:
    odd = write(folder, RECIPE.replace("micro_batch_size: 4", "micro_batch_size: 3"))
    assert issues(odd) == [
        "recipe.yaml:7: optim: micro_batch_size 3 must divide "
        "prompts_per_step × rollout.group_size = 16"
    ]
    params = write(
        folder,
        RECIPE + "rollout: {max_new_tokens: 8}\n"
        "algorithm: {name: grpo, params: {clip_low: 0.3, clip_high: 0.2, overlong_buffer: 8}}\n",
    )
    assert issues(params) == [
        "recipe.yaml:10: algorithm.params.clip_high: clip_high 0.2 is below clip_low 0.3",
        "recipe.yaml:10: algorithm.params.overlong_buffer: 8 must be below "
        "rollout.max_new_tokens (8)",
    ]


def test_backend_limits_name_the_backend(folder: Path) -> None:
    dapo = write(folder, RECIPE + "algorithm: {name: dapo}\n")
    assert issues(dapo) == [
        "recipe.yaml:9: algorithm.name: backend 'trl' cannot do dynamic_sampling true for dapo: "
        "TRL 1.16's GRPOTrainer has no dynamic sampling; set algorithm.params.dynamic_sampling: "
        "false, or use backend openrlhf"
    ]
    one_gpu = "openrlhf: {gpus_per_node: 1, vllm_engines: 1}\n"  # sized for the small batches
    dapo = write(folder, RECIPE + "algorithm: {name: dapo}\n" + one_gpu)
    assert load_recipe(dapo, backend="openrlhf").options["--algo.dynamic_filtering_enable"]
    explicit = write(
        folder, RECIPE + "algorithm: {name: dapo, params: {dynamic_sampling: false}}\n"
    )
    loaded = load_recipe(explicit)
    assert loaded.options["loss_type"] == "dapo" and loaded.options["epsilon_high"] == 0.28
    assert loaded.options["overlong_reward"] == {"soft_punish_cache": 102, "weight": 1.0}
    plain = write(folder, RECIPE + "algorithm: {name: REINFORCE++}\n")
    assert issues(plain) == [
        "recipe.yaml:9: algorithm.name: backend 'trl' cannot run reinforce_pp: TRL 1.16 has no "
        "REINFORCE++: its GRPOTrainer and RLOOTrainer always subtract a per-prompt baseline; use "
        "reinforce_pp_baseline, or backend openrlhf"
    ]
    plain = write(folder, RECIPE + "algorithm: {name: REINFORCE++}\n" + one_gpu)
    assert load_recipe(plain, backend="openrlhf").options["--algo.advantage.estimator"] == (
        "reinforce"
    )
    k2 = write(folder, RECIPE + "algorithm: {name: grpo, params: {kl_estimator: k2}}\n")
    assert issues(k2)[0].startswith(
        "recipe.yaml:9: algorithm.params.kl_estimator: backend 'trl' cannot do kl_estimator k2"
    )
    no_kl = write(
        folder, RECIPE + "algorithm: {name: grpo, params: {kl_estimator: k2, kl_coef: 0}}\n"
    )
    assert load_recipe(no_kl).options["beta"] == 0  # no KL term: any estimator will do


def test_tiny_model_patch_must_match_the_budgets(folder: Path) -> None:
    path = write(folder, RECIPE.replace("tiny:qwen2.5-vl", "tiny:qwen3-vl").replace(
        '  - {spec: "more/*.yaml", weight: 2}\n', ""
    ))  # fmt: skip
    assert issues(path) == [
        "recipe.yaml:4: tasks.0.spec: task 'count': budget.video.patch 28 does not fit "
        "tiny:qwen3-vl (resize factor 32); set `patch: 32` in the spec's budget",
        "recipe.yaml:4: tasks.0.spec: task 'count': budget.image.patch 28 does not fit "
        "tiny:qwen3-vl (resize factor 32); set `patch: 32` in the spec's budget",
    ]
    unknown = write(folder, RECIPE.replace("tiny:qwen2.5-vl", "tiny:qwen4"))
    assert issues(unknown) == [
        "recipe.yaml:2: model: unknown tiny model 'tiny:qwen4'; choose tiny:qwen2.5-vl or "
        "tiny:qwen3-vl"
    ]


def test_include_merges_and_unknown_backend(folder: Path) -> None:
    write(folder, RECIPE, "_base.yaml")
    child = write(folder, "include: _base.yaml\nid: child\noptim: {steps: 9}\n", "child.yaml")
    loaded = load_recipe(child)
    assert (loaded.recipe.id, loaded.recipe.optim.steps, loaded.recipe.optim.prompts_per_step) == (
        "child", 9, 2,
    )  # fmt: skip
    assert is_recipe_document(child) and not is_recipe_document(folder / "count.yaml")
    assert issues(child, backend="verl") == [
        "child.yaml:1: backend: unknown backend 'verl' (valid: trl, openrlhf)"
    ]


def test_validate_command_tells_recipes_from_specs(folder: Path) -> None:
    write(folder, RECIPE)
    write(folder, RECIPE.replace("id: demo", "id: bad").replace("steps: 3", "steps: 0"), "bad.yaml")
    result = runner.invoke(app, ["validate", "recipe.yaml", "count.yaml", "bad.yaml", "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert [(r["id"], r["ok"]) for r in report["specs"]] == [
        ("demo", True), ("count", True), (None, False),
    ]  # fmt: skip
    assert [i["text"] for i in report["specs"][2]["issues"]] == [
        "bad.yaml:7: optim.steps: Input should be greater than or equal to 1"
    ]


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("hf://Org/Name$(id)@main", "is not a Hub repo id"),
        ("hf://../../etc", "is not a Hub repo id"),
        ("hf://Org/Na`id`me", "is not a Hub repo id"),
        ("hf://Org/Name/extra", "is not a Hub repo id"),
        ("hf://", "is not a Hub repo id"),
        ("hf://Org/Name@main$(touch${IFS}F)", "invalid revision"),
        ("hf://Org/Name@main;id", "invalid revision"),
        ("hf://Org/Name@'x'", "invalid revision"),
        ("hf://Org/Name@-x", "invalid revision"),
        ("hf://Org/Name@a..b", "invalid revision"),
        ("hf://Org/Name@", "invalid revision"),
    ],
)
def test_a_hub_model_that_is_not_one_is_one_line_at_its_field(
    folder: Path, model: str, says: str
) -> None:
    path = write(folder, RECIPE.replace("tiny:qwen2.5-vl", json.dumps(model)))
    with pytest.raises(SpecError) as caught:
        load_recipe(path)
    [line] = str(caught.value).splitlines()
    assert line.startswith("recipe.yaml:2: model: ") and says in line, line


@pytest.mark.parametrize(
    "model", ["hf://Qwen/Qwen2.5-VL-7B-Instruct", "hf://gpt2@refs/pr/1", f"hf://o/n@{'a' * 40}"]
)
def test_a_hub_model_with_a_repo_id_and_a_ref_is_taken(folder: Path, model: str) -> None:
    assert (
        load_recipe(write(folder, RECIPE.replace("tiny:qwen2.5-vl", model))).recipe.model == model
    )


def test_train_refuses_a_hub_model_override_that_is_not_one(folder: Path) -> None:
    path = write(folder, RECIPE)
    for model, says in [("hf://o/n@main$(id)", "invalid revision"), ("hf://o/n$(id)", "repo id")]:
        for mode in ("--plan", "--dry-run"):
            result = runner.invoke(app, ["train", str(path), mode, "--model", model])
            message = str(result.exception)
            assert isinstance(result.exception, UserError), result.exception
            assert message.startswith(f"--model: '{model}'") and says in message, message
            assert "\n" not in message
