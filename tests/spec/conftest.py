"""Fixtures for spec tests: write small spec trees into a temporary folder."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

MINIMAL = """\
id: demo-count
version: 1
problem_type: numerical
data:
  path: rows.jsonl
  media_root: media
prompt:
  template: "{{ question }}\\nPut the final answer in <answer></answer>."
"""


@pytest.fixture
def write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str], Path]:
    """Write ``text`` (dedented) to ``tmp_path/name``; the cwd is tmp_path so messages are short."""
    monkeypatch.chdir(tmp_path)

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    return _write


@pytest.fixture
def rows(tmp_path: Path) -> Path:
    """A small JSONL data file next to the specs."""
    path = tmp_path / "rows.jsonl"
    records = [
        {"problem": "How many circles?", "answer": 3, "videos": ["a.mp4"], "id": "s0"},
        {"problem": "How many squares?", "answer": "2", "videos": ["b.mp4"]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
