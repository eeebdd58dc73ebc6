"""A one-row task spec written to a folder, for tests that load specs through the real loader."""

from __future__ import annotations

import json
from pathlib import Path


def write_spec(folder: Path, spec_id: str, problem_type: str, extra: str, answer: str) -> Path:
    """``folder/<spec_id>.yaml`` (plus ``data.jsonl`` with one row whose answer is ``answer``);
    ``extra`` is more YAML (``"verifier: {...}\\n"``), written after the data line."""
    row = json.dumps({"problem": "q", "answer": answer})
    (folder / "data.jsonl").write_text(row + "\n", encoding="utf-8")
    path = folder / f"{spec_id}.yaml"
    path.write_text(
        f"id: {spec_id}\nversion: 1\nproblem_type: {problem_type}\ndata: {{path: data.jsonl}}\n"
        f"{extra}"
        'prompt: {template: "{{ question }}"}\n',
        encoding="utf-8",
    )
    return path
