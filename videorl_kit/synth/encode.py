"""Write rendered frames as H.264 mp4 clips (PyAV) and PNG stills, reproducibly.

Fixed settings make the output byte-identical for identical frames: libx264 with one
thread, CRF 16, preset ``veryfast``, no B-frames, a keyframe every ``2 * fps`` frames,
yuv420p tagged as BT.601 (SMPTE 170M) limited range, frame ``i`` at pts ``i`` with
time base ``1/fps``, and the muxer in bit-exact mode (no encoder-version string).
Files are written to a temporary name and renamed, so a crash never leaves half a clip.

Example:
    >>> import numpy as np, tempfile, pathlib
    >>> frames = [np.zeros((32, 48, 3), dtype=np.uint8)] * 4
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "clip.mp4"
    >>> write_mp4(path, frames, fps=8)
    >>> path.stat().st_size > 0
    True
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from av.video.reformatter import ColorRange, Colorspace, Interpolation, VideoReformatter
from PIL import Image

#: Everything that decides the encoded bytes besides the frames themselves.
ENCODER_SETTINGS: dict[str, str] = {
    "codec": "libx264",
    "pix_fmt": "yuv420p",
    "crf": "16",
    "preset": "veryfast",
    "bframes": "0",
    "threads": "1",
    "colorspace": "smpte170m",
    "color_range": "tv",
}

_SMPTE170M = 6  # value of AVCOL_SPC/AVCOL_PRI/AVCOL_TRC for SMPTE 170M (BT.601)
_RANGE_MPEG = 1  # AVCOL_RANGE_MPEG: limited ("tv") range


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp{os.getpid()}")


def write_mp4(path: str | Path, frames: Iterable[np.ndarray], *, fps: int) -> None:
    """Encode RGB uint8 frames (all ``H x W x 3``, even H and W) into an mp4 at ``path``.

    Raises ValueError for an empty frame list or frames of the wrong shape.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "grey.mp4"
        >>> write_mp4(path, [np.full((16, 16, 3), 128, np.uint8)] * 8, fps=8)
        >>> import av; av.open(str(path)).streams.video[0].frames
        8
    """
    path = Path(path)
    tmp = _temporary(path)
    reformatter = VideoReformatter()
    interpolation = Interpolation.BILINEAR | Interpolation.ACCURATE_RND | Interpolation.BITEXACT
    n_written = 0
    try:
        with av.open(str(tmp), "w", format="mp4", options={"fflags": "+bitexact"}) as container:
            stream = container.add_stream(
                ENCODER_SETTINGS["codec"],
                rate=fps,
                options={
                    "crf": ENCODER_SETTINGS["crf"],
                    "preset": ENCODER_SETTINGS["preset"],
                    "bf": ENCODER_SETTINGS["bframes"],
                    "g": str(2 * fps),
                    "threads": ENCODER_SETTINGS["threads"],
                    "flags": "+bitexact",
                },
            )
            stream.codec_context.time_base = Fraction(1, fps)
            stream.pix_fmt = ENCODER_SETTINGS["pix_fmt"]
            stream.codec_context.colorspace = _SMPTE170M
            stream.codec_context.color_primaries = _SMPTE170M
            stream.codec_context.color_trc = _SMPTE170M
            stream.codec_context.color_range = _RANGE_MPEG
            for index, rgb in enumerate(frames):
                if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
                    raise ValueError(f"frame {index}: expected H x W x 3 uint8, got {rgb.shape}")
                if index == 0:
                    stream.height, stream.width = rgb.shape[:2]
                frame = reformatter.reformat(
                    av.VideoFrame.from_ndarray(rgb, format="rgb24"),
                    format="yuv420p",
                    dst_colorspace=Colorspace.SMPTE170M,
                    dst_color_range=ColorRange.MPEG,
                    interpolation=interpolation,
                    threads=1,
                )
                frame.pts = index
                container.mux(stream.encode(frame))
                n_written += 1
            if n_written == 0:
                raise ValueError(f"{path}: no frames to encode")
            container.mux(stream.encode(None))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_png(path: str | Path, frame: np.ndarray) -> None:
    """Save one RGB uint8 frame as a PNG (no timestamps or metadata, so reproducible).

    Example:
        >>> import numpy as np, tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "still.png"
        >>> write_png(path, np.zeros((8, 8, 3), dtype=np.uint8))
        >>> path.read_bytes()[:4]
        b'\\x89PNG'
    """
    path = Path(path)
    tmp = _temporary(path)
    try:
        Image.fromarray(frame, mode="RGB").save(tmp, format="PNG")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
