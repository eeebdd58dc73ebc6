"""Byte-level evidence that a media file was cut short, read from the container's own structure.

FFmpeg decodes whatever prefix of a cut file it can and stops quietly at the cut: a cut Ogg,
Matroska, MPEG program or transport stream yields fewer frames and no error, and for most of
them FFmpeg even reports a duration measured from the frames it found. Headers do not help
either: Ogg and MPEG streams declare no length, and FFmpeg does not give a Matroska segment's
declared duration to the video stream. The containers themselves do say where things end:

* **Ogg**: every page gives its own length, and a finished stream's last page carries the
  end-of-stream flag. A file that ends inside a page, or whose last page has no such flag, was
  cut (or its writer never finished it).
* **Matroska / WebM**: the segment and each element in it give their size in bytes (except
  live streams, whose sizes are "unknown": nothing can be said of those).
* **RIFF (AVI)**, **MP4 / MOV**: each top-level chunk or box gives its size.
* **MPEG program stream**: each packet after a pack header gives its length.
* **MPEG transport stream**: the file is a whole number of 188-byte packets.

What cannot be seen: an MPEG stream cut exactly between two packets (it declares no length and
needs no end code), a live Matroska stream cut between two elements of unknown size, a cut in
the first few dozen bytes (the decoder refuses such a file anyway).

:func:`cut_short` checks these and returns why the file looks cut, or ``None`` when it looks
whole or its structure says nothing (an unknown format, a live Matroska stream). It reads a
few headers and at most the last 256 KiB of the file: fast on any size.

Example:
    >>> import tempfile
    >>> path = tempfile.mkdtemp() + "/clip.ts"
    >>> with open(path, "wb") as f:
    ...     _ = f.write((b"\\x47" + bytes(187)) * 3 + b"\\x47" + bytes(99))
    >>> cut_short(path)
    'its last 188-byte transport packet has only 100 bytes'
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from typing import BinaryIO

__all__ = ["cut_short"]

TAIL_BYTES = 256 * 1024
"""How much of a file's end the Ogg and MPEG-PS checks read (an Ogg page is at most 65,307
bytes; MPEG-PS packs are far smaller)."""

_MP4_BOXES = frozenset({b"ftyp", b"moov", b"mdat", b"free", b"wide", b"skip", b"pnot", b"uuid"})
_MAX_STEPS = 1_000_000  # a bound on element walks, against malformed sizes


def _read_at(f: BinaryIO, offset: int, n: int) -> bytes:
    f.seek(offset)
    return f.read(n)


# -- Ogg -----------------------------------------------------------------------------------


def _ogg(f: BinaryIO, size: int) -> str | None:
    start = max(0, size - TAIL_BYTES)
    tail = _read_at(f, start, size - start)
    pos = tail.rfind(b"OggS")
    while pos >= 0:  # from the end: the last complete page
        header = tail[pos : pos + 27]
        if len(header) == 27 and header[4] == 0:
            segments = tail[pos + 27 : pos + 27 + header[26]]
            end = start + pos + 27 + header[26] + sum(segments)
            if len(segments) == header[26] and end <= size:
                if end < size:
                    return f"it ends inside the Ogg page that starts at byte {end}"
                if header[5] & 0x04:
                    return None
                return (
                    "its last Ogg page does not end the stream (no end-of-stream flag): the "
                    "file stops at a page boundary before its end"
                )
        pos = tail.rfind(b"OggS", 0, pos)
    return None


# -- Matroska / WebM ---------------------------------------------------------------------------


def _vint(f: BinaryIO, *, keep_marker: bool) -> tuple[int, int] | None:
    """An EBML variable-length integer at the file position: ``(value, length)``; value -1
    means "unknown size"; None at the end of the file or for an invalid first byte."""
    first = f.read(1)
    if not first:
        return None
    b = first[0]
    length = 1
    while length <= 8 and not b & (0x80 >> (length - 1)):
        length += 1
    if length > 8:
        return None
    rest = f.read(length - 1)
    if len(rest) < length - 1:
        return None
    value = b if keep_marker else b & (0xFF >> length)
    for byte in rest:
        value = (value << 8) | byte
    if not keep_marker and value == (1 << (7 * length)) - 1:
        return -1, length
    return value, length


_MATROSKA_NAMES = {
    0x18538067: "segment",
    0x1F43B675: "cluster",
    0x1C53BB6B: "cues",
    0x1549A966: "segment info",
    0x1654AE6B: "tracks",
    0x114D9B74: "seek head",
    0x1254C367: "tags",
}


def _matroska(f: BinaryIO, size: int) -> str | None:
    pos, steps = 0, 0
    inside_segment = False
    while pos < size and steps < _MAX_STEPS:
        steps += 1
        f.seek(pos)
        element = _vint(f, keep_marker=True)
        length = _vint(f, keep_marker=False) if element else None
        if element is None or length is None:
            return f"it ends inside the header of the Matroska element at byte {pos}"
        data = pos + element[1] + length[1]
        if length[0] < 0:  # unknown size: only a segment's children can be walked
            if element[0] == 0x18538067 and not inside_segment:
                inside_segment, pos = True, data
                continue
            return None
        end = data + length[0]
        if end > size:
            what = _MATROSKA_NAMES.get(element[0], f"element 0x{element[0]:X}")
            return (
                f"the Matroska {what} at byte {pos} declares {length[0]} bytes; the file "
                f"ends {end - size} bytes early"
            )
        pos = end
    return None


# -- RIFF, MP4 -----------------------------------------------------------------------------


def _riff(f: BinaryIO, size: int) -> str | None:
    pos = 0
    for _ in range(_MAX_STEPS):
        if pos >= size:
            return None
        header = _read_at(f, pos, 8)
        if len(header) < 8:
            return f"it ends inside the header of the RIFF chunk at byte {pos}"
        (length,) = struct.unpack("<I", header[4:])
        end = pos + 8 + length
        if end > size:
            return (
                f"the RIFF chunk {header[:4].decode('latin-1')!r} at byte {pos} declares "
                f"{length} bytes; the file ends {end - size} bytes early"
            )
        pos = end + (length & 1 if end < size else 0)  # chunks are padded to even sizes
    return None


def _mp4(f: BinaryIO, size: int) -> str | None:
    pos = 0
    for _ in range(_MAX_STEPS):
        if pos >= size:
            return None
        header = _read_at(f, pos, 16)
        if len(header) < 8:
            return f"it ends inside the header of the MP4 box at byte {pos}"
        (length,) = struct.unpack(">I", header[:4])
        if length == 0:  # the box runs to the end of the file
            return None
        if length == 1:
            if len(header) < 16:
                return f"it ends inside the header of the MP4 box at byte {pos}"
            (length,) = struct.unpack(">Q", header[8:16])
        if length < 8:
            return None  # not a box structure this check understands
        end = pos + length
        if end > size:
            return (
                f"the MP4 box {header[4:8].decode('latin-1')!r} at byte {pos} declares "
                f"{length} bytes; the file ends {end - size} bytes early"
            )
        pos = end
    return None


# -- MPEG program and transport streams -------------------------------------------------------


def _mpeg_ps(f: BinaryIO, size: int) -> str | None:
    start = max(0, size - TAIL_BYTES)
    tail = _read_at(f, start, size - start)
    pos = tail.rfind(b"\x00\x00\x01\xba")
    if pos < 0:
        return None
    while pos < len(tail):
        if tail[pos : pos + 3] != b"\x00\x00\x01" or pos + 4 > len(tail):
            if len(tail) - pos < 4 and b"\x00\x00\x01".startswith(tail[pos : pos + 3]):
                return f"it ends inside the MPEG-PS packet at byte {start + pos}"
            return None  # not at a start code: nothing to conclude
        code = tail[pos + 3]
        if code == 0xB9:  # program end code
            return None
        if code == 0xBA:
            if pos + 14 > len(tail):
                return f"it ends inside the MPEG-PS pack header at byte {start + pos}"
            mpeg2 = tail[pos + 4] & 0xC0 == 0x40
            length = 14 + (tail[pos + 13] & 0x07) if mpeg2 else 12
        elif code >= 0xBB:
            if pos + 6 > len(tail):
                return f"it ends inside the MPEG-PS packet at byte {start + pos}"
            length = 6 + struct.unpack(">H", tail[pos + 4 : pos + 6])[0]
        else:
            return None
        if pos + length > len(tail):
            missing = pos + length - len(tail)
            return (
                f"the MPEG-PS packet at byte {start + pos} declares {length} bytes; the file "
                f"ends {missing} bytes early"
            )
        pos += length
    return None


def _mpeg_ts(size: int) -> str | None:
    left = size % 188
    if left:
        return f"its last 188-byte transport packet has only {left} bytes"
    return None


def _checker(head: bytes, f: BinaryIO) -> Callable[[BinaryIO, int], str | None] | None:
    if head.startswith(b"OggS"):
        return _ogg
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return _matroska
    if head.startswith(b"RIFF"):
        return _riff
    if head[4:8] in _MP4_BOXES:
        return _mp4
    if head.startswith(b"\x00\x00\x01\xba"):
        return _mpeg_ps
    if head[:1] == b"\x47" and _read_at(f, 188, 1) == b"\x47" and _read_at(f, 376, 1) == b"\x47":
        return lambda _, size: _mpeg_ts(size)
    return None


def cut_short(path: str | os.PathLike[str]) -> str | None:
    """Why the media file at ``path`` looks cut short, or ``None`` (see the module notes).

    Never raises for unreadable or unknown content: that is the decoder's business.

    Example:
        >>> import tempfile
        >>> path = tempfile.mkdtemp() + "/clip.avi"
        >>> with open(path, "wb") as f:
        ...     _ = f.write(b"RIFF" + (1000).to_bytes(4, "little") + b"AVI " + bytes(92))
        >>> cut_short(path)
        "the RIFF chunk 'RIFF' at byte 0 declares 1000 bytes; the file ends 904 bytes early"
    """
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(16)
            check = _checker(head, f)
            return check(f, size) if check is not None else None
    except OSError:
        return None
