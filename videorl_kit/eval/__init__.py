"""Evaluation from the same specs: benchmark runs, typed results and reports.

Importing this package is cheap (no torch, no polars): names load on first use.

* :func:`run_eval` with an :class:`EvalConfig` (``runner``): the ``videorl-kit eval``
  command as a function; writes ``samples_<task>.jsonl`` and, last, ``results.json``.
* :class:`EvalResults` and :func:`load_results` (``results``): the results file's schema.
* :func:`render_report` (``report``): ``report.md`` and PNG charts of one or more runs.
* :func:`load_tasks` (``tasks``): specs resolved into tasks with their rows.

Example:
    >>> from videorl_kit.eval import EvalConfig
    >>> EvalConfig(specs=["task_specs/eval/mvbench.yaml"], out="runs/x").backend
    'transformers'
"""

from __future__ import annotations

from videorl_kit.core.lazy import lazy_exports

_EXPORTS = {
    "EvalConfig": "videorl_kit.eval.runner",
    "run_eval": "videorl_kit.eval.runner",
    "EvalResults": "videorl_kit.eval.results",
    "load_results": "videorl_kit.eval.results",
    "render_report": "videorl_kit.eval.report",
    "load_tasks": "videorl_kit.eval.tasks",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
