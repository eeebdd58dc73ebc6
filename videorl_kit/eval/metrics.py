"""Aggregate sample verdicts into a task's metrics, with polars.

Only samples whose verdict status is ``ok`` enter a mean; ``unverifiable`` and ``error``
verdicts are counted apart (``n_unverifiable``, ``n_error``), never scored as 0. Each
sample's ``accuracy`` is its verifier score, so the metric it feeds depends on its problem
type:

``accuracy``   mean over choice-like samples (multiple choice, numerical, boolean, OCR,
               open-ended, math, code, critic)
``mra``        mean relative accuracy of ``regression`` samples (reported apart, as
               VSI-Bench and Video-R1 do)
``miou``       mean IoU of temporal/spatial grounding and tracking samples, plus ``r@k``:
               the share with IoU >= k (IoU > k with ``recall_strict``)
``st_score``   mean of 0.5·tIoU + 0.5·box mIoU of spatio-temporal grounding samples, with
               its parts ``t_iou`` and ``box_miou``
``overall``, ``format``   mean reward and format score of every scored sample
``macro``      hierarchical macro average of the per-sample score over ``macro_over``
               (with ``macro_merge``, the merged groups first averaged into one, and the
               unmerged macro reported apart as ``macro_unmerged``)

Verdicts other than ``ok`` never enter a mean: ``unverifiable`` (gold unreadable),
``error`` (verifier failure) and ``unscored`` (a question the benchmark grades with a judge
model, run without one, or whose judgement had no verdict) are counted apart.

Standard errors are clustered by video (questions on one video are correlated): for a mean
over n samples in G clusters, ``se = sqrt(G / (G - 1) * sum_g d_g^2) / n`` with
``d_g = sum_{i in g} (x_i - mean)``; with one sample per cluster this is ``std / sqrt(n)``.
The macro average's error treats groups as independent: ``se = sqrt(sum se_g^2) / G`` at
each level.

Example:
    >>> import polars as pl
    >>> frame = pl.DataFrame({"x": [1.0, 0.0, 1.0, 1.0], "cluster": ["a", "a", "b", "c"]})
    >>> mean, se, n = mean_and_stderr(frame, "x")
    >>> mean, round(se, 4), n
    (0.75, 0.1875, 4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from videorl_kit.core.problem_types import ProblemType
from videorl_kit.eval.records import SampleRecord
from videorl_kit.spec.eval_section import MetricsSpec

REGRESSION = frozenset({ProblemType.REGRESSION.value})
IOU_TYPES = frozenset(
    {
        ProblemType.TEMPORAL_GROUNDING.value,
        ProblemType.SPATIAL_GROUNDING.value,
        ProblemType.TRACKING.value,
    }
)
SPATIOTEMPORAL = frozenset({ProblemType.SPATIOTEMPORAL_GROUNDING.value})
NOT_CHOICE_LIKE = REGRESSION | IOU_TYPES | SPATIOTEMPORAL


@dataclass(frozen=True)
class MetricValue:
    """A mean, its clustered standard error (None below two clusters) and its sample count."""

    value: float | None
    stderr: float | None
    n: int


@dataclass(frozen=True)
class CategoryRow:
    """Mean per-sample score of the samples with one value of a category column."""

    value: str
    n: int
    score: float | None
    stderr: float | None


@dataclass
class TaskMetrics:
    """Everything aggregated for one task."""

    primary: str
    metrics: dict[str, MetricValue]
    categories: dict[str, list[CategoryRow]]
    n_scored: int
    n_unverifiable: int
    n_error: int
    n_unscored: int = 0
    notes: list[str] = field(default_factory=list)


def mean_and_stderr(
    frame: pl.DataFrame, column: str, cluster: str = "cluster"
) -> tuple[float | None, float | None, int]:
    """Mean of ``column``, its standard error clustered by ``cluster``, and the row count.

    Example:
        >>> mean_and_stderr(pl.DataFrame({"x": [0.5], "cluster": ["a"]}), "x")
        (0.5, None, 1)
    """
    n = frame.height
    if n == 0:
        return None, None, 0
    mean = float(frame.get_column(column).mean())  # type: ignore[arg-type]
    if 1.0 < mean <= 1.0 + 1e-9:  # rounding of a sum of scores in [0, 1]: still at most 1
        mean = 1.0
    sums = frame.group_by(cluster).agg((pl.col(column) - mean).sum().alias("dev"))
    groups = sums.height
    if groups < 2:
        return mean, None, n
    squares = float((sums.get_column("dev") ** 2).sum())
    return mean, math.sqrt(groups / (groups - 1) * squares) / n, n


def records_frame(records: Sequence[SampleRecord], categories: Sequence[str]) -> pl.DataFrame:
    """One row per record: type, scores, status, cluster, category values and ST parts.

    Example:
        >>> records_frame([], ["duration"]).columns[:4]
        ['sample_id', 'problem_type', 'accuracy', 'overall']
    """
    columns: dict[str, list] = {
        "sample_id": [r.sample_id for r in records],
        "problem_type": [r.problem_type for r in records],
        "accuracy": [float(r.accuracy) for r in records],
        "overall": [float(r.overall) for r in records],
        "format": [float(r.format) for r in records],
        "status": [r.status for r in records],
        "cluster": [r.cluster for r in records],
        "t_iou": [_float_or_none(r.details.get("t_iou")) for r in records],
        "box_miou": [_float_or_none(r.details.get("mean_box_iou")) for r in records],
    }
    for name in categories:
        columns[f"cat:{name}"] = [r.categories.get(name) for r in records]
    schema = {
        "sample_id": pl.String, "problem_type": pl.String, "accuracy": pl.Float64,
        "overall": pl.Float64, "format": pl.Float64, "status": pl.String, "cluster": pl.String,
        "t_iou": pl.Float64, "box_miou": pl.Float64,
        **{f"cat:{name}": pl.String for name in categories},
    }  # fmt: skip
    return pl.DataFrame(columns, schema=schema)


def _float_or_none(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _metric(frame: pl.DataFrame, column: str) -> MetricValue:
    return MetricValue(*mean_and_stderr(frame, column))


def _macro(frame: pl.DataFrame, levels: Sequence[str]) -> MetricValue:
    """Mean over the first level's groups of the (recursive) macro of the rest."""
    if frame.height == 0:
        return MetricValue(None, None, 0)
    if not levels:
        return _metric(frame, "accuracy")
    column = f"cat:{levels[0]}"
    parts = [_macro(group, levels[1:]) for _, group in frame.group_by(column, maintain_order=True)]
    values = [p.value for p in parts if p.value is not None]
    errors = [p.stderr for p in parts]
    value = sum(values) / len(values) if values else None
    stderr = (
        math.sqrt(sum(e * e for e in errors)) / len(errors)  # type: ignore[operator]
        if errors and all(e is not None for e in errors)
        else None
    )
    return MetricValue(value, stderr, frame.height)


def _category_table(frame: pl.DataFrame, column: str) -> list[CategoryRow]:
    rows = []
    for (value,), group in frame.group_by(column, maintain_order=True):
        mean, stderr, n = mean_and_stderr(group, "accuracy")
        rows.append(CategoryRow("(missing)" if value is None else str(value), n, mean, stderr))
    return sorted(rows, key=lambda row: row.value)


def default_primary(metrics: dict[str, MetricValue], spec: MetricsSpec) -> str:
    """The headline metric: the declared one, else macro, accuracy, miou, st_score or mra.

    Example:
        >>> default_primary({"accuracy": MetricValue(0.5, None, 2)}, MetricsSpec())
        'accuracy'
    """
    if spec.primary is not None:
        return spec.primary
    if spec.macro_over:
        return "macro"
    for name in ("accuracy", "miou", "st_score", "mra"):
        if metrics.get(name) is not None and metrics[name].n > 0:
            return name
    return "overall"


def task_metrics(records: Sequence[SampleRecord], spec: MetricsSpec) -> TaskMetrics:
    """Aggregate one task's records (see the module docstring for every metric).

    Example:
        >>> task_metrics([], MetricsSpec()).metrics["overall"]
        MetricValue(value=None, stderr=None, n=0)
    """
    names = list(dict.fromkeys([*spec.categories, *spec.macro_over]))
    frame = records_frame(records, names)
    scored = frame.filter(pl.col("status") == "ok")
    types = pl.col("problem_type")
    metrics: dict[str, MetricValue] = {
        "overall": _metric(scored, "overall"),
        "format": _metric(scored, "format"),
    }
    choice = scored.filter(~types.is_in(list(NOT_CHOICE_LIKE)))
    if choice.height:
        metrics["accuracy"] = _metric(choice, "accuracy")
    regression = scored.filter(types.is_in(list(REGRESSION)))
    if regression.height:
        metrics["mra"] = _metric(regression, "accuracy")
    iou = scored.filter(types.is_in(list(IOU_TYPES)))
    if iou.height:
        metrics["miou"] = _metric(iou, "accuracy")
        for threshold in spec.recall_thresholds:
            hit = (
                pl.col("accuracy") > threshold
                if spec.recall_strict
                else (pl.col("accuracy") >= threshold)
            )
            hits = iou.with_columns(hit.cast(pl.Float64).alias("hit"))
            metrics[f"r@{threshold:g}"] = _metric(hits, "hit")
    spatiotemporal = scored.filter(types.is_in(list(SPATIOTEMPORAL)))
    if spatiotemporal.height:
        metrics["st_score"] = _metric(spatiotemporal, "accuracy")
        for part in ("t_iou", "box_miou"):
            metrics[part] = _metric(spatiotemporal.drop_nulls(part), part)
    if spec.macro_over:
        if spec.macro_merge:
            first = f"cat:{spec.macro_over[0]}"
            merged = scored.with_columns(
                pl.col(first).replace(spec.macro_merge).alias("cat:macro merged")
            )
            metrics["macro"] = _macro(merged, ["macro merged", *spec.macro_over])
            metrics["macro_unmerged"] = _macro(scored, spec.macro_over)
        else:
            metrics["macro"] = _macro(scored, spec.macro_over)
    categories = {name: _category_table(scored, f"cat:{name}") for name in spec.categories}
    if scored.get_column("problem_type").n_unique() > 1 and "problem_type" not in categories:
        categories["problem_type"] = _category_table(scored, "problem_type")
    primary = default_primary(metrics, spec)
    notes = []
    if primary not in metrics:
        notes.append(f"primary metric {primary!r} has no samples in this run")
        metrics[primary] = MetricValue(None, None, 0)
    status = frame.get_column("status")
    return TaskMetrics(
        primary=primary,
        metrics=metrics,
        categories=categories,
        n_scored=scored.height,
        n_unverifiable=int((status == "unverifiable").sum()),
        n_error=int((status == "error").sum()),
        n_unscored=int((status == "unscored").sum()),
        notes=notes,
    )
