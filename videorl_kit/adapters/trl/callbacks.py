"""TRL trainer callbacks: ``metrics.jsonl``, per-part gradient norms and a Rich progress bar.

Example:
    >>> import tempfile, pathlib
    >>> log = MetricsLog(pathlib.Path(tempfile.mkdtemp()) / "metrics.jsonl")
    >>> callback = MetricsCallback(log)
    >>> from transformers import TrainerState
    >>> from videorl_kit.train.metrics import read_metrics
    >>> callback.on_log(None, TrainerState(global_step=3), None, logs={"loss": 0.25})
    >>> read_metrics(log.path)
    [{'step': 3, 'loss': 0.25}]
"""

from __future__ import annotations

import math
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from transformers import TrainerCallback

from videorl_kit.core.terminal import TerminalConsole
from videorl_kit.train.metrics import MetricsLog

VISION_MARKER = ".visual."
"""Parameter names of Qwen-VL vision towers contain this; every other parameter is language."""


def grad_norms(model: Any) -> dict[str, float]:
    """L2 norms of the gradients of the vision tower and of the language model.

    Example:
        >>> import torch
        >>> layer = torch.nn.Linear(2, 1)
        >>> layer(torch.ones(1, 2)).sum().backward()
        >>> round(grad_norms(layer)["grad_norm/language"], 3)
        1.732
    """
    squares = {"grad_norm/vision": 0.0, "grad_norm/language": 0.0}
    for name, parameter in model.named_parameters():
        if parameter.grad is None:
            continue
        part = "grad_norm/vision" if VISION_MARKER in f".{name}" else "grad_norm/language"
        squares[part] += float(parameter.grad.detach().float().pow(2).sum())
    return {part: math.sqrt(value) for part, value in squares.items()}


class MetricsCallback(TrainerCallback):
    """Appends every step's TRL log to ``metrics.jsonl``, with vision / language gradient norms.

    The norms are read just before each optimiser step (after gradient clipping) and
    reported with the next log.
    """

    def __init__(self, log: MetricsLog):
        self.log = log
        self._norms: dict[str, float] = {}

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        model = kwargs.get("model")
        if model is not None:
            self._norms = grad_norms(model)

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict | None = None, **_: Any
    ) -> None:
        if not state.is_world_process_zero or not logs or "train_runtime" in logs:
            return  # the end-of-training summary is not a step
        self.log.append(state.global_step, {**logs, **self._norms})


class RichProgressCallback(TrainerCallback):
    """A Rich progress bar: the trainer's name (``GRPO``, ``RLOO``), step, mean reward, KL and
    time left."""

    def __init__(self, console: TerminalConsole | None = None, label: str = "GRPO"):
        self.console = console or TerminalConsole(stderr=True, markup=False)
        self.label = label
        self.progress: Progress | None = None
        self.task: Any = None
        self.latest: dict[str, str] = {"reward": "-", "kl": "-"}

    def on_train_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if not state.is_world_process_zero:
            return
        self.progress = Progress(
            TextColumn(f"[bold]{self.label}[/bold] step {{task.completed}}/{{task.total}}"),
            BarColumn(),
            TextColumn("reward {task.fields[reward]}  kl {task.fields[kl]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.progress.start()
        self.task = self.progress.add_task(
            "train", total=state.max_steps, completed=state.global_step, **self.latest
        )

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict | None = None, **_: Any
    ) -> None:
        for key in ("reward", "kl"):
            value = (logs or {}).get(key)
            if isinstance(value, int | float) and math.isfinite(value):
                self.latest[key] = f"{value:.3f}"
        if self.progress is not None:
            self.progress.update(self.task, completed=state.global_step, **self.latest)

    def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=state.global_step)

    def on_train_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=state.global_step)
            self.progress.stop()
            self.progress = None
