"""A backend's rules live behind the backend: ``problems(loaded)`` of the backend protocol,
asked by recipe validation through the backends the CLI injects (``cli.build_app``), and
reported with the recipe's own problems, all at once, at their file, line and field path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from videorl_kit.cli import BACKENDS, build_app
from videorl_kit.spec.loader import SpecError
from videorl_kit.train.demo import write_demo_recipe
from videorl_kit.train.recipe import load_recipe

runner = CliRunner()

# line numbers matter: the tests below name them
RECIPE = """\
id: demo-grpo
model: tiny:qwen2.5-vl
tasks: [demo.yaml{more_tasks}]
store: store
algorithm: {{name: grpo}}
rollout: {{group_size: 2, max_new_tokens: 8}}
optim: {{lr: 1.0e-4, prompts_per_step: 2, micro_batch_size: 4, steps: 2}}
backend: {backend}
openrlhf:
  gpus_per_node: 2
  vllm_engines: 1
  extra_args: {{--ds.packing_samples: true, --data.max_len: 9}}
output_dir: "runs/a,b"
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo task (no store: recipe validation needs none)."""
    return write_demo_recipe(tmp_path_factory.mktemp("backend-problems"), build=False).parent


def recipe(demo: Path, name: str, *, backend: str = "openrlhf", more_tasks: str = "") -> Path:
    path = demo / f"{name}.yaml"
    path.write_text(RECIPE.format(backend=backend, more_tasks=more_tasks), encoding="utf-8")
    return path


class OneStepBackend:
    """A backend from outside the kit, in the style of the kit's own: it only has rules here."""

    name = "trl"

    def __init__(self) -> None:
        self.asked: list[Any] = []

    def problems(self, loaded: Any) -> list[tuple[str, str]]:
        self.asked.append(loaded)
        steps = loaded.recipe.optim.steps
        found = [("tasks.0.spec", f"one-step cannot read task {loaded.tasks[0].spec.id!r}")]
        if steps > 1:
            found.append(("optim.steps", f"one-step trains a single step, not {steps}"))
        return found

    # the rest of the protocol, never reached by validation
    def check(self, plan: Any) -> None:
        raise AssertionError("validation only")

    plan = prepare = train = check


def test_a_third_party_backends_problems_reach_validate_with_the_recipes_own(demo):
    made: list[OneStepBackend] = []

    def factory() -> OneStepBackend:
        made.append(OneStepBackend())
        return made[-1]

    app = build_app({**BACKENDS, "trl": factory})  # as the CLI injects its own backends
    path = recipe(demo, "one-step", backend="trl", more_tasks=", missing.yaml")
    done = runner.invoke(app, ["validate", str(path)])
    assert done.exit_code == 1
    lines = [line for line in done.stdout.splitlines() if line.startswith(f"{path}:")]
    assert lines == [
        f"{path}:3: tasks.1.spec: spec file not found: missing.yaml (looked for "
        f"{demo / 'missing.yaml'})",
        f"{path}:3: tasks.0.spec: one-step cannot read task 'demo'",
        f"{path}:7: optim.steps: one-step trains a single step, not 2",
    ]
    assert made and made[-1].asked[0].path == path  # asked with the loaded recipe

    done = runner.invoke(app, ["train", str(path), "--dry-run"])
    assert isinstance(done.exception, SpecError)  # train asks the same backend, first
    assert f"{path}:7: optim.steps: one-step trains a single step, not 2" in str(done.exception)

    plain = runner.invoke(build_app(BACKENDS), ["validate", str(path)])
    assert "one-step cannot" not in plain.output  # the rules came from the injected backend
    assert "one-step trains" not in plain.output and "spec file not found" in plain.output


def test_load_recipe_alone_reports_no_backend_rules(demo):
    path = recipe(demo, "openrlhf-limits")
    loaded = load_recipe(path)  # every OpenRLHF limit broken, none reported without backends
    assert loaded.backend == "openrlhf" and loaded.recipe.openrlhf.gpus_per_node == 2
    with pytest.raises(SpecError) as caught:
        load_recipe(path, backends=BACKENDS)
    assert [(i.line, i.path) for i in caught.value.issues] == [
        (7, "optim.micro_batch_size"),
        (11, "openrlhf.vllm_engines"),
        (12, "openrlhf.extra_args.--ds.packing_samples"),
        (12, "openrlhf.extra_args.--data.max_len"),
        (13, "output_dir"),
    ]


def test_recipe_and_openrlhf_problems_are_one_error_with_the_same_text(demo):
    path = recipe(demo, "both", more_tasks=", missing.yaml")
    done = runner.invoke(build_app(BACKENDS), ["validate", str(path)])
    assert done.exit_code == 1
    lines = [line for line in done.stdout.splitlines() if line.startswith(f"{path}:")]
    assert lines == [
        f"{path}:3: tasks.1.spec: spec file not found: missing.yaml (looked for "
        f"{demo / 'missing.yaml'})",
        f"{path}:7: optim.micro_batch_size: each of the 2 actor GPUs needs a micro-batch per "
        "step, but prompts_per_step 2 × rollout.group_size 2 ÷ micro_batch_size 4 gives 1",
        f"{path}:11: openrlhf.vllm_engines: with colocate: true the vLLM engines must use "
        "exactly the actor GPUs: vllm_engines 1 × vllm_tensor_parallel_size 1 = 1, but nodes "
        "1 × gpus_per_node 2 = 2",
        f"{path}:12: openrlhf.extra_args.--ds.packing_samples: vision-language training cannot "
        "use --ds.packing_samples: packing breaks the alignment of image/video tokens and pixels",
        f"{path}:12: openrlhf.extra_args.--data.max_len: the recipe already sets "
        "--data.max_len; change the recipe field instead",
        f"{path}:13: output_dir: the bundle folder {demo / 'runs' / 'a,b'} holds ',', which "
        "OpenRLHF 0.11.2 reads as a separator in --data.prompt_dataset and "
        "--reward.remote_url; choose an output folder without ',' and '@'",
    ]
    # --output replaces the recipe's folder: its rule is left to the backend's check of the
    # folder it writes; the rest still stands
    out = demo / "runs" / "fine"
    done = runner.invoke(build_app(BACKENDS), ["train", str(path), "--dry-run", "--output",
                                               str(out)])  # fmt: skip
    assert isinstance(done.exception, SpecError)
    message = str(done.exception)
    assert "openrlhf.vllm_engines" in message and "output_dir" not in message
