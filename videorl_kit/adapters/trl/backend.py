"""The embedded TRL backend: an in-process ``GRPOTrainer`` (or ``RLOOTrainer``) on the cache.

:class:`TrlBackend` implements :class:`videorl_kit.train.run.TrainBackend`. ``prepare`` writes
``trl_config.json`` (the exact config keyword arguments); ``train`` loads the model and its
processor, builds the dataset of cached frames and one reward function per task, and runs
TRL's trainer with two callbacks: ``metrics.jsonl`` and a Rich progress bar. Checkpoints go
to ``checkpoint-N/`` in the run folder; the trained model and processor to ``model/``.

Example:
    >>> import tempfile
    >>> from videorl_kit.train.demo import write_demo_recipe
    >>> from videorl_kit.train.plan import plan_training
    >>> from videorl_kit.train.run import run_training
    >>> plan = plan_training(write_demo_recipe(tempfile.mkdtemp()))
    >>> report = run_training(plan, TrlBackend())  # two GRPO steps of the tiny model
    >>> sorted(p.name for p in plan.output_dir.glob("checkpoint-*")), report.tasks[0].task
    (['checkpoint-1', 'checkpoint-2'], 'demo')
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from videorl_kit.adapters.trl.config import config_class, config_kwargs, trainer_class
from videorl_kit.adapters.trl.dataset import FrameSource, build_train_dataset, keep_cached_sizes
from videorl_kit.adapters.trl.offline import OfflineRun, check_offline_tokens, offline_trainer_class
from videorl_kit.adapters.trl.rewards import task_rewards
from videorl_kit.core.errors import UserError
from videorl_kit.store.torch_dataset import processor_factor
from videorl_kit.train.metrics import METRICS_FILE, MetricsLog
from videorl_kit.train.plan import TrainPlan, check_patch_factor

CONFIG_FILE = "trl_config.json"
FINAL_MODEL_DIR = "model"
VISION_TOKENS = ("<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>")
"""Tokens a completion must never contain: they would not match any image features."""


def last_checkpoint(output_dir: Path) -> Path | None:
    """The newest complete ``checkpoint-N`` folder of a run, if any.

    Example:
        >>> last_checkpoint(Path("no-such-run")) is None
        True
    """
    found = [
        (int(p.name.split("-")[1]), p)
        for p in output_dir.glob("checkpoint-*")
        if p.name.split("-")[1].isdigit() and (p / "trainer_state.json").is_file()
    ]
    return max(found)[1] if found else None


def _world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


class TrlBackend:
    """TRL 1.16 in this process (CPU, or GPUs through ``accelerate launch``).

    ``frame_source`` replaces where a row's frames come from (default: the run's frame
    store); ``callbacks`` are TRL ``TrainerCallback``s added to the kit's own. The training
    benchmark passes a decoder and a wall-clock timer to time decoding every step.
    """

    name = "trl"

    def __init__(self, frame_source: FrameSource | None = None, callbacks: Sequence[Any] = ()):
        self.frame_source = frame_source
        self.callbacks = list(callbacks)

    def check(self, plan: TrainPlan) -> None:
        """Refuse what this backend cannot run, before anything is written."""
        needed = ("trl", "accelerate", "datasets")
        missing = [name for name in needed if importlib.util.find_spec(name) is None]
        if missing:
            raise UserError(
                f"backend trl needs {', '.join(missing)}: pip install 'videorl-kit[train,data]'"
            )
        if plan.recipe.trl.use_vllm and importlib.util.find_spec("vllm") is None:
            raise UserError(f"{plan.loaded.path}: trl.use_vllm is on but vllm is not installed")
        config_kwargs(plan, _world_size())  # batch split and trl.options
        if plan.recipe.offline is not None:
            check_offline_tokens(plan)
        if plan.resume and last_checkpoint(plan.output_dir) is None:
            raise UserError(
                f"--resume: {plan.output_dir} has no checkpoint yet (checkpoints are saved every "
                f"{plan.recipe.trl.save_steps} steps); run it again without --resume"
            )

    def prepare(self, plan: TrainPlan) -> dict[str, Any]:
        """Write ``trl_config.json``; return the trainer and its config for ``--dry-run``."""
        trainer, kwargs = config_kwargs(plan, _world_size())
        return _write_config(plan, trainer, kwargs)

    def train(self, plan: TrainPlan) -> None:
        """Train (resuming from the last checkpoint when ``plan.resume``)."""
        from transformers import AutoModelForImageTextToText, AutoProcessor, PrinterCallback

        # the callbacks subclass transformers' TrainerCallback: they load with transformers
        from videorl_kit.adapters.trl.callbacks import MetricsCallback, RichProgressCallback

        trainer_name, kwargs = config_kwargs(plan, _world_size())
        if plan.recipe.logging.wandb:
            os.environ.setdefault(
                "WANDB_PROJECT", plan.recipe.logging.wandb_project or plan.recipe.id
            )
        revision = {"revision": plan.model.revision} if plan.model.revision else {}
        processor = AutoProcessor.from_pretrained(  # left padding, as TRL loads processors itself
            plan.model_name_or_path, padding_side="left", truncation_side="left", **revision
        )
        check_patch_factor(plan.loaded, plan.model, processor_factor(processor))
        keep_cached_sizes(processor, plan)
        model = AutoModelForImageTextToText.from_pretrained(
            plan.model_name_or_path, dtype="auto", **revision
        )
        if not plan.recipe.trl.use_vllm:
            ids = processor.tokenizer.convert_tokens_to_ids(list(VISION_TOKENS))
            kwargs["generation_kwargs"] = {"suppress_tokens": [i for i in ids if i is not None]}
            _write_config(plan, trainer_name, kwargs)  # the config as trained, token ids included
        log = MetricsLog(plan.output_dir / METRICS_FILE)
        checkpoint = last_checkpoint(plan.output_dir) if plan.resume else None
        if checkpoint is not None:
            log.truncate_after(int(checkpoint.name.split("-")[1]))
        cls = trainer_class(trainer_name)
        if plan.recipe.offline is not None:  # mixed offline/online groups (adapters/trl/offline)
            cls = offline_trainer_class(cls)
        trainer = cls(
            model=model,
            reward_funcs=task_rewards(plan),
            args=config_class(trainer_name)(**kwargs),
            train_dataset=build_train_dataset(plan, self.frame_source),
            processing_class=processor,
            callbacks=[MetricsCallback(log), RichProgressCallback(), *self.callbacks],
        )
        trainer.remove_callback(PrinterCallback)  # the progress bar replaces printed dicts
        if plan.recipe.offline is not None:
            trainer.use_offline(OfflineRun.from_plan(plan))
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        trainer.save_model(str(plan.output_dir / FINAL_MODEL_DIR))
        processor.save_pretrained(str(plan.output_dir / FINAL_MODEL_DIR))


def _write_config(plan: TrainPlan, trainer: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    path = plan.output_dir / CONFIG_FILE
    payload = {"trainer": trainer_class(trainer).__name__, "config": kwargs}
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
    return {**payload, "config_file": str(path)}
