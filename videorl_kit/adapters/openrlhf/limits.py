"""What OpenRLHF 0.11.2 refuses in a recipe: the OpenRLHF backend's ``problems``.

:meth:`~videorl_kit.adapters.openrlhf.backend.OpenRLHFBackend.problems` returns
:func:`recipe_problems`, and recipe validation (``validate``, ``train``, ``train --plan``,
through the backends the CLI injects) reports them with the recipe's other problems, each at
its file, line and field path. OpenRLHF checks its arguments after parsing them and again when
``train()`` places actors on the cluster; a bad combination then fails on the cluster, minutes
into a job. These rules say the same things about the recipe's fields, so the recipe is refused
first (the OpenRLHF adapter's tests run OpenRLHF's own checks on the same combinations to prove
the two agree):

* hybrid engine (``openrlhf.colocate``): the vLLM engines must use exactly the actor's GPUs
  (``vllm_engines × vllm_tensor_parallel_size == nodes × gpus_per_node``);
* every actor process needs at least one micro-batch per step
  (``prompts_per_step × group_size ÷ micro_batch_size ≥ nodes × gpus_per_node``);
* each key of ``openrlhf.extra_args`` is the full spelling of an OpenRLHF 0.11.2 flag
  (no ``--flag=value``, no abbreviation, no whitespace: :func:`.flags.key_problem`) and each
  value fits its flag and cannot be read as a flag (:func:`.flags.value_problem`);
* ``openrlhf.extra_args`` may not repeat a flag the recipe already sets
  (:data:`KIT_FLAGS`), nor turn on what vision-language training cannot do (packing,
  dynamic batching, ring attention: OpenRLHF asserts against packing for VLMs and forces
  packing for the other two), nor async training with the hybrid engine's sleep mode or
  partial rollouts without async training;
* the bundle folder (the recipe's ``output_dir``) may not hold ``,`` or ``@``
  (:func:`bundle_path_problem`);
* an ``offline:`` section needs the native video path (the bundle's agent returns the
  offline members), OpenRLHF's PPO loss for ``truncated_is``, and no ``--eval.*`` flags
  (:func:`offline_problems`).

Example:
    >>> from types import SimpleNamespace as NS
    >>> recipe = NS(backend="openrlhf",
    ...     openrlhf=NS(nodes=1, gpus_per_node=8, vllm_engines=4, vllm_tensor_parallel_size=1,
    ...                 colocate=True, extra_args={}),
    ...     optim=NS(prompts_per_step=2, micro_batch_size=2), rollout=NS(group_size=8))
    >>> [(path, message[-38:]) for path, message in openrlhf_problems(recipe)]
    [('openrlhf.vllm_engines', '= 4, but nodes 1 × gpus_per_node 8 = 8')]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from videorl_kit.adapters.openrlhf.flags import key_problem, read_key, value_problem
from videorl_kit.core.safe_text import quoted
from videorl_kit.train.script_values import text_problem

KIT_FLAGS = frozenset(
    {
        "--actor.model_name_or_path",
        "--data.prompt_dataset",
        "--data.prompt_probs",
        "--data.input_key",
        "--data.label_key",
        "--data.image_key",
        "--data.apply_chat_template",
        "--data.max_images_per_prompt",
        "--data.max_len",
        "--data.max_samples",
        "--rollout.max_new_tokens",
        "--rollout.n_samples_per_prompt",
        "--rollout.temperature",
        "--rollout.top_p",
        "--rollout.batch_size",
        "--rollout.micro_batch_size",
        "--train.batch_size",
        "--train.micro_batch_size",
        "--train.max_epochs",
        "--train.num_episodes",
        "--train.seed",
        "--train.colocate_all",
        "--train.agent_func_path",
        "--reward.remote_url",
        "--actor.adam.lr",
        "--actor.adam.weight_decay",
        "--actor.lr_scheduler",
        "--actor.lr_warmup_ratio",
        "--actor.max_norm",
        "--actor.num_nodes",
        "--actor.num_gpus_per_node",
        "--ref.num_nodes",
        "--ref.num_gpus_per_node",
        "--vllm.num_engines",
        "--vllm.tensor_parallel_size",
        "--vllm.gpu_memory_utilization",
        "--vllm.enable_sleep",
        "--ds.enable_sleep",
        "--ds.zero_stage",
        "--ckpt.path",
        "--ckpt.output_dir",
        "--ckpt.load_enable",
        "--logger.logging_steps",
        "--logger.tensorboard_dir",
        "--logger.wandb.key",
        "--logger.wandb.project",
        "--logger.wandb.run_name",
    }
)
"""Flags the OpenRLHF adapter derives from recipe fields (the algorithm's own flags come from
the algorithm table); ``openrlhf.extra_args`` may not set them."""

_NOT_FOR_VLM = {
    "--ds.packing_samples": "packing breaks the alignment of image/video tokens and pixels",
    "--train.dynamic_batch_enable": "it turns on --ds.packing_samples",
    "--ds.ring_attn_size": "ring attention turns on --ds.packing_samples",
}


def _switched_on(flag: str, value: Any) -> bool:
    if flag == "--ds.ring_attn_size":
        return isinstance(value, int) and not isinstance(value, bool) and value > 1
    return value is True


def extra_args_problems(extra: dict[str, Any], *, colocate: bool) -> list[tuple[str, str]]:
    """``(field path, message)`` for each flag of ``openrlhf.extra_args`` OpenRLHF would
    refuse, or that repeats a flag the recipe sets.

    Example:
        >>> [problem] = extra_args_problems(
        ...     {"--data.max_len": 4096, "--ds.param_dtype": "bf16"}, colocate=True)
        >>> problem[0], problem[1][:40]
        ('openrlhf.extra_args.--data.max_len', 'the recipe already sets --data.max_len; ')
    """
    problems = []
    for flag, value in extra.items():
        where = f"openrlhf.extra_args.{flag}"
        spelling = key_problem(flag)
        if spelling:
            meant = read_key(flag).flags if flag.startswith("--") else ()
            if len(meant) == 1 and meant[0] in KIT_FLAGS:
                spelling += f"; but the recipe already sets {meant[0]}: change the recipe field"
            problems.append((where, spelling))
        elif flag in KIT_FLAGS:
            problems.append((where, f"the recipe already sets {flag}; change the recipe field "
                             "instead"))  # fmt: skip
        elif value_problem(flag, value):
            problems.append((where, str(value_problem(flag, value))))
        elif flag in _NOT_FOR_VLM and _switched_on(flag, value):
            problems.append((where, f"vision-language training cannot use {flag}: "
                             f"{_NOT_FOR_VLM[flag]}"))  # fmt: skip
        elif flag == "--train.async_enable" and value is True and colocate:
            problems.append((where, "async training cannot sleep the vLLM engines: set "
                             "openrlhf.colocate: false to train asynchronously"))  # fmt: skip
        elif (
            flag == "--train.partial_rollout_enable"
            and value is True
            and extra.get("--train.async_enable") is not True
        ):
            problems.append((where, "partial rollouts need --train.async_enable: true"))
    return problems


def openrlhf_problems(recipe: Any) -> list[tuple[str, str]]:
    """``(field path, message)`` for each combination of a recipe's fields OpenRLHF 0.11.2
    would refuse (the module's example shows one)."""
    cluster, optim = recipe.openrlhf, recipe.optim
    actor_gpus = cluster.nodes * cluster.gpus_per_node
    problems = []
    async_training = cluster.extra_args.get("--train.async_enable") is True
    vllm_gpus = cluster.vllm_engines * cluster.vllm_tensor_parallel_size
    if cluster.colocate and not async_training and vllm_gpus != actor_gpus:
        problems.append((
            "openrlhf.vllm_engines",
            "with colocate: true the vLLM engines must use exactly the actor GPUs: "
            f"vllm_engines {cluster.vllm_engines} × vllm_tensor_parallel_size "
            f"{cluster.vllm_tensor_parallel_size} = {vllm_gpus}, but nodes {cluster.nodes} × "
            f"gpus_per_node {cluster.gpus_per_node} = {actor_gpus}",
        ))  # fmt: skip
    micro_batches = optim.prompts_per_step * recipe.rollout.group_size // optim.micro_batch_size
    if micro_batches < actor_gpus:
        problems.append((
            "optim.micro_batch_size",
            f"each of the {actor_gpus} actor GPUs needs a micro-batch per step, but "
            f"prompts_per_step {optim.prompts_per_step} × rollout.group_size "
            f"{recipe.rollout.group_size} ÷ micro_batch_size {optim.micro_batch_size} gives "
            f"{micro_batches}",
        ))  # fmt: skip
    problems += extra_args_problems(cluster.extra_args, colocate=cluster.colocate)
    project = getattr(getattr(recipe, "logging", None), "wandb_project", None)
    if project and project.startswith("-"):
        problems.append((
            "logging.wandb_project",
            f"{quoted(project)} starts with '-': OpenRLHF's parser would read the value of "
            "--logger.wandb.project as a flag",
        ))  # fmt: skip
    return problems


PATH_SEPARATORS = (",", "@")
"""Characters OpenRLHF 0.11.2 splits its path lists at (see :func:`bundle_path_problem`)."""


def bundle_path_problem(bundle: Path) -> str | None:
    """Why OpenRLHF 0.11.2 cannot read a run bundle at the absolute path ``bundle``, or None.

    OpenRLHF 0.11.2 splits ``--data.prompt_dataset`` on ``,`` (``blending_datasets``) and cuts
    each entry at ``@`` (a data dir), and splits ``--reward.remote_url`` on ``,``, so such a
    bundle would fail inside OpenRLHF's start-up, after the GPUs are allocated.

    Example:
        >>> bundle_path_problem(Path("/runs/tiny")) is None
        True
        >>> bundle_path_problem(Path("/runs/a,b@c"))[:47]
        "the bundle folder /runs/a,b@c holds ',' and '@'"
    """
    text = str(bundle)
    found = [c for c in PATH_SEPARATORS if c in text]
    if found:
        return (
            f"the bundle folder {text} holds {' and '.join(repr(c) for c in found)}, which "
            "OpenRLHF 0.11.2 reads as a separator in --data.prompt_dataset and "
            "--reward.remote_url; choose an output folder without ',' and '@'"
        )
    problem = text_problem(text)
    return f"the bundle folder {quoted(text)} {problem}" if problem else None


IS_FLAGS = (
    "--algo.advantage.is_correction_level",
    "--algo.advantage.is_correction_mode",
    "--algo.advantage.is_correction_gating",
    "--algo.advantage.is_correction_threshold",
)
"""OpenRLHF's train/rollout importance-correction flags (the bundle sets them for
``offline.correction: truncated_is``)."""


def offline_problems(recipe: Any, options: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field path, message)`` for each thing of ``recipe.offline`` OpenRLHF cannot do
    (``options``: the algorithm's OpenRLHF options); empty without an ``offline:`` section.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> recipe = NS(offline=NS(correction="truncated_is"), algorithm=NS(name="gspo"),
        ...             openrlhf=NS(video="native", extra_args={}))
        >>> for path, message in offline_problems(recipe, {"--actor.policy_loss_type": "gspo"}):
        ...     print(path, "|", message[:56])
        offline.correction | backend openrlhf: truncated_is is OpenRLHF's token-level
    """
    section = recipe.offline
    if section is None:
        return []
    extra = recipe.openrlhf.extra_args
    problems = []
    set_is = [flag for flag in IS_FLAGS if flag in extra]
    if set_is and section.correction == "truncated_is":
        problems.append(
            (
                "openrlhf.extra_args",
                f"{set_is[0]} is set by offline.correction truncated_is; remove it from extra_args",
            )
        )
    level = extra.get("--algo.advantage.is_correction_level", "off")
    if section.correction != "truncated_is" and level != "off":
        problems.append(
            (
                "offline.correction",
                f"backend openrlhf: with "
                f"--algo.advantage.is_correction_level {level} OpenRLHF weights every "
                "member by exp(old - rollout log-probs), which offline members with "
                f"correction {section.correction} do not have; choose truncated_is or "
                "leave the correction off",
            )
        )
    loss = options.get("--actor.policy_loss_type", "ppo")
    if section.correction == "truncated_is" and loss != "ppo":
        problems.append(
            (
                "offline.correction",
                "backend openrlhf: truncated_is is OpenRLHF's "
                "token-level clip correction of its PPO loss; algorithm "
                f"{recipe.algorithm.name} uses policy loss {loss}, which takes the rollout "
                "log-probs as its ratio's base instead",
            )
        )
    if recipe.openrlhf.video != "native":
        problems.append(
            (
                "openrlhf.video",
                f"backend openrlhf: offline members are returned by the bundle's agent, which "
                f"only the native video path has (openrlhf.video is {recipe.openrlhf.video}); "
                "set openrlhf.video: native",
            )
        )
    evals = sorted(flag for flag in extra if str(flag).startswith("--eval."))
    if evals:
        problems.append(
            (
                "openrlhf.extra_args",
                f"backend openrlhf: {evals[0]} with offline "
                "mixing: the bundle's agent cannot tell evaluation rollouts from "
                "training ones, and would mix stored responses into them",
            )
        )
    return problems


def recipe_problems(loaded: Any) -> list[tuple[str, str]]:
    """Everything OpenRLHF 0.11.2 would refuse in a loaded recipe (``LoadedRecipe``), as
    ``(field path, message)``: its fields (:func:`openrlhf_problems`), its bundle folder
    (``output_dir``, resolved against the recipe's folder) and its ``offline:`` section.

    Example:
        >>> from videorl_kit.train.recipe import load_recipe
        >>> recipe_problems(load_recipe("recipes/qwen2.5-vl-7b-grpo.yaml"))
        []
    """
    recipe = loaded.recipe
    problems = openrlhf_problems(recipe)
    bundle = bundle_path_problem(loaded.resolve(recipe.output_dir).resolve())
    if bundle:
        problems.append(("output_dir", bundle))
    return problems + offline_problems(recipe, loaded.options)
