"""Errors raised for media that cannot be read, each naming the file and what went wrong.

Every error is a :class:`MediaError` with ``path`` and ``reason`` attributes; ``str(err)`` is
``"<path>: <reason>"``. The class names say what happened, so a cache builder can record
``type(err).__name__`` as the failure class. All errors pickle (they cross process pools).

Example:
    >>> err = EmptyFileError("clips/a.mp4", "file is empty (0 bytes)")
    >>> str(err)
    'clips/a.mp4: file is empty (0 bytes)'
    >>> isinstance(err, MediaError), err.path, err.reason
    (True, 'clips/a.mp4', 'file is empty (0 bytes)')
"""

from __future__ import annotations

import os

from videorl_kit.core.errors import VideoRLKitError

__all__ = [
    "BudgetTooSmallError",
    "DecodeError",
    "DecoderUnavailableError",
    "EmptyFileError",
    "MediaError",
    "MissingFileError",
    "NoFramesError",
    "NoVideoStreamError",
    "NotAVideoError",
    "NotAnImageError",
    "TruncatedVideoError",
]


class MediaError(VideoRLKitError):
    """A media file could not be read or sampled; ``path`` and ``reason`` say which and why.

    Example:
        >>> raise MediaError("x.mp4", "something went wrong")
        Traceback (most recent call last):
        ...
        videorl_kit.media.errors.MediaError: x.mp4: something went wrong
    """

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = os.fspath(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __reduce__(self) -> tuple[type[MediaError], tuple[str, str]]:
        return (type(self), (self.path, self.reason))


class MissingFileError(MediaError):
    """The path does not exist."""


class EmptyFileError(MediaError):
    """The file exists but has zero bytes."""


class NotAVideoError(MediaError):
    """FFmpeg cannot open the file as a media container (e.g. a text file named ``.mp4``)."""


class NoVideoStreamError(MediaError):
    """The container opens but has no video stream (e.g. an audio-only file)."""


class NoFramesError(MediaError):
    """The container has a video stream but not a single decodable frame."""


class TruncatedVideoError(MediaError):
    """The file ends early: its index is missing or fewer frames exist than it declares."""


class DecodeError(MediaError):
    """The decoder failed on data inside the stream (corrupt packets, unsupported codec)."""


class NotAnImageError(MediaError):
    """The file is not an image Pillow can read, or it is damaged."""


class BudgetTooSmallError(MediaError):
    """The pixel budget cannot represent the frame (aspect ratio over 200, side of 0 px)."""


class DecoderUnavailableError(VideoRLKitError, ImportError):
    """An optional decoder backend was requested but is not installed or cannot load.

    Not a :class:`MediaError`: it concerns the environment, not a file, and should stop a
    build rather than be recorded per item.

    Example:
        >>> raise DecoderUnavailableError("decoder 'x' is unknown")
        Traceback (most recent call last):
        ...
        videorl_kit.media.errors.DecoderUnavailableError: decoder 'x' is unknown
    """
