"""From a checked plan to TRL's own config: ``GRPOConfig`` (or ``RLOOConfig`` for RLOO).

Batch sizes in a recipe are global: ``prompts_per_step`` × ``group_size`` completions per
optimiser step, ``micro_batch_size`` completions per device and pass. TRL wants per-device
numbers, so ``gradient_accumulation_steps`` = completions / (micro_batch_size × processes);
one generation batch feeds one optimiser step (TRL's default ``steps_per_generation``).

Example:
    >>> import tempfile
    >>> from videorl_kit.train.demo import write_demo_recipe
    >>> from videorl_kit.train.plan import plan_training
    >>> trainer, kwargs = config_kwargs(plan_training(write_demo_recipe(tempfile.mkdtemp())))
    >>> trainer, kwargs["num_generations"], kwargs["gradient_accumulation_steps"]
    ('grpo', 2, 1)
    >>> kwargs["loss_type"], kwargs["beta"], kwargs["max_steps"]
    ('grpo', 0.04, 2)
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
from typing import Any

from videorl_kit.adapters.trl.native_video import NativeVideoMixin
from videorl_kit.core.errors import UserError
from videorl_kit.core.safe_text import markdown_text
from videorl_kit.train.plan import TrainPlan

TRAINERS = {"grpo": ("GRPOConfig", "GRPOTrainer"), "rloo": ("RLOOConfig", "RLOOTrainer")}
"""The algorithm table's ``trainer`` option -> TRL's config and trainer class names."""

_SCHEDULES = {"constant": "constant", "linear": "linear", "cosine": "cosine"}


def config_class(trainer: str) -> type:
    """TRL's config dataclass for ``trainer`` (``grpo`` or ``rloo``)."""
    import trl

    return getattr(trl, TRAINERS[trainer][0])


@functools.cache
def trainer_class(trainer: str) -> type:
    """TRL's trainer class for ``trainer`` (``grpo`` | ``rloo``): native video, and resuming
    weights correctly.

    The subclass carries videos as videos when the dataset's rows hold cached media
    (:class:`~videorl_kit.adapters.trl.native_video.NativeVideoMixin`); for rows of frames as
    images it is TRL's trainer.

    transformers 5 saves Qwen-VL checkpoints in the released key layout (``visual.*``,
    ``model.layers.*``) but ``Trainer`` resumes by loading that state dict raw into the
    ``model.visual.*`` / ``model.language_model.*`` modules: no key matches, a warning is
    logged and training silently continues from the weights in memory (QwenLM/Qwen3-VL#1763,
    modelscope/ms-swift#7947). The subclass loads checkpoint weights through
    ``from_pretrained``, which applies the model's key conversion; optimiser, scheduler and
    RNG states are still restored by ``Trainer``.

    TRL writes a model card (``README.md``) into the run folder at each checkpoint, with the
    folder's name as its title; the subclass passes that name through
    :func:`~videorl_kit.core.safe_text.markdown_text`, so a folder name is never Markdown or HTML.
    """
    import trl

    base = getattr(trl, TRAINERS[trainer][1])

    def _load_from_checkpoint(self: Any, resume_from_checkpoint: str, model: Any = None) -> None:
        target = self.model if model is None else model
        if self.is_fsdp_enabled or self.is_deepspeed_enabled or hasattr(target, "peft_config"):
            base._load_from_checkpoint(self, resume_from_checkpoint, model)
            return
        saved = type(target).from_pretrained(resume_from_checkpoint, dtype=target.dtype)
        target.load_state_dict(saved.state_dict())

    def create_model_card(self: Any, model_name: str | None = None, **more: Any) -> None:
        name = None if model_name is None else markdown_text(model_name)
        base.create_model_card(self, model_name=name, **more)

    methods = {
        "_load_from_checkpoint": _load_from_checkpoint,
        "create_model_card": create_model_card,
    }
    bases = (NativeVideoMixin, base)  # native video (trl.video: native), else TRL's own paths
    return type(base.__name__, bases, methods)


def _has_cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def config_kwargs(plan: TrainPlan, world_size: int = 1) -> tuple[str, dict[str, Any]]:
    """The trainer (``grpo`` | ``rloo``) and the keyword arguments of its TRL config.

    Raises :class:`UserError` when the batch does not split over ``world_size`` processes or
    ``trl.options`` names a field TRL does not have or one the recipe already sets.
    """
    recipe = plan.recipe
    options = dict(plan.loaded.options)
    trainer = options.pop("trainer")
    options.pop("overlong_reward", None)  # applied inside the reward functions
    completions = recipe.optim.prompts_per_step * recipe.rollout.group_size
    per_pass = recipe.optim.micro_batch_size * world_size
    if completions % per_pass:
        raise UserError(
            f"{plan.loaded.path}: {completions} completions per step do not split into passes of "
            f"micro_batch_size {recipe.optim.micro_batch_size} on {world_size} processes"
        )
    cuda = _has_cuda()
    schedule = _SCHEDULES[recipe.optim.schedule]
    if schedule == "constant" and recipe.optim.warmup_ratio > 0:
        schedule = "constant_with_warmup"
    report_to = [name for name in ("tensorboard", "wandb") if getattr(recipe.logging, name)]
    kwargs: dict[str, Any] = {
        "output_dir": str(plan.output_dir),
        "run_name": recipe.id,
        "seed": recipe.seed,
        "data_seed": recipe.seed,
        "max_steps": recipe.optim.steps,
        "learning_rate": recipe.optim.lr,
        "lr_scheduler_type": schedule,
        "warmup_steps": recipe.optim.warmup_ratio,  # a float in [0, 1) is a ratio of the steps
        "weight_decay": recipe.optim.weight_decay,
        "max_grad_norm": recipe.optim.max_grad_norm,
        "per_device_train_batch_size": recipe.optim.micro_batch_size,
        "gradient_accumulation_steps": completions // per_pass,
        "num_generations": recipe.rollout.group_size,
        "max_completion_length": recipe.rollout.max_new_tokens,
        "temperature": recipe.rollout.temperature,
        "top_p": recipe.rollout.top_p,
        "logging_steps": recipe.logging.every_steps,
        "save_strategy": "steps",
        "save_steps": recipe.trl.save_steps,
        "save_total_limit": recipe.trl.save_total_limit,
        "report_to": report_to,
        "use_cpu": not cuda,
        "bf16": cuda if recipe.trl.bf16 is None else recipe.trl.bf16,
        "activation_checkpointing": recipe.trl.gradient_checkpointing,
        "gradient_checkpointing": None,
        "use_vllm": recipe.trl.use_vllm,
        "vllm_mode": recipe.trl.vllm_mode,
        "disable_tqdm": True,
        "remove_unused_columns": False,
        **options,
    }
    fields = {f.name for f in dataclasses.fields(config_class(trainer))}
    for key, value in recipe.trl.options.items():
        if key not in fields:
            close = difflib.get_close_matches(key, sorted(fields), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UserError(
                f"{plan.loaded.path}: trl.options.{key}: {TRAINERS[trainer][0]} has no field "
                f"{key!r}{hint}"
            )
        if key in kwargs:
            raise UserError(
                f"{plan.loaded.path}: trl.options.{key}: set by the recipe or its algorithm "
                f"({key}={kwargs[key]!r}); change the recipe field or the algorithm instead"
            )
        kwargs[key] = value
    return trainer, kwargs
