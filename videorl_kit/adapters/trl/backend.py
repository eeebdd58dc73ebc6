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
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from videorl_kit.adapters.trl.config import TRAINERS, config_class, config_kwargs, trainer_class
from videorl_kit.adapters.trl.dataset import FrameSource, build_train_dataset, keep_cached_sizes
from videorl_kit.adapters.trl.native_video import FAMILY_MODEL_TYPES, video_mode
from videorl_kit.adapters.trl.offline import (
    OfflineRun,
    check_offline_tokens,
    offline_problems,
    offline_trainer_class,
)
from videorl_kit.adapters.trl.rewards import task_rewards
from videorl_kit.adapters.vision_balance import balance_vision
from videorl_kit.core.errors import UserError
from videorl_kit.core.safe_text import one_line
from videorl_kit.media.mrope import use_qwen_positions
from videorl_kit.store.torch_dataset import processor_factor
from videorl_kit.train.cluster_plan import BackendPlan, Missing, PlanDraft
from videorl_kit.train.completions import COMPLETIONS_FILE, CompletionLog
from videorl_kit.train.metrics import METRICS_FILE, MetricsLog
from videorl_kit.train.plan import TrainPlan, check_patch_factor
from videorl_kit.train.recipe import LoadedRecipe
from videorl_kit.train.script_values import path_arg

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
    """The processes ``accelerate launch`` (or torchrun) started: ``WORLD_SIZE``, else 1.

    A value that is not a positive whole number is a ``UserError`` naming the variable.
    """
    raw = os.environ.get("WORLD_SIZE", "1")
    text = raw.strip()
    if not text.isascii() or not text.isdigit() or int(text) < 1 or len(text) > 6:
        raise UserError(
            f"WORLD_SIZE={one_line(repr(raw))} is not a number of processes (a whole number "
            "from 1); unset it or set it as accelerate launch / torchrun would"
        )
    return int(text)


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
        self._config: tuple[TrainPlan, int, str, dict[str, Any]] | None = None

    def config(self, plan: TrainPlan) -> tuple[str, dict[str, Any]]:
        """TRL's trainer and config for ``plan``, computed once per plan (check, prepare and
        train reuse it); a copy of the keyword arguments, so callers may change it."""
        world = _world_size()
        cached = self._config
        if cached is None or cached[0] is not plan or cached[1] != world:
            trainer, kwargs = config_kwargs(plan, world)
            cached = self._config = (plan, world, trainer, kwargs)
        return cached[2], dict(cached[3])

    def problems(self, loaded: LoadedRecipe) -> list[tuple[str, str]]:
        """What TRL 1.16 cannot train in the recipe, as ``(field path, message)``: offline
        members mixed into a trainer other than ``GRPOTrainer``. (What needs the plan, such as
        the installed packages or ``trl.options`` against TRL's config class, is
        :meth:`check`'s.)

        Example:
            >>> from videorl_kit.train.recipe import load_recipe
            >>> TrlBackend().problems(load_recipe("recipes/tiny-grpo.yaml"))
            []
        """
        return offline_problems(loaded.recipe, loaded.options)

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
        if plan.recipe.trl.use_vllm and planned_video_mode(plan) == "native":
            raise UserError(
                f"{plan.loaded.path}: trl.video native generates with transformers (TRL's vLLM "
                "generation sends images only); set trl.use_vllm: false, or trl.video: "
                "frames_as_images to generate with vLLM"
            )
        self.config(plan)  # batch split and trl.options
        if plan.recipe.offline is not None:
            check_offline_tokens(plan)
        if plan.resume and last_checkpoint(plan.output_dir) is None:
            raise UserError(
                f"--resume: {plan.output_dir} has no checkpoint yet (checkpoints are saved every "
                f"{plan.recipe.trl.save_steps} steps); run it again without --resume"
            )

    def plan(self, draft: PlanDraft) -> BackendPlan:
        """The TRL part of ``train --plan``: the launch command, TRL's config, processes and
        the memory inputs (one full replica per process: plain data parallelism), computed
        without the store or the model's files."""
        processes = _world_size()
        plan = TrainPlan(draft.loaded, draft.model, draft.store, draft.output_dir, False,
                         dict(draft.samples or {}))  # fmt: skip
        trainer, kwargs = config_kwargs(plan, processes)
        video = planned_video_mode(plan)
        draft.use_video_path(video)
        missing = []
        needed = ("trl", "accelerate", "datasets")
        absent = [name for name in needed if importlib.util.find_spec(name) is None]
        if absent:
            missing.append(Missing(f"packages: {', '.join(absent)}",
                                   "pip install 'videorl-kit[train,data]'"))  # fmt: skip
        if draft.recipe.trl.use_vllm and importlib.util.find_spec("vllm") is None:
            missing.append(Missing("package: vllm (trl.use_vllm)", "pip install vllm"))
        # the run planned: the flags the plan was made with travel with the command
        train = ["train", path_arg(draft.loaded.path), "--backend", "trl",
                 "--store", path_arg(draft.store), "--output", path_arg(draft.output_dir),
                 "--max-steps", str(draft.recipe.optim.steps)]  # fmt: skip
        command = shlex.join(["videorl-kit", *train])
        if processes > 1:
            command = shlex.join(["accelerate", "launch", "--num_processes", str(processes), "-m",
                                  "videorl_kit", *train])  # fmt: skip
        completions = draft.recipe.optim.prompts_per_step * draft.recipe.rollout.group_size
        sizing = {
            "processes": processes,
            "processes_from": "WORLD_SIZE" if "WORLD_SIZE" in os.environ else "default (1)",
            "per_device_batch": kwargs["per_device_train_batch_size"],
            "gradient_accumulation_steps": kwargs["gradient_accumulation_steps"],
            "completions_per_step": completions,
            "generation": f"vLLM ({kwargs['vllm_mode']})" if kwargs["use_vllm"] else "transformers",
        }
        notes = ["memory assumes plain data parallelism (each process a full replica); an "
                 "accelerate DeepSpeed/FSDP config shards it"]  # fmt: skip
        return BackendPlan(
            launch={"command": command, "trainer": TRAINERS[trainer][1], "video": video,
                    "config": kwargs},
            sizing=sizing, shards=processes, zero_stage=0,
            micro_batch=draft.recipe.optim.micro_batch_size,
            checkpointing=draft.recipe.trl.gradient_checkpointing, missing=missing, notes=notes,
        )  # fmt: skip

    def prepare(self, plan: TrainPlan) -> dict[str, Any]:
        """Write ``trl_config.json``; return the trainer and its config for ``--dry-run``."""
        trainer, kwargs = self.config(plan)
        return _write_config(plan, trainer, kwargs, planned_video_mode(plan))

    def train(self, plan: TrainPlan) -> None:
        """Train (resuming from the last checkpoint when ``plan.resume``)."""
        from transformers import AutoModelForImageTextToText, AutoProcessor, PrinterCallback

        # the callbacks subclass transformers' TrainerCallback: they load with transformers
        from videorl_kit.adapters.trl.callbacks import MetricsCallback, RichProgressCallback

        trainer_name, kwargs = self.config(plan)
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
        use_qwen_positions(model)  # Qwen2.5-VL: Qwen's and vLLM's M-RoPE rule, as in eval
        video = video_mode(plan.recipe.trl.video, model.config.model_type)
        if video == "native" and getattr(processor, "video_processor", None) is None:
            raise UserError(
                f"{plan.loaded.path}: trl.video native needs a processor with a video "
                f"processor; {plan.model.describe()} has none (set trl.video: frames_as_images)"
            )
        if not plan.recipe.trl.use_vllm:
            ids = processor.tokenizer.convert_tokens_to_ids(list(VISION_TOKENS))
            kwargs["generation_kwargs"] = {"suppress_tokens": [i for i in ids if i is not None]}
        _write_config(plan, trainer_name, kwargs, video)  # as trained, token ids included
        log = MetricsLog(plan.output_dir / METRICS_FILE)
        logging = plan.recipe.logging
        completions = CompletionLog(
            plan.output_dir / COMPLETIONS_FILE,
            logging.completions_every,
            logging.completions_per_step,
        )
        checkpoint = last_checkpoint(plan.output_dir) if plan.resume else None
        if checkpoint is not None:
            log.truncate_after(int(checkpoint.name.split("-")[1]))
            completions.truncate_after(int(checkpoint.name.split("-")[1]))
        cls = trainer_class(trainer_name)
        if plan.recipe.offline is not None:  # mixed offline/online groups (adapters/trl/offline)
            cls = offline_trainer_class(cls)
        trainer = cls(
            model=model,
            reward_funcs=task_rewards(plan, completions),
            args=config_class(trainer_name)(**kwargs),
            train_dataset=build_train_dataset(plan, self.frame_source, video=video),
            processing_class=processor,
            callbacks=[
                MetricsCallback(log),
                RichProgressCallback(label=trainer_name.upper()),
                *self.callbacks,
            ],
        )
        trainer.native_processor = processor
        balance = plan.recipe.trl.balance_vision
        several = trainer.accelerator.num_processes > 1
        trainer.balance_vision = several if balance is None else balance
        trainer.vision_balance = balance_vision(model) if trainer.balance_vision else None
        trainer.remove_callback(PrinterCallback)  # the progress bar replaces printed dicts
        name_base_model(trainer, base_model_name(plan))
        if plan.recipe.offline is not None:
            trainer.use_offline(OfflineRun.from_plan(plan))
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        trainer.save_model(str(plan.output_dir / FINAL_MODEL_DIR))
        processor.save_pretrained(str(plan.output_dir / FINAL_MODEL_DIR))
        trainer.create_model_card(model_name=plan.output_dir.name)  # also when no checkpoint


def base_model_name(plan: TrainPlan) -> str:
    """How the run's model card names the base model: the Hub id of a Hub model, ``tiny:FAMILY``
    for a tiny model, the folder of a local one.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> from videorl_kit.train.plan import ModelSource
        >>> base_model_name(NS(model=ModelSource("hub", "Qwen/Qwen2.5-VL-7B-Instruct", "main")))
        'Qwen/Qwen2.5-VL-7B-Instruct'
        >>> base_model_name(NS(model=ModelSource("tiny", "qwen3-vl")))
        'tiny:qwen3-vl'
    """
    return plan.model.name if plan.model.kind == "hub" else plan.model.describe()


def name_base_model(trainer: Any, name: str) -> None:
    """Make ``trainer``'s model cards name ``name`` as the base model.

    TRL names the base model from the model config's ``_name_or_path`` and leaves it out when
    that is a folder, which the kit's runs always load from (the downloaded snapshot, the
    tiny ``base-model/``). The card is drafted with ``name`` in its place, restored after.
    """
    draft = trainer.create_model_card

    def create_model_card(*args: Any, **kwargs: Any) -> None:
        config = trainer.model.config
        saved = getattr(config, "_name_or_path", "")
        config._name_or_path = name
        try:
            draft(*args, **kwargs)
        finally:
            config._name_or_path = saved

    trainer.create_model_card = create_model_card


def planned_video_mode(plan: TrainPlan) -> str:
    """The video path the run will take, as far as it is known before the model loads: the
    recipe's ``trl.video``, else from a tiny model's family or a local model's config (a Hub
    model's is read when it loads)."""
    model_type = None
    if plan.model.kind == "tiny":
        model_type = FAMILY_MODEL_TYPES.get(plan.model.name)
    elif plan.model.kind == "local":
        try:
            config = json.loads((Path(plan.model.name) / "config.json").read_text("utf-8"))
            model_type = config.get("model_type")
        except (OSError, ValueError):
            model_type = None
    return video_mode(plan.recipe.trl.video, model_type)


def _write_config(
    plan: TrainPlan, trainer: str, kwargs: dict[str, Any], video: str
) -> dict[str, Any]:
    path = plan.output_dir / CONFIG_FILE
    payload = {"trainer": trainer_class(trainer).__name__, "video": video, "config": kwargs}
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
    return {**payload, "config_file": str(path)}
