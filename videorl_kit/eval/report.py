"""``report.md`` and PNG charts from one or more finished runs (``results.json`` folders).

The report shows, per benchmark, each run's headline metric as ``value ± standard error``
(percent, standard errors clustered by video), then every metric and every category table.
With two or more runs, each later run is compared to the first: the delta and whether it
exceeds its standard error, ``|Δ| > sqrt(se_a² + se_b²)`` (treating the runs as independent,
which is conservative when both scored the same samples), in the table and in ``deltas.png``
(a delta exceeds its standard error where its ± error bar misses 0). Runs that differ in spec
content, budget, sampling or data are flagged, since their numbers are not directly comparable.
Runs of different protocols (``reasoning`` vs ``official``) are not compared at all unless
``allow_mixed`` is given (``report --allow-mixed``); then every such delta is flagged.
A benchmark a run lacks is marked ``n/a`` in the charts, never drawn as a 0.

Every value read from a results file or a folder name (model names, labels, task ids,
benchmark, group, metric and category names, warnings) passes through one function,
:func:`~videorl_kit.core.safe_text.markdown_text` (:func:`md`), before it reaches
``report.md``: a value is shown as text, never read as Markdown or HTML (no tag, heading,
table row, link or image of a value survives), and the report's only images are its own
PNGs.

Example:
    >>> fmt_score(0.6234, 0.0121)
    '62.3 ± 1.2'
    >>> fmt_score(None, None)
    '–'
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path

from videorl_kit.core.errors import UserError
from videorl_kit.core.out_folder import refuse_links
from videorl_kit.core.safe_text import markdown_code, markdown_text
from videorl_kit.eval.charts import Bar, bar_chart
from videorl_kit.eval.results import EvalResults, Metric, TaskResult, load_results

#: Benchmark groups in the order EasyVideoR1's report lists them; other groups follow.
GROUP_ORDER = ("General", "Long video", "Reasoning", "STEM", "Spatial", "Grounding", "Streaming")


def md(value: object) -> str:
    """A value of a results file as Markdown text (see the module doc); ``code=``-style
    values use :func:`~videorl_kit.core.safe_text.markdown_code`.

    Example:
        >>> md("Qwen2.5-VL <b>7B</b>")
        'Qwen2.5-VL &lt;b&gt;7B&lt;/b&gt;'
    """
    return markdown_text(value)


def fmt_score(value: float | None, stderr: float | None) -> str:
    """A score in percent with its standard error (``–`` when missing)."""
    if value is None:
        return "–"
    text = f"{100 * value:.1f}"
    return text if stderr is None else f"{text} ± {100 * stderr:.1f}"


def delta(a: Metric | None, b: Metric | None) -> tuple[float | None, float | None]:
    """``b - a`` and its standard error under independence (None when either is missing).

    Example:
        >>> d, se = delta(Metric(value=0.5, stderr=0.03, n=9), Metric(value=0.6, stderr=0.04, n=9))
        >>> round(d, 3), round(se, 3)
        (0.1, 0.05)
    """
    if a is None or b is None or a.value is None or b.value is None:
        return None, None
    se = None
    if a.stderr is not None and b.stderr is not None:
        se = math.sqrt(a.stderr**2 + b.stderr**2)
    return b.value - a.value, se


def significance(d: float | None, se: float | None) -> str:
    """``yes``/``no``: whether the delta exceeds its standard error (``n/a`` without one).

    Example:
        >>> significance(0.1, 0.05), significance(0.01, 0.05), significance(0.1, None)
        ('yes', 'no', 'n/a')
    """
    if d is None or se is None:
        return "n/a"
    return "yes" if abs(d) > se else "no"


@dataclass(frozen=True)
class Run:
    """One loaded run and the label it gets in the report."""

    label: str
    folder: Path
    results: EvalResults


def load_runs(folders: list[str | Path]) -> list[Run]:
    """Load each folder's ``results.json``; labels are folder names, made unique."""
    if not folders:
        raise UserError("report needs at least one run folder")
    runs: list[Run] = []
    seen: dict[str, int] = {}
    for folder in folders:
        path = Path(folder)
        label = path.resolve().name
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}#{seen[label]}"
        runs.append(Run(label, path, load_results(path)))
    return runs


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table of cells that are Markdown already (values went through :func:`md`)."""
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _slug(text: str) -> str:
    """A file-name part for ``text``: itself when short and plain, else a cut slug with a
    hash of the text (so two names never share a chart, and no name is too long).

    Example:
        >>> _slug("video-mme"), _slug("a b"), len(_slug("x" * 500))
        ('video-mme', 'a_b-c8687a08', 49)
    """
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", text)
    if slug == text and len(text) <= 48:
        return text
    return f"{slug[:40]}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def _tasks(runs: list[Run]) -> dict[str, TaskResult]:
    """Each task id of any run (its first result), by group (:data:`GROUP_ORDER`), in
    first-seen order within a group."""
    first: dict[str, TaskResult] = {}
    for run in runs:
        for task_id, task in run.results.tasks.items():
            first.setdefault(task_id, task)
    seen = list(dict.fromkeys(t.group or "" for t in first.values()))
    groups = [g for g in GROUP_ORDER if g in seen] + [g for g in seen if g not in GROUP_ORDER]
    return {i: t for g in groups for i, t in first.items() if (t.group or "") == g}


def _comparability(runs: list[Run], task_id: str) -> list[str]:
    present = [r for r in runs if task_id in r.results.tasks]
    warnings = []
    for field in ("spec_sha256", "budget", "generation", "variant"):
        values = {repr(getattr(r.results.tasks[task_id], field)) for r in present}
        if len(values) > 1:
            warnings.append(f"{md(task_id)}: runs differ in {field}")
    data = {r.results.tasks[task_id].data.sha256 for r in present}
    if len(data) > 1:
        warnings.append(f"{md(task_id)}: runs read different annotation files")
    return warnings


def mixed_protocols(runs: list[Run]) -> list[str]:
    """``task: protocol (run) vs protocol (run)`` for each task a later run evaluates under
    another protocol than the first run that has it (empty: every delta is like for like)."""
    mixed = []
    first: dict[str, tuple[str, str]] = {}
    for run in runs:
        for task_id, task in run.results.tasks.items():
            protocol, label = first.setdefault(task_id, (task.protocol, run.label))
            if task.protocol != protocol:
                mixed.append(f"{task_id}: {protocol} ({label}) vs {task.protocol} ({run.label})")
    return mixed


def _run_rows(runs: list[Run]) -> list[list[str]]:
    rows = []
    for run in runs:
        info, model = run.results.run, run.results.model
        rows.append(
            [
                md(run.label),
                md(info.protocol),
                md(f"{model.backend}: {model.name or model.path or ''}"),
                md(model.fingerprint[:12]),
                str(info.seed),
                md(info.variant or "spec"),
                "fixture" if info.fixture else (str(info.limit) if info.limit else "all"),
                md(info.finished_at[:19]),
                md(f"{info.kit_version} ({str(info.git.get('hash', ''))[:10] or 'no git'})"),
            ]
        )
    return rows


def _headline(run: Run, task: TaskResult) -> Metric | None:
    """The run's value of ``task``'s headline metric (as the first run with the task names
    it, so that every run is compared on the same metric); None when the run lacks either."""
    mine = run.results.tasks.get(task.task_id)
    return mine.metrics.get(task.primary_metric) if mine else None


def _headline_rows(runs: list[Run], tasks: dict[str, TaskResult]) -> list[list[str]]:
    rows = []
    for first in tasks.values():
        row = [md(first.group or ""), md(first.benchmark), md(first.primary_metric)]
        base_metric = _headline(runs[0], first)
        for index, run in enumerate(runs):
            metric = _headline(run, first)
            row.append(fmt_score(metric.value, metric.stderr) if metric else "–")
            if index > 0:
                d, se = delta(base_metric, metric)
                row.append("–" if d is None else f"{100 * d:+.1f}")
                row.append(significance(d, se))
        rows.append(row)
    return rows


def render_report(folders: list[str | Path], out: str | Path, *, allow_mixed: bool = False) -> Path:
    """Write ``out/report.md`` and its PNG charts; return the report's path.

    Runs that evaluate a task under different protocols are refused (a :class:`UserError`
    naming each) unless ``allow_mixed``.
    """
    runs = load_runs(folders)
    mixed = mixed_protocols(runs) if len(runs) > 1 else []
    if mixed and not allow_mixed:
        raise UserError(
            "the runs evaluate benchmarks under different protocols, so their deltas compare "
            f"different prompts and budgets: {'; '.join(mixed)}; report them apart, or pass "
            "--allow-mixed to compare them anyway"
        )
    out_dir = Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"--out {out_dir} is a file; give a folder for the report")
    refuse_links(out_dir, f"--out {out_dir}")
    out_dir.mkdir(parents=True, exist_ok=True)
    tasks = _tasks(runs)
    lines = ["# Evaluation report", "", "## Runs", ""]
    lines += _table(
        ["run", "protocol", "model", "fingerprint", "seed", "variant", "rows", "finished", "kit"],
        _run_rows(runs),
    )
    header = ["group", "benchmark", "metric"]
    for index, run in enumerate(runs):
        header.append(md(run.label))
        if index > 0:
            header += [f"Δ vs {md(runs[0].label)}", "Δ exceeds se"]
    lines += ["", "## Scores", "", "Percent; ± one standard error clustered by video.", ""]
    lines += _table(header, _headline_rows(runs, tasks))
    benchmarks = [task.benchmark for task in tasks.values()]
    bar_chart(
        out_dir / "scores.png",
        "Headline score per benchmark",
        benchmarks,
        {run.label: [_percent(_headline(run, t)) for t in tasks.values()] for run in runs},
    )
    lines += ["", "![scores](scores.png)", ""]
    if len(runs) > 1:
        bar_chart(
            out_dir / "deltas.png",
            f"Δ vs {runs[0].label} (± its standard error: it exceeds it where the bar misses 0)",
            benchmarks,
            {
                run.label: [
                    _percent(delta(_headline(runs[0], t), _headline(run, t)))
                    for t in tasks.values()
                ]
                for run in runs[1:]
            },
            ylabel="Δ score (points)",
        )
        lines += ["![deltas](deltas.png)", ""]
    warnings = [w for t in tasks for w in _comparability(runs, t)]
    warnings += [f"deltas across protocols (--allow-mixed): {md(m)}" for m in mixed]
    for task_id in tasks:
        lines += _task_section(runs, task_id, out_dir)
    for run in runs:
        for task in run.results.tasks.values():
            if task.n_skipped or task.n_unverifiable or task.n_error or task.n_unscored:
                warnings.append(
                    f"{md(run.label)}/{md(task.task_id)}: {task.n_skipped} rows not scored, "
                    f"{task.n_unverifiable} unverifiable, {task.n_error} verifier errors"
                    + (
                        f", {task.n_unscored} judge-graded without a judgement"
                        if task.n_unscored
                        else ""
                    )
                )
            not_reused = (task.judge or {}).get("n_stored_not_reused")
            if isinstance(not_reused, int) and not isinstance(not_reused, bool) and not_reused:
                warnings.append(
                    f"{md(run.label)}/{md(task.task_id)}: {not_reused} judgements in the "
                    "replayed predictions not reused (not checkable against this run's judge; "
                    "see details.stored_judgement in the samples file)"
                )
            if task.data.source_verified is False:
                warnings.append(
                    f"{md(run.label)}/{md(task.task_id)}: the spec's annotation source is marked "
                    "unverified (see eval.source.note)"
                )
    if warnings:
        lines += ["## Warnings", "", *(f"- {w}" for w in warnings), ""]
    path = out_dir / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _percent(value: Metric | tuple[float | None, float | None] | None) -> Bar:
    """A chart bar in percent: a metric's value and error, or a ``(delta, se)`` pair."""
    if value is None:
        return None, None
    mean, stderr = (value.value, value.stderr) if isinstance(value, Metric) else value
    return (
        None if mean is None else 100 * mean,
        None if mean is None or stderr is None else 100 * stderr,
    )


def _task_section(runs: list[Run], task_id: str, out_dir: Path) -> list[str]:
    present = [r for r in runs if task_id in r.results.tasks]
    first = present[0].results.tasks[task_id]
    lines = [f"## {md(first.benchmark)} ({markdown_code(task_id)})", ""]
    counts = ", ".join(
        f"{md(r.label)}: {r.results.tasks[task_id].n_scored} scored of "
        f"{r.results.tasks[task_id].n_rows} rows"
        for r in present
    )
    lines += [counts, ""]
    names = list(dict.fromkeys(n for r in present for n in r.results.tasks[task_id].metrics))
    rows = []
    for name in names:
        row = [md(name)]
        for run in present:
            metric = run.results.tasks[task_id].metrics.get(name)
            row.append(
                fmt_score(metric.value, metric.stderr) + f" (n={metric.n})" if metric else "–"
            )
        rows.append(row)
    lines += [*_table(["metric", *(md(r.label) for r in present)], rows), ""]
    columns = list(dict.fromkeys(c for r in present for c in r.results.tasks[task_id].categories))
    for column in columns:
        values = list(
            dict.fromkeys(
                row.value
                for r in present
                for row in r.results.tasks[task_id].categories.get(column, [])
            )
        )
        table = []
        series: dict[str, list[Bar]] = {}
        for value in values:
            cells = [md(value)]
            for run in present:
                match = next(
                    (
                        c
                        for c in run.results.tasks[task_id].categories.get(column, [])
                        if c.value == value
                    ),
                    None,
                )
                cells.append(
                    f"{fmt_score(match.score, match.stderr)} (n={match.n})" if match else "–"
                )
                score = None if match is None else (match.score, match.stderr)
                series.setdefault(run.label, []).append(_percent(score))
            table.append(cells)
        chart = f"categories_{_slug(task_id)}_{_slug(column)}.png"
        bar_chart(out_dir / chart, f"{first.benchmark}: by {column}", values, series)
        header = [md(column), *(md(r.label) for r in present)]
        lines += [f"### By {markdown_code(column)}", "", *_table(header, table)]
        lines += ["", f"![{md(task_id)} by {md(column)}]({chart})", ""]
    return lines
