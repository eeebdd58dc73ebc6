"""Generate the whole synthetic suite: one JSONL per task, clips, stills and a manifest.

Layout of ``out_dir`` after :func:`generate_suite`::

    <task>.jsonl        EasyVideoR1 data rows (problem, answer, videos, images, options,
                        problem_type, data_type, id), one file per task in TASKS
    videos/<task>_NNNN.mp4
    images/<task>_NNNN.png
    manifest.json       seed, generator version, clip format, conventions, row counts,
                        and the list of media files it wrote

Every row draws its randomness from its own ``random.Random`` seeded with ``(seed, task,
index)``, so the same seed gives byte-identical files, and raising ``n_per_task`` keeps
the earlier rows unchanged.

Example:
    >>> import tempfile
    >>> manifest = generate_suite(tempfile.mkdtemp(), n_per_task=1, seed=0, tasks=["count"])
    >>> manifest.n_rows, manifest.tasks[0].file, manifest.tasks[0].problem_type
    (1, 'count.jsonl', 'numerical')
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.core.problem_types import ProblemType
from videorl_kit.synth.catalog import CATALOG, TASK_NAMES
from videorl_kit.synth.encode import ENCODER_SETTINGS, write_mp4, write_png
from videorl_kit.synth.item import SynthItem
from videorl_kit.synth.layout import Canvas
from videorl_kit.synth.raster import render_frame
from videorl_kit.synth.tasks_caption import build_caption, build_critic
from videorl_kit.synth.tasks_code import build_code
from videorl_kit.synth.tasks_grounding import (
    build_spatial,
    build_spatiotemporal,
    build_temporal,
    build_tracking,
)
from videorl_kit.synth.tasks_image import (
    build_image_count,
    build_image_multiple_choice,
    build_image_ocr,
    build_image_spatial,
)
from videorl_kit.synth.tasks_reading import build_math, build_ocr
from videorl_kit.synth.tasks_video import (
    build_boolean,
    build_count,
    build_multiple_choice,
    build_regression,
)

#: Bump when any change alters generated rows or pixels for the same seed.
GENERATOR_VERSION = 1

#: Written into manifest.json so consumers know how answers are expressed.
CONVENTIONS: dict[str, str] = {
    "box": (
        "[x1, y1, x2, y2] integer pixels of the original frame; x1, y1 inclusive, x2, y2 "
        "exclusive (the shape covers x1 <= x < x2, y1 <= y < y2); tight around the shape"
    ),
    "time": (
        "seconds of the original video; frame i is shown at i / fps and covers "
        "[i / fps, (i + 1) / fps); a span [s, e] means visible in frames s*fps .. e*fps - 1"
    ),
    "per_second_boxes": (
        'keys are whole seconds as strings ("2"); the box is the one in the frame shown at '
        "that second; spatio-temporal answers list every whole second inside the span"
    ),
}

Builder = Callable[[random.Random, Canvas, int], SynthItem]


@dataclass(frozen=True)
class TaskDef:
    """One synthetic task: its file stem, problem type, modality and question builder."""

    name: str
    problem_type: ProblemType
    data_type: str
    build: Builder
    summary: str


_BUILDERS: dict[str, Builder] = {
    "multiple_choice": build_multiple_choice,
    "count": build_count,
    "regression": build_regression,
    "boolean": build_boolean,
    "temporal": build_temporal,
    "spatial": build_spatial,
    "spatiotemporal": build_spatiotemporal,
    "tracking": build_tracking,
    "ocr": build_ocr,
    "caption": build_caption,
    "math": build_math,
    "critic": build_critic,
    "image_multiple_choice": build_image_multiple_choice,
    "image_count": build_image_count,
    "image_ocr": build_image_ocr,
    "image_spatial": build_image_spatial,
    "code": build_code,
}

#: Every task of the suite (the catalog's order), with its builder.
TASKS: tuple[TaskDef, ...] = tuple(
    TaskDef(info.name, info.problem_type, info.data_type, _BUILDERS[info.name], info.summary)
    for info in CATALOG
)


@dataclass(frozen=True)
class TaskSummary:
    """What was written for one task."""

    name: str
    file: str
    problem_type: str
    data_type: str
    rows: int
    summary: str = ""


@dataclass(frozen=True)
class SuiteManifest:
    """The content of ``manifest.json`` (plus where it was written).

    Example:
        >>> m = SuiteManifest(out_dir=Path("d"), seed=0, n_per_task=1, tasks=(), files=())
        >>> m.n_rows, m.to_dict()["generator_version"]
        (0, 1)
    """

    out_dir: Path
    seed: int
    n_per_task: int
    tasks: tuple[TaskSummary, ...]
    files: tuple[str, ...]
    generator_version: int = GENERATOR_VERSION
    canvas: Canvas = field(default_factory=Canvas)

    @property
    def n_rows(self) -> int:
        """Rows over all tasks."""
        return sum(task.rows for task in self.tasks)

    @property
    def n_videos(self) -> int:
        """Number of mp4 clips written."""
        return sum(1 for f in self.files if f.endswith(".mp4"))

    @property
    def n_images(self) -> int:
        """Number of PNG stills written."""
        return sum(1 for f in self.files if f.endswith(".png"))

    def task(self, name: str) -> TaskSummary:
        """The summary of task ``name`` (KeyError if it was not generated)."""
        for task in self.tasks:
            if task.name == name:
                return task
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document written to ``manifest.json`` (no times, so reproducible)."""
        return {
            "generator": "videorl_kit.synth",
            "generator_version": self.generator_version,
            "seed": self.seed,
            "n_per_task": self.n_per_task,
            "video": {
                "width": self.canvas.width,
                "height": self.canvas.height,
                "fps": self.canvas.fps,
                **ENCODER_SETTINGS,
            },
            "conventions": CONVENTIONS,
            "tasks": {
                task.name: {k: v for k, v in asdict(task).items() if k != "name"}
                for task in self.tasks
            },
            "n_rows": self.n_rows,
            "n_videos": self.n_videos,
            "n_images": self.n_images,
            "files": list(self.files),
        }


def _row_rng(seed: int, task: str, index: int) -> random.Random:
    return random.Random(f"videorl-kit-synth:{seed}:{task}:{index}")


def build_item(task: str, index: int, seed: int = 0, canvas: Canvas | None = None) -> SynthItem:
    """Rebuild row ``index`` of ``task`` for ``seed`` (scene included) without writing files.

    This is exactly what :func:`generate_suite` renders for that row, so it serves to
    inspect or re-render one sample. Raises UserError for an unknown task.

    Example:
        >>> build_item("count", 0).answer == build_item("count", 0).answer
        True
        >>> build_item("code", 3).scene is None
        True
    """
    (definition,) = _select_tasks([task])
    return definition.build(_row_rng(seed, definition.name, index), canvas or Canvas(), index)


def _row(task: TaskDef, index: int, item: SynthItem, media: str | None) -> dict[str, Any]:
    return {
        "problem": item.problem,
        "answer": item.answer,
        "videos": [media] if media and task.data_type == "video" else [],
        "images": [media] if media and task.data_type == "image" else [],
        "options": item.options,
        "problem_type": task.problem_type.value,
        "data_type": task.data_type,
        "id": f"synth-{task.name.replace('_', '-')}-{index:04d}",
    }


def _write_media(out_dir: Path, task: TaskDef, index: int, item: SynthItem) -> str | None:
    scene = item.scene
    if scene is None:
        return None
    if task.data_type == "video":
        relative = f"videos/{task.name}_{index:04d}.mp4"
        frames = (render_frame(scene, i) for i in range(scene.n_frames))
        write_mp4(out_dir / relative, frames, fps=scene.fps)
    else:
        relative = f"images/{task.name}_{index:04d}.png"
        write_png(out_dir / relative, render_frame(scene, 0))
    return relative


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


_MEDIA_NAME = re.compile(
    r"videos/(?P<video>[a-z_]+)_\d{4,}\.mp4|images/(?P<image>[a-z_]+)_\d{4,}\.png"
)


def _previous_files(out_dir: Path) -> dict[str, str]:
    """Media files an earlier manifest in ``out_dir`` lists, mapped to their task name.

    Only names this generator writes (``videos/<task>_NNNN.mp4``, ``images/<task>_NNNN.png``)
    count, so a foreign or tampered manifest can never make it delete anything else.
    """
    try:
        files = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))["files"]
        names = [f for f in files if isinstance(f, str)]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    found = {}
    for name in names:
        match = _MEDIA_NAME.fullmatch(name)
        if match:
            found[name] = match["video"] or match["image"]
    return found


def _select_tasks(tasks: Iterable[str] | None) -> list[TaskDef]:
    if tasks is None:
        return list(TASKS)
    by_name = {task.name: task for task in TASKS}
    chosen = list(dict.fromkeys(tasks))
    unknown = [name for name in chosen if name not in by_name]
    if unknown:
        raise UserError(
            f"unknown synth task(s) {', '.join(unknown)}; choose from {', '.join(TASK_NAMES)}"
        )
    return [task for task in TASKS if task.name in chosen]


def generate_suite(
    out_dir: str | Path,
    n_per_task: int = 8,
    seed: int = 0,
    *,
    tasks: Iterable[str] | None = None,
    canvas: Canvas | None = None,
    on_task_done: Callable[[TaskSummary], None] | None = None,
) -> SuiteManifest:
    """Write ``n_per_task`` rows per task (all of :data:`TASKS`, or ``tasks``) to ``out_dir``.

    Media files of the selected tasks that an earlier run listed in
    ``out_dir/manifest.json`` but this run did not write are removed; nothing else in
    ``out_dir`` is touched, and the new manifest describes this run only. ``on_task_done`` is called
    with each task's summary as soon as its files are written (for progress display). Raises
    :class:`~videorl_kit.core.errors.UserError` for a bad count, an unknown task or an
    ``out_dir`` that is not a writable directory.

    Example:
        >>> import tempfile
        >>> m = generate_suite(tempfile.mkdtemp(), 2, seed=3, tasks=["image_count", "code"])
        >>> m.n_rows, m.n_images, m.n_videos
        (4, 2, 0)
    """
    if n_per_task < 1:
        raise UserError(f"n_per_task must be at least 1, got {n_per_task}")
    selected = _select_tasks(tasks)
    canvas = canvas or Canvas()
    if canvas.width % 2 or canvas.height % 2 or canvas.width < 160 or canvas.height < 120:
        raise UserError(f"canvas must be at least 160x120 with even sides, got {canvas}")
    if canvas.fps < 2 or canvas.fps % 2:
        raise UserError(f"canvas fps must be even (half-second events), got {canvas.fps}")
    out = Path(out_dir)
    try:
        for folder in (out, out / "videos", out / "images"):
            folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise UserError(f"{out}: not a directory") from None
    except OSError as exc:
        raise UserError(f"{out}: cannot create the output folder ({exc.strerror})") from None
    previous = _previous_files(out)
    summaries: list[TaskSummary] = []
    files: list[str] = []
    for task in selected:
        lines = []
        for index in range(n_per_task):
            item = build_item(task.name, index, seed, canvas)
            media = _write_media(out, task, index, item)
            if media is not None:
                files.append(media)
            lines.append(json.dumps(_row(task, index, item, media), ensure_ascii=False))
        _write_text(out / f"{task.name}.jsonl", "\n".join(lines) + "\n")
        summary = TaskSummary(
            task.name,
            f"{task.name}.jsonl",
            task.problem_type.value,
            task.data_type,
            n_per_task,
            task.summary,
        )
        summaries.append(summary)
        if on_task_done is not None:
            on_task_done(summary)
    selected_names = {task.name for task in selected}
    for stale in sorted(set(previous) - set(files)):
        if previous[stale] in selected_names:
            (out / stale).unlink(missing_ok=True)
    manifest = SuiteManifest(
        out_dir=out,
        seed=seed,
        n_per_task=n_per_task,
        tasks=tuple(summaries),
        files=tuple(files),
        canvas=canvas,
    )
    _write_text(out / "manifest.json", json.dumps(manifest.to_dict(), indent=2) + "\n")
    return manifest
