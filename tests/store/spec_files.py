"""Spec files over media for the store tests: one JSON spec and its JSONL rows.

Importable by the tests and by the scripts they run in subprocesses; the media themselves
come from :mod:`tests.media_kit`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

VIDEO_BUDGET: dict[str, Any] = {
    "fps": 2.0,
    "min_frames": 4,
    "max_frames": 8,
    "min_pixels": 3136,
    "max_pixels": 12544,
    "patch": 28,
}


def write_spec(
    folder: Path,
    task_id: str,
    rows: Sequence[dict[str, Any] | str],
    *,
    video_budget: dict[str, Any] | None = None,
    image_budget: dict[str, Any] | None = None,
    problem_type: str = "numerical",
    template: str = "{{ question }}\nPut the final answer in <answer></answer>.",
) -> Path:
    """Write ``<folder>/<task_id>.yaml`` and its JSONL rows (a str row is written verbatim)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"{task_id}.jsonl"
    data.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
        encoding="utf-8",
    )
    budget = {"video": video_budget or VIDEO_BUDGET}
    if image_budget is not None:
        budget["image"] = image_budget
    spec = {
        "id": task_id,
        "version": 1,
        "problem_type": problem_type,
        # the media are links into one shared folder, outside the spec's root
        "data": {"path": data.name, "media_root": ".", "allow_absolute_paths": True},
        "budget": budget,
        "prompt": {"template": template},
    }
    path = folder / f"{task_id}.yaml"
    path.write_text(json.dumps(spec, indent=2), encoding="utf-8")  # JSON is valid YAML
    return path


def video_rows(names: Iterable[str], *, question: str = "How many bars?") -> list[dict[str, Any]]:
    """One numerical row per video name."""
    return [
        {"id": f"row-{i}", "problem": question, "answer": str(i), "videos": [name]}
        for i, name in enumerate(names)
    ]
