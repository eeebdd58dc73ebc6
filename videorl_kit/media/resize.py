"""Resizing uint8 RGB video frames without torch, matching qwen-vl-utils' pixels.

qwen-vl-utils resizes video frames with torchvision (bicubic, antialias) on uint8 tensors:
torchvision converts to float, filters, then rounds and clamps to 0..255. Pillow's
antialiased bicubic filter is the one torchvision's was written to match, but Pillow's
*uint8* path clips to 0..255 between its horizontal and vertical passes, which moves
pixels next to saturated hard edges by up to ~20 levels. So each channel is resized as a
32-bit float image ("F" mode) and rounded and clamped once at the end, like torchvision:
the result is within 1 level of qwen-vl-utils (tested), with the same output size (both
come from ``smart_resize``). Only one source frame is held in float at a time.

Images are different: qwen-vl-utils resizes them with Pillow's uint8 bicubic, and
:func:`~videorl_kit.media.decode.decode_image` does the same, bit for bit.

Example:
    >>> import numpy as np
    >>> frame = np.zeros((240, 320, 3), dtype=np.uint8)
    >>> resize_frame(frame, 112, 140).shape
    (112, 140, 3)
"""

from __future__ import annotations

import numpy as np
from PIL import Image

__all__ = ["resize_frame"]


def resize_frame(frame: np.ndarray, height: int, width: int) -> np.ndarray:
    """Return ``frame`` (H, W, 3 uint8) resized to ``height x width`` (bicubic, antialias).

    Returns the input unchanged when it already has that size.

    Example:
        >>> import numpy as np
        >>> resize_frame(np.full((10, 10, 3), 7, np.uint8), 28, 28)[0, 0].tolist()
        [7, 7, 7]
    """
    if frame.shape[0] == height and frame.shape[1] == width:
        return frame
    out = np.empty((height, width, frame.shape[2]), dtype=np.uint8)
    for channel in range(frame.shape[2]):
        plane = Image.fromarray(np.ascontiguousarray(frame[:, :, channel], dtype=np.float32))
        resized = np.asarray(plane.resize((width, height), Image.Resampling.BICUBIC))
        out[:, :, channel] = np.clip(np.round(resized), 0, 255)
    return out
