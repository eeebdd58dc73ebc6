"""Content hashes of media files, the source half of a cache key.

Example:
    >>> import os, tempfile
    >>> with tempfile.NamedTemporaryFile(delete=False) as f:
    ...     _ = f.write(b"abc")
    >>> file_content_hash(f.name)[:16]
    'ba7816bf8f01cfea'
    >>> os.remove(f.name)
"""

from __future__ import annotations

import hashlib
import os

from videorl_kit.core.spec_files import special_file_kind
from videorl_kit.media.errors import MissingFileError

__all__ = ["file_content_hash", "not_a_regular_file"]

_CHUNK = 1 << 20


def not_a_regular_file(path: str | os.PathLike[str], *, folder_ok: bool = False) -> str | None:
    """Why ``path`` is not a file the kit may read as media (None when it is one, or when it
    cannot be stat'ed: whoever opens it reports that).

    A FIFO, socket or device (``/dev/zero``, ``/dev/urandom``) is never read: reading one
    blocks or never ends. The wording is the one ``validate`` and ``build-cache`` use for the
    same paths (:func:`~videorl_kit.core.spec_files.special_file_kind`). A folder is accepted
    only with ``folder_ok`` (a video stored as numbered frames).

    Example:
        >>> not_a_regular_file("/dev/zero")
        'is not a regular file (a character device)'
        >>> not_a_regular_file("/"), not_a_regular_file("/", folder_ok=True)
        ('is not a regular file (a folder)', None)
    """
    try:
        kind = special_file_kind(os.stat(path).st_mode)
    except (OSError, ValueError):
        return None
    if kind is None or (folder_ok and kind == "a folder"):
        return None
    return f"is not a regular file ({kind})"


def file_content_hash(path: str | os.PathLike[str]) -> str:
    """Return the SHA-256 of the file's bytes as 64 hex digits, reading 1 MiB at a time.

    Only a regular file is read: the file is opened without blocking and checked through
    its descriptor, so a FIFO or device (even one swapped in after a check) is refused
    instead of read forever.

    Raises:
        MissingFileError: the path does not exist or is not a regular file.

    Example:
        >>> file_content_hash("/no/such/file.mp4")
        Traceback (most recent call last):
        ...
        videorl_kit.media.errors.MissingFileError: /no/such/file.mp4: file does not exist
        >>> file_content_hash("/dev/urandom")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.media.errors.MissingFileError: /dev/urandom: not a regular file (a ...)
    """
    digest = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise MissingFileError(path, "file does not exist") from None
    except IsADirectoryError:
        raise MissingFileError(path, "path is a directory, not a file") from None
    kind = special_file_kind(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        if kind == "a folder":
            raise MissingFileError(path, "path is a directory, not a file")
        raise MissingFileError(path, f"not a regular file ({kind})")
    with open(fd, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
