"""What a spec file may be: a regular file of at most 1 MiB of UTF-8 plain-data YAML.

These rules are shared by the spec loader and by the Hub code that downloads spec files,
so they live below both. :func:`read_spec_file` never reads more than the limit (an endless
file such as ``/dev/zero`` costs at most 1 MiB), never opens a device, FIFO or socket, and
its error messages name the kind of problem and the byte offset, never the file's text.

Example:
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.yaml"
    >>> _ = p.write_text("id: a\\n")
    >>> read_spec_file(p)
    'id: a\\n'
    >>> try:
    ...     read_spec_file(p.parent)
    ... except UnreadableSpecFile as exc:
    ...     print(exc)
    not a regular file (a folder)
"""

from __future__ import annotations

import os
import stat

from videorl_kit.core.errors import VideoRLKitError

#: Largest spec file read (each include counts on its own); real specs are a few kilobytes.
MAX_SPEC_BYTES = 1 << 20

#: YAML tags a spec may use: plain JSON-like data (timestamps appear implicitly for dates).
SAFE_YAML_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")
)

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class UnreadableSpecFile(VideoRLKitError):
    """A spec file that is missing, special, too large or not UTF-8 (message: the reason)."""


def special_file_kind(mode: int) -> str | None:
    """What a ``st_mode`` describes if it is not a regular file (None for a regular file).

    Example:
        >>> import os, stat
        >>> special_file_kind(os.stat("/dev/null").st_mode), special_file_kind(stat.S_IFREG)
        ('a character device', None)
    """
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def read_spec_file(path: str | os.PathLike[str], limit: int = MAX_SPEC_BYTES) -> str:
    """Read a spec file as UTF-8 text, refusing special files and anything over ``limit`` bytes.

    Raises :class:`UnreadableSpecFile` whose message is the reason only (callers add the
    file name). The file is checked before it is opened (no device is ever opened) and again
    through the open descriptor (no swap in between), and at most ``limit + 1`` bytes are read.

    Example:
        >>> try:
        ...     read_spec_file("/dev/zero")
        ... except UnreadableSpecFile as exc:
        ...     print(exc)
        not a regular file (a character device)
    """
    try:
        kind = special_file_kind(os.stat(path).st_mode)
        if kind is not None:
            raise UnreadableSpecFile(_not_regular(kind))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UnreadableSpecFile("file not found") from None
    except OSError as exc:
        raise UnreadableSpecFile(_os_reason(exc)) from None
    try:
        kind = special_file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise UnreadableSpecFile(_not_regular(kind))
        data = _read_at_most(fd, limit + 1)
    except OSError as exc:
        raise UnreadableSpecFile(_os_reason(exc)) from None
    finally:
        os.close(fd)
    return decode_spec_bytes(data, limit)


def decode_spec_bytes(data: bytes, limit: int = MAX_SPEC_BYTES) -> str:
    """The text of a spec file's bytes; raises :class:`UnreadableSpecFile` if too long or not UTF-8.

    Example:
        >>> decode_spec_bytes(b"id: a\\n")
        'id: a\\n'
        >>> try:
        ...     decode_spec_bytes(b"\\xff")
        ... except UnreadableSpecFile as exc:
        ...     print(exc)
        not UTF-8 text (invalid start byte at byte 0)
    """
    if len(data) > limit:
        raise UnreadableSpecFile(f"larger than {limit} bytes, the limit for a spec file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableSpecFile(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _os_reason(exc: OSError) -> str:
    return f"cannot read file ({exc.strerror or type(exc).__name__})"


def _not_regular(kind: str) -> str:
    return kind if kind == "not a regular file" else f"not a regular file ({kind})"


def _read_at_most(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
