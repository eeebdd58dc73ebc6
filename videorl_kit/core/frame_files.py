"""Which files in a folder of frames are frames (shared by the data readers and the decoder).

Example:
    >>> ".jpg" in FRAME_SUFFIXES, ".txt" in FRAME_SUFFIXES
    (True, False)
"""

from __future__ import annotations

FRAME_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"})
"""File suffixes (any case) read as frames; other files in the folder are ignored."""
