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

from videorl_kit.core.lazy import lazy_exports

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
    "write_demo_task": "videorl_kit.synth.demo",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
