"""Data rows in the layout of the public video-RL sets (Video-R1-260k, OneThinker, VideoChat-R1).

Each row has ``problem_id``, ``problem``, ``data_type``, ``problem_type`` (the peer's
spellings), ``options`` (``[]`` when not multiple choice), ``process``, ``solution`` (the
gold wrapped in ``<answer>…</answer>``), ``path`` (one media path, not a list) and
``data_source``: exactly what those files hold, so tests read them with no preprocessing.

Example:
    >>> [row["problem_type"] for row in MIXED_ROWS][:3]
    ['multiple choice', 'numerical', 'OCR']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MIXED_ROWS: list[dict[str, Any]] = [
    {
        "problem_id": 101,
        "problem": "What colour is the moving bar?",
        "data_type": "video",
        "problem_type": "multiple choice",
        "options": ["A. red", "B. green", "C. blue", "D. white"],
        "process": "<think>The bar is green.</think>",
        "solution": "<answer>B</answer>",
        "path": "./videos/clip_a.mp4",
        "data_source": "LLaVA-Video-178K",
    },
    {
        "problem_id": 102,
        "problem": "How many bars cross the screen?",
        "data_type": "video",
        "problem_type": "numerical",
        "options": [],
        "process": "<think>I count them.</think>",
        "solution": "<answer>3</answer>",
        "path": "./videos/clip_b.mp4",
        "data_source": "STAR",
    },
    {
        "problem_id": 103,
        "problem": "What does the sign say?",
        "data_type": "image",
        "problem_type": "OCR",
        "options": [],
        "process": "",
        "solution": "<answer>STOP</answer>",
        "path": "./images/sign.png",
        "data_source": "TextVQA",
    },
    {
        "problem_id": 104,
        "problem": "Describe what happens.",
        "data_type": "video",
        "problem_type": "free-form",
        "options": [],
        "process": "",
        "solution": "<answer>a green bar moves from left to right</answer>",
        "path": "./videos/clip_a.mp4",
        "data_source": "LLaVA-Video-178K",
    },
    {
        "problem_id": 105,
        "problem": "How long is the bar, in centimetres?",
        "data_type": "image",
        "problem_type": "regression",
        "options": [],
        "process": "",
        "solution": "<answer>40</answer>",
        "path": "./images/ruler.png",
        "data_source": "SpatialBench",
    },
]

MIXED_SPEC = """\
id: mixed
version: 1
problem_type: from_row
data:
  path: mixed.jsonl
  media_root: .
  fields: {answer: solution, media: path, id: problem_id}
verifiers:
  numerical: {name: numeric, version: 2, params: {abs_tol: 0.5}}
budget:
  video: {fps: 2.0, min_frames: 4, max_frames: 8, min_pixels: 3136, max_pixels: 12544}
  image: {min_pixels: 3136, max_pixels: 12544}
prompt: {template: "{{ question }}{% if options %} {{ options | join(' ') }}{% endif %}"}
"""


def write_mixed(
    folder: Path, rows: list[dict[str, Any]] | None = None, spec: str = MIXED_SPEC
) -> Path:
    """Write ``mixed.jsonl`` (the public layout) and ``mixed.yaml``; return the spec path."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(row) + "\n" for row in (MIXED_ROWS if rows is None else rows)]
    (folder / "mixed.jsonl").write_text("".join(lines), encoding="utf-8")
    (folder / "mixed.yaml").write_text(spec, encoding="utf-8")
    return folder / "mixed.yaml"
