"""The OpenRLHF 0.11.2 command line of a run bundle, built from the recipe and the algorithm table.

Every flag is a dotted 0.11.2 flag (the flat names of 0.10.1 and earlier are refused by the
parser). The algorithm's own flags come from the table (``plan.loaded.options``); this module
adds the data, rollout, optimiser, sizing, reward and logging flags, then the recipe's
``openrlhf.extra_args`` (recipe validation refuses extra flags that repeat one set here:
:data:`~videorl_kit.adapters.openrlhf.limits.KIT_FLAGS`).

Batching: one rollout step takes ``optim.prompts_per_step`` prompts and ``rollout.group_size``
completions each, and one optimiser step trains on all of them (``--train.batch_size`` =
prompts × group, ``--train.max_epochs 1``). The run lasts ``optim.steps`` steps:
``--data.max_samples`` caps the mixed prompts at steps × prompts, and
``--train.num_episodes`` repeats the data when the tasks hold fewer prompts than that.

Example:
    >>> to_argv({"--a.b": 1, "--c": True, "--d": False, "--e": [0.2, 0.28], "--f": None})
    ['--a.b', '1', '--c', '--e', '0.2', '0.28']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEDULES = {"constant": "constant_with_warmup", "linear": "linear", "cosine": "cosine"}
"""Recipe ``optim.schedule`` → the ``transformers`` scheduler OpenRLHF builds."""

PROMPT_MARGIN_TOKENS = 64
"""Added to the longest prompt estimate (chat template tokens, estimate error)."""

WANDB_KEY_SWITCH = "env:WANDB_API_KEY"
"""OpenRLHF turns W&B on when ``--logger.wandb.key`` is set and logs in with it only when no
key is configured; the bundle never holds a secret, so the nodes need ``WANDB_API_KEY``."""


@dataclass(frozen=True)
class PromptStats:
    """What the exported prompts need from OpenRLHF's sizing flags."""

    files: Sequence[Path]
    probabilities: Sequence[float]
    n_prompts: int
    max_images: int
    max_videos: int
    max_prompt_tokens: int


def to_argv(flags: Mapping[str, Any]) -> list[str]:
    """Flags to argv: ``True`` is a bare switch, ``False``/``None`` are left out, a list or
    tuple gives several values."""
    argv: list[str] = []
    for flag, value in flags.items():
        if value is None or value is False:
            continue
        argv.append(flag)
        if value is True:
            continue
        values = value if isinstance(value, list | tuple) else [value]
        argv.extend(_text(v) for v in values)
    return argv


def _text(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _probabilities(values: Sequence[float]) -> str:
    """Full precision: numpy's sampler refuses probabilities that do not sum to 1 (±1e-8)."""
    return ",".join(repr(float(p)) for p in values)


def openrlhf_flags(
    recipe: Any,
    algorithm_options: Mapping[str, Any],
    *,
    model: str,
    prompts: PromptStats,
    output_dir: Path,
    reward_file: Path,
    agent_file: Path | None,
    resume: bool = False,
) -> dict[str, Any]:
    """Every flag of the run, in a stable order (see the module doc for the batching rule)."""
    optim, rollout, cluster = recipe.optim, recipe.rollout, recipe.openrlhf
    total_prompts = optim.steps * optim.prompts_per_step
    episodes = max(1, math.ceil(total_prompts / max(prompts.n_prompts, 1)))
    native = agent_file is not None
    flags: dict[str, Any] = {
        "--actor.model_name_or_path": model,
        "--data.prompt_dataset": ",".join(str(f) for f in prompts.files),
        "--data.prompt_probs": _probabilities(prompts.probabilities),
        "--data.input_key": "prompt",
        "--data.label_key": "label",
        "--data.image_key": "images",
        "--data.apply_chat_template": True,
        "--data.max_images_per_prompt": max(1, prompts.max_images),
        "--data.max_len": prompts.max_prompt_tokens + PROMPT_MARGIN_TOKENS + rollout.max_new_tokens,
        "--data.max_samples": total_prompts,
        "--rollout.max_new_tokens": rollout.max_new_tokens,
        "--rollout.n_samples_per_prompt": rollout.group_size,
        "--rollout.temperature": rollout.temperature,
        "--rollout.top_p": rollout.top_p,
        "--rollout.batch_size": optim.prompts_per_step,
        "--rollout.micro_batch_size": optim.micro_batch_size,
        "--train.batch_size": optim.prompts_per_step * rollout.group_size,
        "--train.micro_batch_size": optim.micro_batch_size,
        "--train.max_epochs": 1,
        "--train.num_episodes": episodes,
        "--train.seed": recipe.seed,
        "--actor.adam.lr": optim.lr,
        "--actor.adam.weight_decay": optim.weight_decay,
        "--actor.lr_scheduler": SCHEDULES[optim.schedule],
        "--actor.lr_warmup_ratio": optim.warmup_ratio,
        "--actor.max_norm": optim.max_grad_norm,
        "--actor.num_nodes": cluster.nodes,
        "--actor.num_gpus_per_node": cluster.gpus_per_node,
        "--ref.num_nodes": cluster.nodes,
        "--ref.num_gpus_per_node": cluster.gpus_per_node,
        "--vllm.num_engines": cluster.vllm_engines,
        "--vllm.tensor_parallel_size": cluster.vllm_tensor_parallel_size,
        "--vllm.gpu_memory_utilization": cluster.vllm_gpu_memory_utilization,
        "--train.colocate_all": cluster.colocate,
        "--vllm.enable_sleep": cluster.colocate,
        "--ds.enable_sleep": cluster.colocate,
        "--ds.zero_stage": cluster.zero_stage,
        "--ds.attn_implementation": "sdpa",
        "--reward.remote_url": None if native else str(reward_file),
        "--train.agent_func_path": str(agent_file) if native else None,
        "--ckpt.path": str(output_dir / "checkpoints"),
        "--ckpt.output_dir": str(output_dir / "model"),
        "--ckpt.load_enable": resume,
        "--logger.logging_steps": recipe.logging.every_steps,
        "--logger.tensorboard_dir": (
            str(output_dir / "tensorboard") if recipe.logging.tensorboard else None
        ),
    }
    if recipe.logging.wandb:
        flags["--logger.wandb.key"] = WANDB_KEY_SWITCH
        flags["--logger.wandb.project"] = recipe.logging.wandb_project or recipe.id
        flags["--logger.wandb.run_name"] = recipe.id
    flags.update(algorithm_options)
    offline = getattr(recipe, "offline", None)
    if offline is not None and offline.correction == "truncated_is":
        # OpenRLHF's TIS: each token's loss times clamp(pi_old / mu, 0, cap), mu the rollout's
        # log-probs (vLLM's for online members, the stored behaviour ones for offline members,
        # returned by the bundle's agent); the level also makes OpenRLHF ask for log-probs.
        flags["--algo.advantage.is_correction_level"] = "token"
        flags["--algo.advantage.is_correction_mode"] = "clip"
        flags["--algo.advantage.is_correction_gating"] = "ratio"
        flags["--algo.advantage.is_correction_threshold"] = [0.0, offline.cap]
    flags.update(cluster.extra_args)
    return flags
