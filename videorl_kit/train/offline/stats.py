"""``trajectories stats``: what the store holds, per task and source, computed with polars.

polars scans the Lance ``trajectories`` table directly (``pl.scan_pyarrow_dataset``: only the
columns and rows asked for are read) and aggregates per (task, source), with an ``(all)`` row
per task that has several sources:

* ``n`` trajectories, ``n_masked`` (verdict not ``ok``: unverifiable or a verifier error);
* the reward (``overall``) distribution over graded trajectories: mean, min, p10, median, p90,
  max, and ``share_correct`` (accuracy ≥ ``correct_at``, 1.0 by default);
* response length in characters (mean, median, max) and in tokens where token ids are stored;
* ``n_samples`` with at least one trajectory, ``n_samples_correct`` with at least one correct
  one, and ``ready_samples`` of the task in the store (so the coverage of mixing is visible).

Example:
    >>> import tempfile
    >>> from videorl_kit.store.tables import StoreTables
    >>> from videorl_kit.store.trajectories import append_trajectories
    >>> tables = StoreTables.create(tempfile.mkdtemp())
    >>> _ = append_trajectories(tables, [
    ...     {"trajectory_id": f"t{i}", "sample_id": f"s{i % 2}", "task_id": "count",
    ...      "response": "<answer>3</answer>", "reward_accuracy": float(i % 2),
    ...      "reward_overall": 0.1 + 0.9 * (i % 2), "reward_status": "ok", "source": "curated"}
    ...     for i in range(4)])
    >>> [row] = trajectory_stats(tables.root)
    >>> row["task_id"], row["n"], row["share_correct"], row["n_samples_correct"]
    ('count', 4, 0.5, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.store.samples import STATUS_READY
from videorl_kit.store.schema import SAMPLES_TABLE, TRAJECTORIES_TABLE
from videorl_kit.store.tables import StoreTables

ALL_SOURCES = "(all)"
STAT_COLUMNS = (
    "task_id",
    "source",
    "n",
    "n_masked",
    "reward_mean",
    "reward_min",
    "reward_p10",
    "reward_median",
    "reward_p90",
    "reward_max",
    "share_correct",
    "chars_mean",
    "chars_median",
    "chars_max",
    "tokens_mean",
    "n_samples",
    "n_samples_correct",
    "ready_samples",
)
"""The fields of one stats row, in table order."""


_REGEX_META = set("\\.^$|?*+()[]{}")


def _glob_regex(pattern: str) -> str:
    return "".join(
        ".*" if c == "*" else "." if c == "?" else f"\\{c}" if c in _REGEX_META else c
        for c in pattern
    )


def source_pattern(patterns: Sequence[str]) -> str:
    """One anchored regular expression (Python's and polars' dialect) matching any of the glob
    ``patterns`` (``*`` any text, ``?`` one character).

    Example:
        >>> import re
        >>> bool(re.fullmatch(source_pattern(["curated", "eval:*"]), "eval:run-1"))
        True
        >>> bool(re.fullmatch(source_pattern(["a.b"]), "axb"))
        False
    """
    return "^(?:" + "|".join(_glob_regex(p) for p in patterns) + ")$"


def scan_trajectories(
    store: str | Path, *, tasks: Sequence[str] = (), sources: Sequence[str] = ()
) -> Any:
    """A polars ``LazyFrame`` over the store's trajectories (filtered by task ids and source
    globs). Raises :class:`UserError` for a folder that is not a store."""
    import polars as pl

    try:
        dataset = StoreTables.open(store).table(TRAJECTORIES_TABLE)
    except Exception as exc:
        raise UserError(str(exc)) from None
    frame = pl.scan_pyarrow_dataset(dataset)
    if tasks:
        frame = frame.filter(pl.col("task_id").is_in(list(tasks)))
    if sources:
        frame = frame.filter(pl.col("source").str.contains(source_pattern(sources)))
    return frame


def _ready_samples(store: str | Path) -> dict[str, int]:
    import polars as pl

    dataset = StoreTables.open(store).table(SAMPLES_TABLE)
    counts = (
        pl.scan_pyarrow_dataset(dataset)
        .filter(pl.col("status") == STATUS_READY)
        .group_by("task_id")
        .len()
        .collect()
    )
    return dict(zip(counts["task_id"].to_list(), counts["len"].to_list(), strict=True))


def _aggregate(frame: Any, keys: list[str], correct_at: float) -> Any:
    import polars as pl

    graded = pl.col("reward_status") == "ok"
    reward = pl.col("reward_overall").filter(graded)
    correct = (pl.col("reward_accuracy") >= correct_at - 1e-9) & graded
    chars = pl.col("response").str.len_chars()
    return frame.group_by(keys).agg(
        pl.len().alias("n"),
        (~graded).fill_null(True).sum().alias("n_masked"),
        reward.mean().alias("reward_mean"),
        reward.min().alias("reward_min"),
        reward.quantile(0.1, "nearest").alias("reward_p10"),
        reward.median().alias("reward_median"),
        reward.quantile(0.9, "nearest").alias("reward_p90"),
        reward.max().alias("reward_max"),
        (correct.filter(graded).cast(pl.Float64).mean()).alias("share_correct"),
        chars.mean().alias("chars_mean"),
        chars.median().alias("chars_median"),
        chars.max().alias("chars_max"),
        pl.col("token_ids").list.len().mean().alias("tokens_mean"),
        pl.col("sample_id").n_unique().alias("n_samples"),
        pl.col("sample_id").filter(correct.fill_null(False)).n_unique().alias("n_samples_correct"),
    )


def trajectory_stats(
    store: str | Path,
    *,
    tasks: Sequence[str] = (),
    sources: Sequence[str] = (),
    correct_at: float = 1.0,
) -> list[dict[str, Any]]:
    """One dict per (task, source) with the fields of :data:`STAT_COLUMNS` (see the module doc),
    sorted by task then source, each task's ``(all)`` row first when it has several sources."""
    import polars as pl

    frame = (
        scan_trajectories(store, tasks=tasks, sources=sources)
        .select(
            "task_id",
            "source",
            "sample_id",
            "response",
            "token_ids",
            "reward_overall",
            "reward_accuracy",
            "reward_status",
        )
        .collect()
    )
    if frame.is_empty():
        return []
    per_source = _aggregate(frame.lazy(), ["task_id", "source"], correct_at).collect()
    per_task = (
        _aggregate(frame.lazy(), ["task_id"], correct_at)
        .with_columns(pl.lit(ALL_SOURCES).alias("source"))
        .collect()
    )
    several = per_source.group_by("task_id").len().filter(pl.col("len") > 1)["task_id"].to_list()
    rows = per_source.to_dicts() + [r for r in per_task.to_dicts() if r["task_id"] in several]
    ready = _ready_samples(store)
    for row in rows:
        row["ready_samples"] = ready.get(row["task_id"], 0)
    rows.sort(key=lambda r: (r["task_id"], r["source"] != ALL_SOURCES, r["source"]))
    return [{name: row.get(name) for name in STAT_COLUMNS} for row in rows]


def stats_table(rows: list[dict[str, Any]]) -> Any:
    """A Rich table of :func:`trajectory_stats` rows."""
    from rich.table import Table

    table = Table(title="Trajectories per task and source")
    headers = (
        "task",
        "source",
        "n",
        "masked",
        "reward mean [p10, p50, p90]",
        "correct",
        "chars mean/max",
        "tokens",
        "samples (correct / with any / ready)",
    )
    for header in headers:
        table.add_column(header, justify="left" if header in ("task", "source") else "right")

    def num(value: Any, digits: int = 2) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    for r in rows:
        spread = f"{num(r['reward_mean'])} [{num(r['reward_p10'])}, {num(r['reward_median'])}, " \
                 f"{num(r['reward_p90'])}]"  # fmt: skip
        table.add_row(
            r["task_id"],
            r["source"],
            str(r["n"]),
            str(r["n_masked"]),
            spread,
            "-" if r["share_correct"] is None else f"{r['share_correct']:.0%}",
            f"{num(r['chars_mean'], 0)}/{r['chars_max']}",
            num(r["tokens_mean"], 0),
            f"{r['n_samples_correct']} / {r['n_samples']} / {r['ready_samples']}",
        )
    return table


def plot_rewards(
    store: str | Path, path: str | Path, *, tasks: Sequence[str] = (), sources: Sequence[str] = ()
) -> Path:
    """A PNG histogram of the graded rewards, one panel per task, one line per source."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    import polars as pl

    frame = (
        scan_trajectories(store, tasks=tasks, sources=sources)
        .filter(pl.col("reward_status") == "ok")
        .select("task_id", "source", "reward_overall")
        .collect()
    )
    if frame.is_empty():
        raise UserError(f"{store}: no graded trajectories to plot")
    task_ids = sorted(frame["task_id"].unique().to_list())
    figure, axes = plt.subplots(len(task_ids), 1, figsize=(7, 2.6 * len(task_ids)), squeeze=False)
    bins = [i / 20 for i in range(21)]
    for axis, task in zip(axes[:, 0], task_ids, strict=True):
        part = frame.filter(pl.col("task_id") == task)
        for source in sorted(part["source"].unique().to_list()):
            values = part.filter(pl.col("source") == source)["reward_overall"].to_list()
            axis.hist(
                values,
                bins=bins,
                histtype="step",
                linewidth=1.5,
                label=f"{source} (n={len(values)})",
            )
        axis.set(title=task, xlabel="reward (overall)", ylabel="trajectories", xlim=(0, 1))
        axis.legend(fontsize="small")
        axis.grid(alpha=0.3)
    figure.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=100)
    plt.close(figure)
    return out
