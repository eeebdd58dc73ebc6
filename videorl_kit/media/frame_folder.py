"""Videos stored as folders of numbered frame images (GoT-10k, LaSOT and most tracking and
action sets), decoded like any video.

A frame folder holds one image per frame, named with its number (``00000001.jpg``,
``img_0042.png``, ``frame-7.webp``): the frames play in the order of the last number in
their names, at the fps the spec declares (``data.frames_fps``), since a folder of images
carries no timing. Other files (``groundtruth.txt``, ``meta_info.ini``, hidden files) are
ignored. Sampling and resizing are the video ones (:func:`~videorl_kit.media.sampling.
select_frames`, the budget's frame count and smart-resize), so a folder decodes to the same
frames and timestamps as the same frames encoded losslessly into a video file at that fps.

* :func:`frame_files` lists the frames in play order; two frames with one number, a frame
  without a number, an empty folder and frames of different sizes are errors
  (:class:`~videorl_kit.media.errors.MediaError`) naming the folder and the files.
* :func:`frame_folder_hash` is the folder's content hash (every frame's name and bytes, and
  the declared fps: the same frames at another fps are another video).
* :func:`decode_frame_folder` returns a :class:`~videorl_kit.media.decoded.DecodedVideo`.

Example:
    >>> import pathlib, tempfile, numpy as np, PIL.Image
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for i in range(1, 11):
    ...     frame = np.full((64, 96, 3), 20 * i, np.uint8)
    ...     PIL.Image.fromarray(frame).save(folder / f"{i:08d}.png")
    >>> budget = {"fps": 2.0, "min_frames": 4, "max_frames": 32, "min_pixels": 3136,
    ...           "max_pixels": 50176, "patch": 28}
    >>> video = decode_frame_folder(folder, budget, fps=5.0)
    >>> video.frames.shape, video.frame_indices, video.timestamps_s, video.duration_s
    ((4, 56, 84, 3), [0, 3, 6, 9], [0.0, 0.6, 1.2, 1.8], 2.0)
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import PIL
from PIL import Image

from videorl_kit.core.budget import as_video_budget
from videorl_kit.core.frame_files import FRAME_SUFFIXES
from videorl_kit.media.budget import output_size, sample_count
from videorl_kit.media.decoded import DecodedVideo
from videorl_kit.media.errors import DecodeError, MissingFileError, NoFramesError
from videorl_kit.media.hashing import file_content_hash
from videorl_kit.media.resize import resize_frame
from videorl_kit.media.sampling import select_frames

__all__ = [
    "FRAME_FOLDER_DECODER",
    "FRAME_SUFFIXES",
    "decode_frame_folder",
    "frame_files",
    "frame_folder_decoder_version",
    "frame_folder_hash",
]

FRAME_FOLDER_DECODER = "frames"
"""The decoder name recorded with frames read from a frame folder (part of the cache key)."""


_NUMBER = re.compile(r"\d+")
_HASH_LAYOUT = "videorl-kit frame folder 1"


def frame_folder_decoder_version() -> str:
    """The version recorded with frame-folder frames: the layout and the Pillow that read them.

    Example:
        >>> frame_folder_decoder_version().startswith("frames 1, pillow ")
        True
    """
    return f"frames 1, pillow {PIL.__version__}"


def _check_fps(folder: str | os.PathLike[str], fps: Any) -> float:
    if isinstance(fps, bool) or not isinstance(fps, int | float) or not math.isfinite(fps):
        raise MissingFileError(folder, "is a folder of frames; set data.frames_fps to its fps")
    if fps <= 0:
        raise DecodeError(folder, f"frames_fps must be positive, not {fps}")
    return float(fps)


def frame_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The frame images of ``folder`` in play order (by the last number in each name).

    Raises :class:`~videorl_kit.media.errors.MissingFileError` when ``folder`` is not a
    folder, :class:`~videorl_kit.media.errors.NoFramesError` when it holds no frame image,
    and :class:`~videorl_kit.media.errors.DecodeError` when a frame has no number or two
    frames share one.

    Example:
        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> for name in ("img10.jpg", "img9.jpg", "img11.JPG", "groundtruth.txt"):
        ...     _ = (folder / name).write_bytes(b"")
        >>> [p.name for p in frame_files(folder)]
        ['img9.jpg', 'img10.jpg', 'img11.JPG']
    """
    root = Path(folder)
    if not root.is_dir():
        why = "does not exist" if not root.exists() else "is not a folder of frames"
        raise MissingFileError(root, why)
    numbered: dict[int, Path] = {}
    for entry in os.scandir(root):
        name = entry.name
        if name.startswith(".") or Path(name).suffix.lower() not in FRAME_SUFFIXES:
            continue
        if not entry.is_file():
            continue
        numbers = _NUMBER.findall(Path(name).stem)
        if not numbers:
            raise DecodeError(root, f"frame {name!r} has no number in its name to order it by")
        number = int(numbers[-1])
        if number in numbered:
            first, second = sorted([numbered[number].name, name])
            raise DecodeError(root, f"frames {first!r} and {second!r} share the number {number}")
        numbered[number] = Path(entry.path)
    if not numbered:
        suffixes = ", ".join(sorted(FRAME_SUFFIXES))
        raise NoFramesError(root, f"the folder holds no frame image ({suffixes})")
    return [numbered[number] for number in sorted(numbered)]


def frame_folder_hash(folder: str | os.PathLike[str], fps: float) -> str:
    """The content hash of a frame folder played at ``fps``: SHA-256 over the declared fps
    and every frame's name and bytes, in play order (64 hex digits).

    Example:
        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "1.png").write_bytes(b"x")
        >>> frame_folder_hash(folder, 30) == frame_folder_hash(folder, 30.0)
        True
        >>> frame_folder_hash(folder, 30) == frame_folder_hash(folder, 25)
        False
    """
    rate = _check_fps(folder, fps)
    digest = hashlib.sha256(f"{_HASH_LAYOUT}\nfps={rate!r}\n".encode())
    for path in frame_files(folder):
        digest.update(f"{path.name}\n{file_content_hash(path)}\n".encode())
    return digest.hexdigest()


def _read_frame(path: Path) -> np.ndarray:
    try:
        with Image.open(path) as opened:
            opened.load()
            return np.asarray(opened.convert("RGB"), dtype=np.uint8)
    except (PIL.UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        why = f"frame {path.name!r} is not a readable image ({exc})"
        raise DecodeError(path.parent, why) from None


def decode_frame_folder(folder: str | os.PathLike[str], budget: Any, *, fps: float) -> DecodedVideo:
    """Sample and resize the frames of ``folder`` played at ``fps``, as a video's would be.

    Frame ``i`` (in play order, from 0) is shown at ``i / fps`` seconds; the folder lasts
    ``frames / fps`` seconds. Only the sampled frames are read; each must have the size of
    the first (a folder is one video).

    Raises:
        MissingFileError, NoFramesError, DecodeError: see :func:`frame_files`; a sampled
            frame that cannot be read, or of another size, is a DecodeError.
        BudgetTooSmallError: the budget cannot hold these frames.
    """
    rate = _check_fps(folder, fps)
    files = frame_files(folder)
    params = as_video_budget(budget)
    n_frames = sample_count(folder, len(files), Fraction(rate), params)
    times = [Fraction(i) / Fraction(rate) for i in range(len(files))]
    chosen = select_frames(times, n_frames)
    first = _read_frame(files[0])
    source_h, source_w = first.shape[:2]
    out_h, out_w = output_size(folder, source_h, source_w, n_frames, params)
    frames = np.empty((n_frames, out_h, out_w, 3), dtype=np.uint8)
    resized: dict[int, np.ndarray] = {}
    for slot, index in enumerate(chosen):
        if index not in resized:
            pixels = first if index == 0 else _read_frame(files[index])
            if pixels.shape[:2] != (source_h, source_w):
                raise DecodeError(
                    folder,
                    f"frame {files[index].name!r} is {pixels.shape[1]}x{pixels.shape[0]}, "
                    f"the first frame {files[0].name!r} is {source_w}x{source_h}",
                )
            resized[index] = resize_frame(pixels, out_h, out_w)
        frames[slot] = resized[index]
    return DecodedVideo(
        path=os.fspath(folder),
        frames=frames,
        frame_indices=list(chosen),
        timestamps_s=[float(times[i]) for i in chosen],
        source_fps=rate,
        source_frames=len(files),
        duration_s=len(files) / rate,
        height=out_h,
        width=out_w,
        source_height=source_h,
        source_width=source_w,
        orientation="identity",
        decoder=FRAME_FOLDER_DECODER,
        decoder_version=frame_folder_decoder_version(),
    )
