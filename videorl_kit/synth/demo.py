"""A tiny, complete demo task on disk: synthetic clips and stills, their rows and a spec.

Used by the runnable examples of the public API (building a store takes a few seconds on a
CPU) and handy for trying the kit without any download.

Example:
    >>> import tempfile
    >>> spec_path = write_demo_task(tempfile.mkdtemp())
    >>> spec_path.name, sorted(p.name for p in spec_path.parent.glob("*.jsonl"))
    ('demo.yaml', ['demo.jsonl'])
"""

from __future__ import annotations

from pathlib import Path

from videorl_kit.synth.suite import generate_suite

DEMO_SPEC = """\
# A demo task over synthetic clips (counting, numerical) and stills (counting, numerical):
# one spec, rows routed by their own problem type, videos and images under their budgets.
id: demo
version: 1
problem_type: from_row
data:
  path: demo.jsonl
  media_root: .
budget:
  video: {fps: 1.0, min_frames: 2, max_frames: 4, min_pixels: 3136, max_pixels: 12544}
  image: {min_pixels: 3136, max_pixels: 12544}
prompt:
  template: "{{ question }}\\nPut the final answer in <answer></answer>."
"""


def write_demo_task(folder: str | Path, n_per_task: int = 2, seed: int = 0) -> Path:
    """Write ``n_per_task`` video and image counting rows, their media and ``demo.yaml``.

    Returns the spec's path; the rows are ``demo.jsonl`` next to it (videos first).
    """
    folder = Path(folder)
    generate_suite(folder, n_per_task, seed, tasks=["count", "image_count"])
    rows = [
        line
        for name in ("count.jsonl", "image_count.jsonl")
        for line in (folder / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    (folder / "demo.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    for name in ("count.jsonl", "image_count.jsonl"):
        (folder / name).unlink()
    spec = folder / "demo.yaml"
    spec.write_text(DEMO_SPEC, encoding="utf-8")
    return spec
