"""PNG charts of one or more runs (matplotlib, Agg backend, imported only when drawing).

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "scores.png"
    >>> bar_chart(path, "Scores", ["Video-MME", "MVBench"],
    ...           {"base": [(61.0, 1.2), (55.0, None)], "rl": [(64.0, 1.1), (58.5, 0.9)]})
    >>> path.stat().st_size > 0
    True
    >>> bar_chart(path, "$x^{$", ["a_$x$"], {"$": [(1.0, None)]})  # text, never maths
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

Bar = tuple[float | None, float | None]
"""A bar: value (None: no bar, marked "n/a") and its standard error (None: no error bar)."""

MISSING = "n/a"
"""The mark drawn where a run has no value, so that it never reads as a bar of height 0."""

PLAIN_TEXT = {"text.parse_math": False, "text.usetex": False}
"""Matplotlib settings that draw every label as the text it is: names come from results
files and metrics logs, and ``$...$`` would otherwise be parsed as maths (a bad formula
stops the whole report)."""


def draw_bars(axes: Any, labels: Sequence[str], series: Mapping[str, Sequence[Bar]]) -> None:
    """Grouped bars on ``axes``: one group per label, one bar per series (run), error bars
    where a standard error is known, :data:`MISSING` where a value is not.

    Example:
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> figure, axes = plt.subplots()
        >>> draw_bars(axes, ["a", "b"], {"run": [(50.0, 2.0), (None, None)]})
        >>> [float(bar.get_height()) for bar in axes.patches], [t.get_text() for t in axes.texts]
        ([50.0, nan], ['n/a'])
        >>> plt.close(figure)
    """
    width = 0.8 / max(1, len(series))
    for index, (name, bars) in enumerate(series.items()):
        xs = [i - 0.4 + width * (index + 0.5) for i in range(len(labels))]
        values = [float("nan") if value is None else value for value, _ in bars]
        errors = [
            float("nan") if value is None or stderr is None else stderr for value, stderr in bars
        ]
        axes.bar(xs, values, width, yerr=errors, capsize=2, label=name)
        for x, (value, _) in zip(xs, bars, strict=True):
            if value is None:
                axes.text(x, 0, MISSING, ha="center", va="bottom", fontsize=6, rotation=90)
    axes.axhline(0, color="black", linewidth=0.6)
    axes.set_xticks(range(len(labels)))
    axes.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)


def bar_chart(
    path: Path,
    title: str,
    labels: Sequence[str],
    series: Mapping[str, Sequence[Bar]],
    *,
    ylabel: str = "score (%)",
) -> None:
    """Write a PNG of :func:`draw_bars` with a title, axis label and (for 2+ series) legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    size = min(16.0, max(6.0, 0.6 * len(labels) * max(1.0, len(series) / 2)))
    with matplotlib.rc_context(PLAIN_TEXT):
        figure, axes = plt.subplots(figsize=(size, 4.2))
        try:
            draw_bars(axes, labels, series)
            axes.set_ylabel(ylabel)
            axes.set_title(title)
            axes.grid(axis="y", alpha=0.3)
            if len(series) > 1:
                axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
            figure.tight_layout()
            figure.savefig(path, dpi=110)
        finally:
            plt.close(figure)
