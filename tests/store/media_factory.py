"""Small real media files and spec trees for the store tests (PyAV-encoded, fast).

Importable by the tests, by subprocess scripts (crash test) and by the benchmark smoke
test. Every video is a real H.264 (or MPEG-4) stream whose frames differ, so distinct
videos have distinct content hashes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import av
import numpy as np


def make_video(
    path: Path,
    *,
    width: int = 96,
    height: int = 64,
    frames: int = 20,
    fps: int = 10,
    seed: int = 0,
    codec: str = "libx264",
) -> Path:
    """Encode a small video with a moving bar; ``seed`` changes the content."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, size=3)
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        if codec == "libx264":
            stream.options = {"preset": "ultrafast"}
        for i in range(frames):
            image = np.empty((height, width, 3), np.uint8)
            image[...] = base
            image[..., 0] = (base[0] + 12 * i) % 256
            x = (i * max(1, width // 16)) % max(1, width - width // 8)
            image[: max(1, height // 3), x : x + max(1, width // 8), 1] = 255
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def make_image(path: Path, *, width: int = 80, height: int = 60, seed: int = 0) -> Path:
    """Write a small PNG image (via PyAV's image encoder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 255, size=(height, width, 3), dtype=np.uint8)
    with av.open(str(path), "w", format="image2") as container:
        stream = container.add_stream("png", rate=1)
        stream.width, stream.height, stream.pix_fmt = width, height, "rgb24"
        for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
            container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def make_audio_only(path: Path) -> Path:
    """An .mp4 holding only an AAC audio stream."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("aac", rate=16000)
        for i in range(8):
            frame = av.AudioFrame.from_ndarray(
                np.zeros((1, 1024), np.float32), format="fltp", layout="mono"
            )
            frame.sample_rate, frame.pts = 16000, i * 1024
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def make_truncated(source: Path, path: Path, keep: float = 0.4) -> Path:
    """The first ``keep`` fraction of ``source``'s bytes."""
    data = source.read_bytes()
    path.write_bytes(data[: max(1, int(len(data) * keep))])
    return path


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
