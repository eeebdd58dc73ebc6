"""PNG curves of a run from its ``metrics.jsonl``: rewards per task, format rate, KL, length,
and for a run with an ``offline:`` section the groups that received an offline member, the
online accuracy before mixing, and the offline members' reward and advantage, per task.

matplotlib is imported when plotting (Agg backend, no display needed).

Example:
    >>> import tempfile, pathlib
    >>> from videorl_kit.train.metrics import MetricsLog
    >>> run = pathlib.Path(tempfile.mkdtemp())
    >>> log = MetricsLog(run / "metrics.jsonl")
    >>> for step in (1, 2):
    ...     log.append(step, {"rewards/count/mean": step / 4, "count/format": 0.5, "kl": 0.01})
    >>> sorted(p.name for p in plot_run(run))
    ['format_rate.png', 'kl.png', 'reward_per_task.png']

A run that logs a breakdown (``<task>/by_<column>/<value>/{reward,accuracy,format}``, see
``logging.breakdown`` in the recipe) also gets ``by_<column>.png``: reward, accuracy and
format per value of the column (per problem type of a mixed task, per data source), one line
per task and value:

    >>> by = "mix/by_problem_type"
    >>> log.append(3, {f"{by}/ocr/reward": 0.5, f"{by}/ocr/accuracy": 0.5,
    ...                f"{by}/ocr/format": 1.0, f"{by}/numerical/reward": 0.2})
    >>> sorted(p.name for p in plot_run(run))
    ['by_problem_type.png', 'format_rate.png', 'kl.png', 'reward_per_task.png']
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.core.out_folder import refuse_links
from videorl_kit.train.metrics import (
    METRICS_FILE,
    format_key,
    read_metrics,
    reward_key,
    series,
    task_ids,
)

PLOTS_DIR = "plots"

PLAIN_TEXT = {"text.parse_math": False, "text.usetex": False}
"""Labels are drawn as the text they are: ``$...$`` in a task id or folder name is no maths."""

MetricKey = str | Callable[[str], str]
"""A fixed metric name, or a function from a task id to that task's metric name."""

# file name, title, y label, metric
FIGURES: tuple[tuple[str, str, str, MetricKey], ...] = (
    ("reward_per_task.png", "Mean reward per task", "reward", reward_key),
    ("format_rate.png", "Format rate per task", "share in format", format_key),
    ("kl.png", "KL to the reference model", "KL", "kl"),
    ("response_length.png", "Mean response length", "tokens", "completions/mean_length"),
    # mixed offline/online groups (a recipe's offline: section; see videorl_kit.train.offline)
    ("offline_mixed.png", "Groups that received an offline member", "groups per step",
     lambda task: f"offline/{task}/mixed"),
    ("offline_online_accuracy.png", "Online group accuracy before mixing", "accuracy",
     lambda task: f"offline/{task}/online_accuracy"),
    ("offline_reward.png", "Reward of the offline members", "reward",
     lambda task: f"offline/{task}/reward"),
    ("offline_advantage.png", "Advantage of the offline members", "advantage",
     lambda task: f"offline/{task}/advantage"),
)  # fmt: skip


def _lines(
    records: list[dict[str, Any]], metric: MetricKey
) -> list[tuple[str, list[int], list[float]]]:
    keys = (
        [(metric, metric)]
        if isinstance(metric, str)
        else [(task, metric(task)) for task in task_ids(records)]
    )
    lines = []
    for label, key in keys:
        steps, values = series(records, key)
        if steps:
            lines.append((label, steps, values))
    return lines


BREAKDOWN_KEY = re.compile(
    r"^(?P<task>[^/]+)/by_(?P<column>[^/]+)/(?P<value>[^/]+)/(?P<metric>reward|accuracy|format)$"
)
"""A breakdown metric's name (see ``videorl_kit.rewards.trl_functions``)."""

BREAKDOWN_METRICS = ("reward", "accuracy", "format")


def breakdown_keys(records: list[dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    """Breakdown metric names of ``records``, by column and then by line label (task/value).

    Example:
        >>> breakdown_keys([{"step": 1, "mix/by_data_source/a/reward": 1.0, "kl": 0.0}])
        {'data_source': {'mix/a': ['mix/by_data_source/a/reward']}}
    """
    found: dict[str, dict[str, list[str]]] = {}
    for record in records:
        for key in record:
            match = BREAKDOWN_KEY.match(key)
            if match is None:
                continue
            label = f"{match['task']}/{match['value']}"
            keys = found.setdefault(match["column"], {}).setdefault(label, [])
            if key not in keys:
                keys.append(key)
    return found


def _plot_breakdown(
    plt: Any, run: Path, out: Path, records: list[dict[str, Any]], column: str,
    labels: dict[str, list[str]],
) -> Path:  # fmt: skip
    figure, panels = plt.subplots(1, len(BREAKDOWN_METRICS), figsize=(15, 4), squeeze=False)
    for axes, metric in zip(panels[0], BREAKDOWN_METRICS, strict=True):
        for label in sorted(labels):
            task, value = label.split("/", 1)
            steps, values = series(records, f"{task}/by_{column}/{value}/{metric}")
            if steps:
                axes.plot(steps, values, marker="o" if len(steps) < 30 else None, label=label)
        axes.set(title=f"{metric} by {column} ({run.name})", xlabel="step", ylabel=metric)
        axes.grid(alpha=0.3)
    handles, names = panels[0][0].get_legend_handles_labels()
    if handles:
        figure.legend(handles, names, fontsize="small", loc="lower center", ncol=min(len(names), 6))
        figure.tight_layout(rect=(0, 0.12, 1, 1))
    path = out / f"by_{column}.png"
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def plot_run(run_dir: str | Path) -> list[Path]:
    """Write the run's curves to ``RUN_DIR/plots/*.png``; return the files written.

    Breakdown metrics add one ``by_<column>.png`` per column (see the module docstring).
    A figure whose metrics were never logged (no KL without a reference model) is left out.
    Raises :class:`UserError` when the folder has no ``metrics.jsonl`` or it is empty.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    run = Path(run_dir)
    path = run / METRICS_FILE
    if not path.is_file():
        raise UserError(f"{run}: no {METRICS_FILE} (is it a training run folder?)")
    records = read_metrics(path)
    if not records:
        raise UserError(f"{path}: no logged steps yet")
    out = run / PLOTS_DIR
    if out.is_symlink():  # the charts go inside the run folder, never through a link
        refuse_links(run, f"the run folder {run}")
    refuse_links(out, f"the plots folder {out}")
    out.mkdir(exist_ok=True)
    written = []
    for name, title, ylabel, metric in FIGURES:
        lines = _lines(records, metric)
        if not lines:
            continue
        with matplotlib.rc_context(PLAIN_TEXT):  # task ids and the folder name: never maths
            figure, axes = plt.subplots(figsize=(7, 4))
            for label, steps, values in lines:
                axes.plot(steps, values, marker="o" if len(steps) < 30 else None, label=label)
            axes.set(title=f"{title} ({run.name})", xlabel="step", ylabel=ylabel)
            axes.grid(alpha=0.3)
            if len(lines) > 1:
                axes.legend(fontsize="small")
            figure.tight_layout()
            figure.savefig(out / name, dpi=100)
            plt.close(figure)
        written.append(out / name)
    for column, labels in sorted(breakdown_keys(records).items()):
        written.append(_plot_breakdown(plt, run, out, records, column, labels))
    return written
