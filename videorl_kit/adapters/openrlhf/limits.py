"""What OpenRLHF 0.11.2 refuses in a recipe, checked when the recipe is validated.

OpenRLHF checks its arguments after parsing them and again when ``train()`` places actors on
the cluster; a bad combination then fails on the cluster, minutes into a job. These rules
say the same things about the recipe's fields, so ``validate`` and ``train --dry-run`` refuse
the recipe first (the OpenRLHF adapter's tests run OpenRLHF's own checks on the same
combinations to prove the two agree):

* hybrid engine (``openrlhf.colocate``): the vLLM engines must use exactly the actor's GPUs
  (``vllm_engines × vllm_tensor_parallel_size == nodes × gpus_per_node``);
* every actor process needs at least one micro-batch per step
  (``prompts_per_step × group_size ÷ micro_batch_size ≥ nodes × gpus_per_node``);
* ``openrlhf.extra_args`` may not repeat a flag the recipe already sets
  (:data:`KIT_FLAGS`), nor turn on what vision-language training cannot do (packing,
  dynamic batching, ring attention: OpenRLHF asserts against packing for VLMs and forces
  packing for the other two), nor async training with the hybrid engine's sleep mode or
  partial rollouts without async training.

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

from typing import Any

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
        if not flag.startswith("--") or "." not in flag:
            problems.append((where, f"{flag!r} is not an OpenRLHF 0.11.2 dotted flag such as "
                             "--ds.param_dtype"))  # fmt: skip
        elif flag in KIT_FLAGS:
            problems.append((where, f"the recipe already sets {flag}; change the recipe field "
                             "instead"))  # fmt: skip
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
    """``(field path, message)`` for each combination OpenRLHF 0.11.2 would refuse (empty when
    the recipe's backend is not ``openrlhf``)."""
    if recipe.backend != "openrlhf":
        return []
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
    return problems
