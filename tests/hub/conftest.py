"""Fixtures for the Hub tests: a loopback Hub server, an isolated HF cache, demo specs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hub.hub_server import HubServer

BASE_YAML = """\
version: 1
budget:
  video: {fps: 2.0, min_frames: 4, max_frames: 16}
reward: {format: answer_tag, weights: {accuracy: 0.9, format: 0.1}}
prompt:
  template: "{{ question }}\\nPut the final answer in <answer></answer>."
"""

COUNT_YAML = """\
include: _base.yaml
id: synth-count
description: Count the moving squares.
tags: [synth, counting]
problem_type: numerical
data:
  path: data/count.jsonl
  media_root: data
verifier: {name: numeric, version: 2, params: {abs_tol: 0.5}}
"""

COLOR_YAML = """\
include: _base.yaml
id: synth-color
problem_type: multiple choice
data:
  path: data/color.jsonl
  media_root: data
"""


def write_rows(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture(autouse=True)
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own download cache and no ambient token or endpoint."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubServer]:
    server = HubServer.start(tmp_path / "hub-server")
    yield server
    server.stop()


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    """Two specs sharing a base file, with 30 + 5 data rows (one malformed count row)."""
    root = tmp_path / "tasks"
    root.mkdir()
    (root / "_base.yaml").write_text(BASE_YAML)
    (root / "count.yaml").write_text(COUNT_YAML)
    (root / "color.yaml").write_text(COLOR_YAML)
    count_rows: list[dict] = [
        {
            "id": f"count-{i:03d}",
            "problem": f"How many squares move in clip {i}?",
            "answer": i % 7,
            "videos": [f"videos/count_{i:03d}.mp4"],
            "images": [],
            "options": None,
            "problem_type": "numerical",
            "data_type": "video",
        }
        for i in range(30)
    ]
    count_rows[3] = {"answer": 1, "videos": ["videos/x.mp4"]}  # no question: skipped
    write_rows(root / "data" / "count.jsonl", count_rows)
    color_rows = [
        {
            "problem": "Which colour is the ball?",
            "answer": "B",
            "options": ["A. Red", "B. Blue", "C. Green"],
            "videos": [f"videos/color_{i}.mp4"],
            "problem_type": "multiple choice",
            "data_type": "video",
        }
        for i in range(5)
    ]
    write_rows(root / "data" / "color.jsonl", color_rows)
    return root


@pytest.fixture
def spec_paths(task_dir: Path) -> list[Path]:
    return [task_dir / "count.yaml", task_dir / "color.yaml"]
