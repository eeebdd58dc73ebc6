"""Cached frames written into a bundle, in the form each video path reads.

* **frames as images** (stock OpenRLHF): one lossless PNG per frame,
  ``frames/<cache_key>/<i>.png``; OpenRLHF's rollout actors open them by path.
* **native video** (the bundle's agent): one ``media/<cache_key>.npy`` (uint8 T×H×W×3, the
  cached frames byte for byte) and ``media/<cache_key>.json`` (the metadata the processor
  needs: source fps, selected frame indices, total frames, duration, timestamps). Images
  are one PNG each in both forms.

PNG and ``.npy`` are lossless, so training sees exactly the pixels the cache (and
evaluation) holds. Paths in the bundle are absolute; every node must see the bundle folder
at the same path (shared storage, like the model and checkpoint folders).

Example:
    >>> import numpy as np, tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> frames = np.zeros((2, 28, 56, 3), dtype=np.uint8)
    >>> meta = {"fps": 30.0, "frames_indices": [0, 15], "total_num_frames": 30}
    >>> path = write_video(folder, "0f" * 32, frames, meta, [0.0, 0.5])
    >>> video, loaded, timestamps = read_video(path)
    >>> video.shape, loaded["frames_indices"], timestamps
    ((2, 28, 56, 3), [0, 15], [0.0, 0.5])
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from videorl_kit.store.row_digest import checked_cache_key

VIDEO_SUFFIX = ".npy"


def write_video(
    folder: Path,
    key: str,
    frames: np.ndarray,
    video_metadata: dict[str, Any],
    timestamps_s: list[float],
) -> Path:
    """Write one native-video item (frames and metadata) and return the ``.npy`` path.

    ``key`` names the files: a cache key (64 hex digits), anything else is a ``ValueError``.
    """
    path = folder / f"{checked_cache_key(key)}{VIDEO_SUFFIX}"
    folder.mkdir(parents=True, exist_ok=True)
    np.save(path, np.ascontiguousarray(frames, dtype=np.uint8), allow_pickle=False)
    meta = {"video_metadata": video_metadata, "timestamps_s": list(timestamps_s)}
    path.with_suffix(".json").write_text(json.dumps(meta, sort_keys=True), encoding="utf-8")
    return path


def read_video(path: str | Path) -> tuple[np.ndarray, dict[str, Any], list[float]]:
    """Frames (uint8 T×H×W×3), ``VideoMetadata`` fields and timestamps (seconds) of a
    native-video item written by :func:`write_video`.

    Raises ``ValueError`` naming the file when it is missing or not a uint8 video array.
    """
    path = Path(path)
    try:
        frames = np.load(path, allow_pickle=False)
        meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        video_metadata, timestamps = dict(meta["video_metadata"]), list(meta["timestamps_s"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: cannot read bundle video: {exc}") from None
    if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[-1] != 3:
        raise ValueError(
            f"{path}: expected uint8 frames T×H×W×3, got {frames.dtype} {frames.shape}"
        )
    return frames, video_metadata, timestamps


def write_png_frames(folder: Path, frames: np.ndarray) -> list[Path]:
    """Write each frame as a lossless PNG (``0.png``, ``1.png``, ...) and return the paths."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, frame in enumerate(frames):
        path = folder / f"{index}.png"
        Image.fromarray(np.ascontiguousarray(frame)).save(path, format="PNG")
        paths.append(path)
    return paths


def read_png(path: str | Path) -> np.ndarray:
    """One PNG as a uint8 H×W×3 array (raises ``ValueError`` naming an unreadable file).

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> [png] = write_png_frames(Path(tempfile.mkdtemp()), np.full((1, 4, 6, 3), 7, np.uint8))
        >>> read_png(png).shape, int(read_png(png)[0, 0, 0])
        ((4, 6, 3), 7)
    """
    from PIL import Image

    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("RGB"))
    except OSError as exc:
        raise ValueError(f"{path}: cannot read bundle image: {exc}") from None
