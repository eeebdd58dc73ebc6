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

from videorl_kit.media.errors import MissingFileError

__all__ = ["file_content_hash"]

_CHUNK = 1 << 20


def file_content_hash(path: str | os.PathLike[str]) -> str:
    """Return the SHA-256 of the file's bytes as 64 hex digits, reading 1 MiB at a time.

    Raises:
        MissingFileError: the path does not exist or is not a regular file.

    Example:
        >>> file_content_hash("/no/such/file.mp4")
        Traceback (most recent call last):
        ...
        videorl_kit.media.errors.MissingFileError: /no/such/file.mp4: file does not exist
    """
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except FileNotFoundError:
        raise MissingFileError(path, "file does not exist") from None
    except IsADirectoryError:
        raise MissingFileError(path, "path is a directory, not a file") from None
    return digest.hexdigest()
