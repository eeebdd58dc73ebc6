"""PNG charts of one or more runs (matplotlib, Agg backend, imported only when drawing).

Example:
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "scores.png"
    >>> bar_chart(path, "Scores", ["Video-MME", "MVBench"],
    ...           {"base": [(61.0, 1.2), (55.0, None)], "rl": [(64.0, 1.1), (58.5, 0.9)]})
    >>> path.stat().st_size > 0
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

Bar = tuple[float | None, float | None]
"""A bar: value (None: no bar) and its standard error (None: no error bar)."""


def bar_chart(
    path: Path,
    title: str,
    labels: Sequence[str],
    series: Mapping[str, Sequence[Bar]],
    *,
    ylabel: str = "score (%)",
) -> None:
    """Grouped bars: one group per label, one bar per series (run), with error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_series = max(1, len(series))
    width = 0.8 / n_series
    size = min(16.0, max(6.0, 0.6 * len(labels) * max(1.0, n_series / 2)))
    figure, axes = plt.subplots(figsize=(size, 4.2))
    try:
        for index, (name, bars) in enumerate(series.items()):
            xs = [i - 0.4 + width * (index + 0.5) for i in range(len(labels))]
            values = [b[0] if b[0] is not None else 0.0 for b in bars]
            errors = [b[1] if b[1] is not None and b[0] is not None else 0.0 for b in bars]
            axes.bar(xs, values, width, yerr=errors, capsize=2, label=name)
        axes.set_xticks(range(len(labels)))
        axes.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
        axes.set_ylabel(ylabel)
        axes.set_title(title)
        axes.grid(axis="y", alpha=0.3)
        if len(series) > 1:
            axes.legend(fontsize=8)
        figure.tight_layout()
        figure.savefig(path, dpi=110)
    finally:
        plt.close(figure)
