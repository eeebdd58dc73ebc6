"""The OpenRLHF part of ``train --plan``: the bundle's argv, cluster sizing, memory inputs.

:func:`plan_bundle` builds the argv with the same :func:`~.argv.openrlhf_flags` the bundle
uses, from the recipe alone. The values that only the exported prompts can give (they need
the built store and the model's processor) are placeholders, each explained, with the
estimate the budget gives:

=========================== =================================================================
``<MODEL_DIR>``             ``--actor.model_name_or_path`` of a ``hf://`` model: OpenRLHF
                            trains a downloaded folder (:func:`.backend.hub_model_problem`)
``<MAX_LEN>``               ``--data.max_len``: longest exported prompt + 64 + max_new_tokens
``<MAX_IMAGES>``            ``--data.max_images_per_prompt``: most images of one prompt
``<NUM_EPISODES>``          ``--train.num_episodes``: only when the sample count is unknown
=========================== =================================================================

Example:
    >>> from videorl_kit.train.cluster_plan import draft_plan
    >>> part = plan_bundle(draft_plan("recipes/qwen2.5-vl-7b-grpo.yaml", store="no-store"))
    >>> argv = part.launch["argv"]
    >>> argv[argv.index("--actor.model_name_or_path") + 1], part.sizing["gpus"]
    ('<MODEL_DIR>', 8)
"""

from __future__ import annotations

import math
import shlex
from pathlib import Path
from typing import Any

from videorl_kit.adapters.openrlhf.argv import (
    PROMPT_MARGIN_TOKENS,
    PromptStats,
    openrlhf_flags,
    to_argv,
)
from videorl_kit.adapters.openrlhf.launch import DEFAULT_RAY_ADDRESS
from videorl_kit.core.errors import UserError
from videorl_kit.train.cluster_plan import GIB, BackendPlan, Missing, PlanDraft
from videorl_kit.train.plan import BASE_MODEL_DIR
from videorl_kit.train.script_values import path_arg


def _model_arg(draft: PlanDraft, root: Path) -> tuple[str, Missing | None]:
    model = draft.model
    if model.kind == "tiny":
        return str(root / BASE_MODEL_DIR), None
    if model.kind == "local":
        return str(Path(model.name).resolve()), None
    state = "pinned" if model.revision else "not pinned"
    problem = f"model {model.describe()}: {state}; OpenRLHF trains a downloaded folder"
    download = ["hf", "download", model.name, "--revision", model.revision or "REV"]
    command = (
        f"{shlex.join([*download, '--local-dir', 'DIR'])}, then set model: DIR in "
        f"{shlex.quote(str(draft.loaded.path))} (or pass --model DIR)"
    )
    return "<MODEL_DIR>", Missing(problem, command)


def _flag(flags: dict[str, Any], name: str) -> bool:
    return bool(flags.get(name))


def plan_bundle(draft: PlanDraft, ray_address: str | None = None) -> BackendPlan:
    """The OpenRLHF part of a plan (see the module docstring); ``ray_address``: where the
    job would go (default: the recipe's ``openrlhf.ray_address``, else this machine)."""
    recipe, loaded = draft.recipe, draft.loaded
    cluster, optim, rollout = recipe.openrlhf, recipe.optim, recipe.rollout
    native = cluster.video == "native"
    if recipe.offline is not None and not native:
        raise UserError(
            f"{loaded.path}: offline: backend openrlhf mixes stored responses in through the "
            "bundle's agent, which only the native video path has; set openrlhf.video: native"
        )
    draft.use_video_path(cluster.video)
    root = draft.output_dir.resolve()
    model_arg, model_missing = _model_arg(draft, root)
    if model_missing is not None:  # says how to pin and download, for every node
        draft.replace_model_missing()
    weights = [entry.weight for entry in loaded.tasks]
    n_prompts = None if draft.samples is None else sum(draft.samples.values())
    stats = PromptStats(
        files=[root / "data" / f"train.{entry.spec.id}.jsonl" for entry in loaded.tasks],
        probabilities=[w / sum(weights) for w in weights],
        n_prompts=n_prompts or 1,
        max_images=1,
        max_videos=1,
        max_prompt_tokens=0,
    )
    flags = openrlhf_flags(
        recipe,
        loaded.options,
        model=model_arg,
        prompts=stats,
        output_dir=root,
        reward_file=root / "reward_func.py",
        agent_file=root / "agent_func.py" if native else None,
    )
    max_frames = max(b.max_frames for b in draft.budgets)
    exports = "the prompts the bundle exports from the built store"
    placeholders: dict[str, dict[str, Any]] = {
        "<MAX_LEN>": {
            "flag": "--data.max_len",
            "means": f"longest prompt in tokens + {PROMPT_MARGIN_TOKENS} + rollout.max_new_tokens "
            f"{rollout.max_new_tokens}",
            "needs": f"{exports}, tokenized by the model's processor",
            "estimate": draft.max_prompt_tokens() + PROMPT_MARGIN_TOKENS + rollout.max_new_tokens,
        },
        "<MAX_IMAGES>": {
            "flag": "--data.max_images_per_prompt",
            "means": "most images of one prompt" + ("" if native else " (every frame an image)"),
            "needs": exports,
            "estimate": 1 if native else max_frames,
        },
    }
    flags["--data.max_len"] = "<MAX_LEN>"
    flags["--data.max_images_per_prompt"] = "<MAX_IMAGES>"
    if n_prompts is None:
        flags["--train.num_episodes"] = "<NUM_EPISODES>"
        placeholders["<NUM_EPISODES>"] = {
            "flag": "--train.num_episodes",
            "means": "ceil(steps × prompts_per_step / prompts held by the tasks)",
            "needs": "the sample count (the built store)",
            "estimate": None,
        }
    if model_arg == "<MODEL_DIR>":
        placeholders["<MODEL_DIR>"] = {
            "flag": "--actor.model_name_or_path",
            "means": f"the folder holding {draft.model.describe()}",
            "needs": "the model downloaded at a pinned revision",
            "estimate": None,
        }
    actor_gpus = cluster.nodes * cluster.gpus_per_node
    vllm_gpus = cluster.vllm_engines * cluster.vllm_tensor_parallel_size
    reference = loaded.params.get("kl_coef", 0) > 0
    shared_ref = cluster.colocate or _flag(flags, "--train.colocate_actor_ref")
    completions = optim.prompts_per_step * rollout.group_size
    micro_batches = completions // optim.micro_batch_size
    if cluster.colocate:
        gpus = actor_gpus
        layout = f"hybrid engine: actor, reference and {cluster.vllm_engines} vLLM engines share "
        layout += f"the {actor_gpus} GPUs (vLLM sleeps while the actor trains)"
    else:
        gpus = actor_gpus + (0 if shared_ref or not reference else actor_gpus) + vllm_gpus
        layout = "separate GPUs for the actor" + ("" if shared_ref else ", the reference")
        layout += " and the vLLM engines"
    sizing: dict[str, Any] = {
        "nodes": cluster.nodes,
        "gpus_per_node": cluster.gpus_per_node,
        "gpus": gpus,
        "layout": layout,
        "actor": {
            "nodes": cluster.nodes,
            "gpus_per_node": cluster.gpus_per_node,
            "gpus": actor_gpus,
            "zero_stage": cluster.zero_stage,
        },
        "reference": {
            "gpus": actor_gpus if reference else 0,
            "loaded": reference,
            "offload": _flag(flags, "--ref.offload"),
        },
        "vllm": {
            "engines": cluster.vllm_engines,
            "tensor_parallel": cluster.vllm_tensor_parallel_size,
            "gpus": vllm_gpus,
            "gpu_memory_utilization": cluster.vllm_gpu_memory_utilization,
        },
        "completions_per_step": completions,
        "micro_batch_per_gpu": optim.micro_batch_size,
        "micro_batches_per_gpu_per_step": math.ceil(micro_batches / actor_gpus),
    }
    notes = []
    if draft.model_shape is not None:
        per_engine = 2 * draft.model_shape.params / cluster.vllm_tensor_parallel_size / GIB
        sizing["vllm"]["weights_per_gpu_gib"] = round(per_engine, 1)
        notes.append(
            f"rollout: each vLLM GPU holds {per_engine:.1f} GiB of bf16 weights within its "
            f"{cluster.vllm_gpu_memory_utilization:.0%} share of the GPU's memory (the rest is "
            "KV cache)"
        )
    checkpointing = _flag(flags, "--actor.gradient_checkpointing_enable")
    if not checkpointing:
        notes.append(
            "gradient checkpointing is off (add --actor.gradient_checkpointing_enable: true "
            "to openrlhf.extra_args to trade compute for activation memory)"
        )
    argv = to_argv(flags)
    launch = {
        "entry": "python -m openrlhf.cli.train_ppo_ray",
        "argv": argv,
        "ray_address": ray_address or cluster.ray_address or DEFAULT_RAY_ADDRESS,
        "bundle": str(root),
        "write_bundle": shlex.join(
            [
                "videorl-kit",
                "train",
                path_arg(loaded.path),
                "--backend",
                "openrlhf",
                "--dry-run",
                "--store",
                path_arg(draft.store),
                "--max-steps",
                str(recipe.optim.steps),
                "--output",
                str(root),
            ]
        ),
        "submit": shlex.join(["bash", str(root / "launch.sh")]),
    }
    return BackendPlan(
        launch=launch,
        sizing=sizing,
        shards=actor_gpus,
        zero_stage=cluster.zero_stage,
        micro_batch=optim.micro_batch_size,
        checkpointing=checkpointing,
        adam_offload=_flag(flags, "--ds.adam_offload"),
        reference_offload=_flag(flags, "--ref.offload"),
        placeholders=placeholders,
        missing=[model_missing] if model_missing else [],
        notes=notes,
    )
