"""One digest per ``frames`` row over the metadata that decides what a reader returns, and the
form of a cache key.

The stored bytes of a row are covered block by block (``frames_block_xxh3``), but how they are
turned into frames and what comes with them is metadata: the shape and codec, the block sizes
and checksums, the timing (``timestamps_s``, ``frame_indices``, ``source_fps``), the size, the
key and the inputs it is computed from. :func:`row_digest` is an XXH3-128 over all of it in one
fixed binary encoding (:data:`DIGEST_FIELDS`, in order), written at build time into the row's
``row_digest`` column (cache schema 6) and recomputed by
:class:`~videorl_kit.store.reader.FrameStore` from its in-memory index the first time it reads
the row with verification on. :func:`row_problem` adds the cheap consistency checks (one
timestamp, frame index and block per frame; height and width equal to the shape's) that hold
whatever the verification setting.

**Threat model.** The digests (this one and the block checksums) detect damage (bit rot, a
truncated or mixed-up file) and edits made outside the kit's code (a table updated with Lance
directly, a hand-edited row). They are not signatures: someone who edits a row on purpose can
recompute them, and no reader can tell. A store from someone you do not trust must be checked
against its sources (``videorl-kit cache verify --sample 0`` re-decodes every row and compares
frames and timing) or rebuilt from the sources.

Example:
    >>> row = {name: None for name, _ in DIGEST_FIELDS}
    >>> row.update(cache_key="ab" * 32, frames_shape=[1, 2, 2, 3], timestamps_s=[0.0])
    >>> digest = row_digest(row)
    >>> len(digest), digest == row_digest(dict(row, timestamps_s=[0.0]))
    (32, True)
    >>> digest == row_digest(dict(row, timestamps_s=[0.5]))
    False
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

CACHE_KEY_PATTERN: Final[re.Pattern[str]] = re.compile(r"[0-9a-f]{64}")
"""A cache key: the lowercase hex sha256 of its inputs (see
:func:`~videorl_kit.store.schema.cache_key`)."""

CACHE_KEY_REGEX: Final[str] = "^[0-9a-f]{64}$"
""":data:`CACHE_KEY_PATTERN` anchored, for Arrow's regex kernels."""

DIGEST_FIELDS: Final[tuple[tuple[str, str], ...]] = (
    ("cache_key", "str"),
    ("source_uri", "str"),
    ("source_content_hash", "str"),
    ("source_size", "int"),
    ("source_mtime_ns", "int"),
    ("modality", "str"),
    ("budget_hash", "str"),
    ("budget_json", "str"),
    ("decoder", "str"),
    ("decoder_version", "str"),
    ("sampler_version", "str"),
    ("cache_schema_version", "int"),
    ("frames_shape", "ints"),
    ("frames_codec", "str"),
    ("frames_chunk_sizes", "ints"),
    ("frames_sha256", "str"),
    ("frames_block_xxh3", "uints"),
    ("decode_warnings", "strs"),
    ("truncation", "str"),
    ("frame_indices", "ints"),
    ("timestamps_s", "floats"),
    ("source_fps", "float"),
    ("source_frames", "int"),
    ("duration_s", "float"),
    ("source_height", "int"),
    ("source_width", "int"),
    ("height", "int"),
    ("width", "int"),
    ("patch", "int"),
    ("temporal_patch", "int"),
    ("visual_tokens", "int"),
)
"""The columns :func:`row_digest` covers, in order, with their encoding. Every column of the
frames table except the frames bytes (covered by ``frames_block_xxh3``, which is in here),
the build's own statistics (``decode_seconds``, ``created_at``) and the digest itself."""

_TAG: Final[bytes] = b"videorl-kit frames row digest 1\0"
_NULL: Final[bytes] = b"n"
_ARRAY_TYPES: Final[dict[str, tuple[bytes, str]]] = {
    "ints": (b"I", "<i8"),
    "uints": (b"U", "<u8"),
    "floats": (b"F", "<f8"),
}


def _text(hasher: Any, value: str | bytes | np.ndarray) -> None:
    data = value.encode("utf-8") if isinstance(value, str) else value
    hasher.update(b"s" + struct.pack("<Q", len(data)))
    hasher.update(data)


def row_digest(values: Mapping[str, Any]) -> str:
    """XXH3-128 (32 hex digits) of a frames row's metadata: the ``row_digest`` column.

    ``values`` maps every name in :data:`DIGEST_FIELDS` to the row's value (a list or a 1-D
    numpy array for list columns; a string or its UTF-8 bytes, as ``bytes`` or a uint8 array,
    for a string column; None where the column is null). The same values give the same
    digest whatever container holds them, so the builder (Python values) and the reader
    (views of its index's Arrow buffers) agree.

    Example:
        >>> row = {name: None for name, _ in DIGEST_FIELDS}
        >>> a = row_digest(dict(row, frame_indices=[0, 4], source_fps=8.0))
        >>> a == row_digest(dict(row, frame_indices=np.array([0, 4]), source_fps=8.0))
        True
        >>> a == row_digest(dict(row, frame_indices=[0, 5], source_fps=8.0))
        False
    """
    hasher = xxhash.xxh3_128(_TAG)
    for name, kind in DIGEST_FIELDS:
        value = values[name]
        if value is None:
            hasher.update(_NULL)
        elif kind == "str":
            _text(hasher, value)
        elif kind == "int":
            hasher.update(b"i" + struct.pack("<q", int(value)))
        elif kind == "float":
            hasher.update(b"f" + struct.pack("<d", float(value)))
        elif kind == "strs":
            hasher.update(b"S" + struct.pack("<Q", len(value)))
            for text in value:
                _text(hasher, text)
        else:
            mark, dtype = _ARRAY_TYPES[kind]
            array = np.ascontiguousarray(value, dtype=dtype)
            hasher.update(mark + struct.pack("<Q", array.size))
            hasher.update(array)
    return hasher.hexdigest()


def is_cache_key(key: object) -> bool:
    """True when ``key`` has the form of a cache key (64 lowercase hex digits).

    Example:
        >>> is_cache_key("0f" * 32), is_cache_key("../../etc/x"), is_cache_key("0F" * 32)
        (True, False, False)
    """
    return isinstance(key, str) and CACHE_KEY_PATTERN.fullmatch(key) is not None


def shown_key(key: object, limit: int = 80) -> str:
    """A possibly hostile key as it is safe to print: ``repr`` (escapes control characters),
    cut to about ``limit`` characters.

    Example:
        >>> shown_key("../x\\x1b[2J")
        "'../x\\\\x1b[2J'"
    """
    text = repr(key)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_malformed_key(keys: pa.Array | pa.ChunkedArray) -> int | None:
    """The position of the first item of ``keys`` that is not a cache key (None: all are).

    Example:
        >>> first_malformed_key(pa.array(["0f" * 32, "../x", None])), first_malformed_key(
        ...     pa.array(["0f" * 32]))
        (1, None)
    """
    if len(keys) == 0:
        return None
    good = pc.match_substring_regex(keys, CACHE_KEY_REGEX).fill_null(False)
    if pc.all(good).as_py():
        return None
    return int(pc.index(good, False).as_py())


def malformed_key_problem(position: int, key: object) -> str:
    """What a store refusing a malformed key says about its row (the store and repair hint
    are added around it).

    Example:
        >>> malformed_key_problem(3, "../x")  # doctest: +ELLIPSIS
        "frames row 3 has cache key '../x', which is not a cache key (64 lowercase hex ..."
    """
    return (
        f"frames row {position} has cache key {shown_key(key)}, which is not a cache key (64 "
        "lowercase hex digits): the table was edited outside the kit, which names files after "
        "keys"
    )


def checked_cache_key(key: object) -> str:
    """``key`` when it has the form of a cache key; ``ValueError`` otherwise.

    Every place that builds a file name from a key goes through this, so a key from an edited
    store can never name a path outside the folder it is written into.

    Example:
        >>> checked_cache_key("0f" * 32) == "0f" * 32
        True
        >>> checked_cache_key("../../etc/passwd")
        Traceback (most recent call last):
        ...
        ValueError: '../../etc/passwd' is not a cache key (64 lowercase hex digits)
    """
    if not is_cache_key(key):
        raise ValueError(f"{shown_key(key)} is not a cache key (64 lowercase hex digits)")
    assert isinstance(key, str)
    return key


def row_problem(
    shape: Sequence[int],
    height: int,
    width: int,
    codec: str,
    n_timestamps: int,
    n_frame_indices: int,
    n_chunk_sizes: int,
    n_block_checksums: int,
) -> str | None:
    """Why a row's metadata cannot describe its frames (None when it is consistent).

    Cheap enough to run on every read: a shape that disagrees with the row's height and width
    (a transposed shape reshapes the right bytes into scrambled frames), or timing and block
    lists of another length than the frame count.

    Example:
        >>> row_problem([4, 84, 112, 3], 84, 112, "lz4", 4, 4, 4, 4) is None
        True
        >>> row_problem([4, 112, 84, 3], 84, 112, "none", 4, 4, 0, 4)
        'has frames_shape [4, 112, 84, 3] but height 84 and width 112'
    """
    dims = [int(s) for s in shape]
    if len(dims) != 4 or dims[3] != 3 or min(dims) < 1:
        return f"has frames_shape {dims}, not T×H×W×3 with every size at least 1"
    n, h, w, _ = dims
    if (h, w) != (int(height), int(width)):
        return f"has frames_shape {dims} but height {int(height)} and width {int(width)}"
    counts = {
        "timestamps_s": n_timestamps,
        "frame_indices": n_frame_indices,
        "frames_block_xxh3": n_block_checksums,
    }
    if codec == "lz4":
        counts["frames_chunk_sizes"] = n_chunk_sizes
    for name, count in counts.items():
        if count != n:
            return f"has {n} frames (frames_shape {dims}) but {count} {name}"
    return None
