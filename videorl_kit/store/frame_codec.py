"""Lossless storage of a frames cell: LZ4 per frame where it pays, raw bytes elsewhere.

A cell holds the uint8 frames ``(T, H, W, 3)`` of one media item. :func:`encode_frames`
compresses each frame on its own with the LZ4 block format and keeps the compressed block
only when it is at least :data:`MIN_SAVING` smaller than the frame; otherwise the frame's
raw bytes are stored. A cell in which no frame compresses is stored exactly as before
(codec ``"none"``, the plain C-order bytes), so reading it stays a single ``preadv``
straight into the output array.

Why LZ4 and why per frame (measured on this 2-core machine, page cache, resized frames
of the benchmark's real and synthetic videos):

* LZ4 shrank real videos' frames to 0.50-0.93 of their size (0.66 overall) and
  decompressed at ~2.3 GB/s on one core, ~3.2 GB/s with two threads; zstd level 1 saved
  more (0.59) but decompressed at 0.5-0.7 GB/s, far below the ~5 GB/s of a raw read.
* Frames of noise-like content (the benchmark's synthetic videos) do not compress with
  LZ4 at all (1.004: slightly larger); only an entropy coder gains there (zstd: 0.93),
  at a tenth of raw read speed. Such frames are stored raw.
* Independent per-frame blocks let a multi-frame cell decompress on several threads
  (cramjam releases the GIL), one contiguous run of frames each, directly into the output
  array with no intermediate copy: ~3.4 GB/s with two threads, against ~2.1 on one.

``frames_sha256`` is always the hash of the *decoded* frames, so ``cache verify`` checks
the decompression too. ``frames_xxh3`` (:func:`cell_checksum`) is the fast hash of the stored
cell itself, which every read checks before decoding: XXH3-64 runs at several GB/s on one
core, so checking costs a fraction of reading (the figures are in ``benchmarks/``).

Example:
    >>> import numpy as np
    >>> frames = np.zeros((2, 4, 4, 3), dtype=np.uint8)
    >>> encoded = encode_frames(frames)
    >>> encoded.codec, len(encoded.payload) < frames.nbytes, len(encoded.chunk_sizes)
    ('lz4', True, 2)
    >>> back = decode_frames(np.frombuffer(encoded.payload, dtype=np.uint8), frames.shape,
    ...                      encoded.codec, encoded.chunk_sizes)
    >>> bool((back == frames).all())
    True
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final

import cramjam
import numpy as np
import xxhash

from videorl_kit.core.errors import VideoRLKitError

CODEC_NONE: Final[str] = "none"
"""The cell is the frames' raw C-order bytes."""
CODEC_LZ4: Final[str] = "lz4"
"""The cell is T blocks, one per frame: an LZ4 block, or the raw frame when its stored size
equals the frame's size (an LZ4 block is only kept when it is smaller)."""
CODECS: Final[tuple[str, ...]] = (CODEC_NONE, CODEC_LZ4)

MIN_SAVING: Final[float] = 0.40
"""A frame is stored compressed only if that saves at least this fraction of its bytes.
Decompressing runs at ~2.6 GB/s a core here against ~6 GB/s for reading raw bytes from the
page cache, so a small saving costs more read time than the disk it frees is worth. On the
benchmark's real videos, 40% keeps 43% of the frames compressed: the frames table is 0.19
of float32 (0.17 with 20%) and cached reads run at 0.64 of raw reads (0.51 with 20%)."""

PARALLEL_MIN_BYTES: Final[int] = 1 << 20
"""Cells at least this large decompress their frames on a thread pool."""

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


class FrameCodecError(VideoRLKitError, ValueError):
    """A stored cell does not decode to the frames its row describes."""


def cell_checksum(cell: bytes | np.ndarray) -> int:
    """XXH3-64 of a stored cell's bytes: the ``frames_xxh3`` column, checked on every read.

    Example:
        >>> import numpy as np
        >>> cell_checksum(b"abc") == cell_checksum(np.frombuffer(b"abc", dtype=np.uint8))
        True
        >>> cell_checksum(b"abc") == cell_checksum(b"abd")
        False
    """
    return xxhash.xxh3_64_intdigest(cell)


@dataclass(frozen=True)
class EncodedFrames:
    """A cell ready to store: ``codec``, the ``payload`` bytes and per-frame block sizes."""

    codec: str
    payload: bytes
    chunk_sizes: list[int]

    @property
    def checksum(self) -> int:
        """:func:`cell_checksum` of the payload."""
        return cell_checksum(self.payload)


def encode_frames(frames: np.ndarray, *, min_saving: float = MIN_SAVING) -> EncodedFrames:
    """Encode uint8 frames ``(T, ...)`` losslessly for the frames column.

    Frames that LZ4 shrinks by at least ``min_saving`` are stored compressed, the others
    raw; with none compressed the cell is the plain bytes (codec ``"none"``).

    Example:
        >>> import numpy as np
        >>> noise = np.random.default_rng(0).integers(0, 256, (2, 8, 8, 3), dtype=np.uint8)
        >>> encode_frames(noise).codec   # incompressible: stored raw
        'none'
    """
    frames = np.ascontiguousarray(frames, dtype=np.uint8)
    if frames.ndim < 2 or frames.shape[0] == 0 or frames.nbytes == 0:
        return EncodedFrames(CODEC_NONE, frames.tobytes(), [])
    flat = frames.reshape(frames.shape[0], -1)
    frame_bytes = flat.shape[1]
    limit = frame_bytes * (1.0 - min_saving)
    blocks: list[bytes | memoryview] = []
    any_compressed = False
    for frame in flat:
        block = bytes(cramjam.lz4.compress_block(frame, store_size=False))
        if len(block) < frame_bytes and len(block) <= limit:
            blocks.append(block)
            any_compressed = True
        else:
            blocks.append(memoryview(frame))
    if not any_compressed:
        return EncodedFrames(CODEC_NONE, frames.tobytes(), [])
    sizes = [len(b) if isinstance(b, bytes) else frame_bytes for b in blocks]
    return EncodedFrames(CODEC_LZ4, b"".join(blocks), sizes)


def decode_threads() -> int:
    """Threads that decompress one cell (the caller's included): one per core, at most 4.

    Example:
        >>> 1 <= decode_threads() <= 4
        True
    """
    return max(1, min(4, os.cpu_count() or 1))


def _thread_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(decode_threads(), thread_name_prefix="videorl-frames")
        return _pool


def decode_frames(
    payload: np.ndarray,
    shape: Sequence[int],
    codec: str,
    chunk_sizes: Sequence[int],
) -> np.ndarray:
    """The frames of one stored cell as a uint8 array of ``shape``.

    ``payload`` is the cell's bytes (1-D uint8). A ``"none"`` cell is reshaped without a
    copy. Raises :class:`FrameCodecError` when the bytes do not fit the row's description.

    Example:
        >>> import numpy as np
        >>> decode_frames(np.arange(6, dtype=np.uint8), (1, 1, 2, 3), "none", []).shape
        (1, 1, 2, 3)
    """
    shape = tuple(int(s) for s in shape)
    total = int(np.prod(shape))
    if codec == CODEC_NONE:
        if payload.size != total:
            raise FrameCodecError(f"holds {payload.size} bytes but its shape {shape} needs {total}")
        return payload.reshape(shape)
    if codec != CODEC_LZ4:
        raise FrameCodecError(f"unknown frames codec {codec!r} (known: {', '.join(CODECS)})")
    n = shape[0]
    if len(chunk_sizes) != n or sum(chunk_sizes) != payload.size:
        raise FrameCodecError(
            f"has {len(chunk_sizes)} blocks of {sum(chunk_sizes)} bytes in all, but "
            f"{n} frames and {payload.size} stored bytes"
        )
    out = np.empty(shape, dtype=np.uint8)
    flat = out.reshape(n, -1)
    frame_bytes = flat.shape[1]
    ends = np.cumsum(chunk_sizes).tolist()
    starts = [0, *ends[:-1]]

    def one(j: int) -> None:
        block = payload[starts[j] : ends[j]]
        if block.size == frame_bytes:
            flat[j] = block
            return
        try:
            written = cramjam.lz4.decompress_block_into(block, flat[j])
        except cramjam.DecompressionError as exc:
            raise FrameCodecError(f"frame {j} does not decompress ({exc})") from None
        if written != frame_bytes:
            raise FrameCodecError(f"frame {j} decompressed to {written} of {frame_bytes} bytes")

    def run(frames: range) -> None:
        for j in frames:
            one(j)

    parts = min(n, decode_threads()) if total >= PARALLEL_MIN_BYTES else 1
    if parts == 1:
        run(range(n))
        return out
    # one contiguous run of frames per thread, the calling thread taking the first
    pool = _thread_pool()
    bounds = [n * i // parts for i in range(parts + 1)]
    futures = [pool.submit(run, range(a, b)) for a, b in itertools.pairwise(bounds[1:])]
    try:
        run(range(bounds[0], bounds[1]))
    finally:
        for future in futures:
            future.result()
    return out
