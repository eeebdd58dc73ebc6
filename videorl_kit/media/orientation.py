"""Display orientation of video frames: read the display matrix, apply it to pixels.

Phones store portrait video as landscape frames plus a display matrix (or, in old files, a
``rotate`` metadata tag) saying how to turn them for display. We apply it like the ``ffmpeg``
command line's autorotate does, so frames come out the way a player shows them. (decord and
qwen-vl-utils' readers ignore it; see :mod:`videorl_kit.media.decoders.pyav`.)

The orientation is one of eight axis-aligned transforms, named after FFmpeg's filters.

Example:
    >>> import numpy as np
    >>> frame = np.arange(6, dtype=np.uint8).reshape(2, 3, 1)
    >>> apply_orientation(frame, "cclock")[:, :, 0]
    array([[2, 5],
           [1, 4],
           [0, 3]], dtype=uint8)
    >>> orientation_from_rotate_tag("90")
    'clock'
"""

from __future__ import annotations

import math
import struct
from typing import Literal

import numpy as np

__all__ = [
    "Orientation",
    "apply_orientation",
    "orientation_from_display_matrix",
    "orientation_from_rotate_tag",
    "swaps_axes",
]

Orientation = Literal[
    "identity", "clock", "cclock", "clock_flip", "cclock_flip", "hflip", "vflip", "rotate180"
]
"""``clock``/``cclock``: rotate 90 degrees clockwise/counter-clockwise; ``*_flip``: that rotation
then a vertical flip (``cclock_flip`` is a transpose); ``rotate180`` = both flips."""

_MATRIX = struct.Struct("<9i")


def orientation_from_display_matrix(matrix: bytes | tuple[int, ...] | None) -> Orientation:
    """Return the orientation that FFmpeg's autorotate applies for a display matrix.

    ``matrix`` is the 36-byte ``AV_FRAME_DATA_DISPLAYMATRIX`` side data (nine little-endian
    int32, 16.16 fixed point) or the nine integers. Rotations that are not a multiple of
    90 degrees are rounded to the nearest multiple.

    Example:
        >>> m = (0, -65536, 0, 65536, 0, 0, 0, 0, 1 << 30)   # 90 degrees counter-clockwise
        >>> orientation_from_display_matrix(m)
        'cclock'
        >>> orientation_from_display_matrix(None)
        'identity'
    """
    if matrix is None:
        return "identity"
    values = _MATRIX.unpack(matrix) if isinstance(matrix, bytes | bytearray) else tuple(matrix)
    if len(values) != 9:
        raise ValueError(f"a display matrix has 9 entries, got {len(values)}")
    m0, m1, _, m3, m4 = values[:5]
    scale0 = math.hypot(m0, m3)
    scale1 = math.hypot(m1, m4)
    if scale0 == 0 or scale1 == 0:
        return "identity"
    # av_display_rotation_get() is counter-clockwise; ffmpeg turns it into a clockwise theta
    ccw = -math.degrees(math.atan2(m1 / scale1, m0 / scale0))
    theta = -round(ccw)
    theta = (round(theta / 90) * 90) % 360
    if theta == 90:
        return "cclock_flip" if m3 > 0 else "clock"
    if theta == 180:
        if m0 < 0 and m4 < 0:
            return "rotate180"
        if m0 < 0:
            return "hflip"
        return "vflip" if m4 < 0 else "identity"
    if theta == 270:
        return "clock_flip" if m3 < 0 else "cclock"
    return "vflip" if m4 < 0 else "identity"


def orientation_from_rotate_tag(tag: str | None) -> Orientation:
    """Return the orientation for a legacy ``rotate`` stream tag (degrees clockwise).

    Example:
        >>> orientation_from_rotate_tag("270"), orientation_from_rotate_tag(None)
        ('cclock', 'identity')
    """
    if not tag:
        return "identity"
    try:
        degrees = round(float(tag) / 90) * 90 % 360
    except ValueError:
        return "identity"
    return {0: "identity", 90: "clock", 180: "rotate180", 270: "cclock"}[degrees]


def swaps_axes(orientation: Orientation) -> bool:
    """Whether the orientation exchanges width and height.

    Example:
        >>> swaps_axes("clock"), swaps_axes("hflip")
        (True, False)
    """
    return orientation in ("clock", "cclock", "clock_flip", "cclock_flip")


def apply_orientation(frame: np.ndarray, orientation: Orientation) -> np.ndarray:
    """Return ``frame`` (H, W, C) turned for display (a view when possible).

    Example:
        >>> import numpy as np
        >>> frame = np.arange(4, dtype=np.uint8).reshape(2, 2, 1)
        >>> apply_orientation(frame, "hflip")[:, :, 0].tolist()
        [[1, 0], [3, 2]]
    """
    if orientation == "identity":
        return frame
    if orientation == "clock":
        return np.rot90(frame, k=-1)
    if orientation == "cclock":
        return np.rot90(frame, k=1)
    if orientation == "cclock_flip":
        return frame.transpose(1, 0, 2)
    if orientation == "clock_flip":
        return np.rot90(frame, k=2).transpose(1, 0, 2)
    if orientation == "hflip":
        return frame[:, ::-1]
    if orientation == "vflip":
        return frame[::-1]
    if orientation == "rotate180":
        return frame[::-1, ::-1]
    raise ValueError(f"unknown orientation {orientation!r}")
