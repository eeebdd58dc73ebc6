"""Synthetic verifiable videos: procedurally generated clips with exact ground truth.

Coloured circles, squares and triangles move, appear and disappear, and text is drawn on
the background or on shapes; every answer is computed from the scene description the
clip is rendered from, never estimated from pixels. One call writes a task per problem
type (plus image and text-only tasks) in EasyVideoR1's data-row layout.

Importing this package is cheap; numpy, PyAV and Pillow load on first use of the
generator.

Example:
    >>> import tempfile
    >>> from videorl_kit.synth import generate_suite
    >>> manifest = generate_suite(tempfile.mkdtemp(), n_per_task=1, tasks=["boolean"])
    >>> manifest.task("boolean").rows
    1
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "CATALOG": "videorl_kit.synth.catalog",
    "TASK_NAMES": "videorl_kit.synth.catalog",
    "TaskInfo": "videorl_kit.synth.catalog",
    "GENERATOR_VERSION": "videorl_kit.synth.suite",
    "TASKS": "videorl_kit.synth.suite",
    "SuiteManifest": "videorl_kit.synth.suite",
    "TaskDef": "videorl_kit.synth.suite",
    "TaskSummary": "videorl_kit.synth.suite",
    "build_item": "videorl_kit.synth.suite",
    "generate_suite": "videorl_kit.synth.suite",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'videorl_kit.synth' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
