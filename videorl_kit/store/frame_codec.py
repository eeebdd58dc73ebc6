"""Lossless storage of a frames cell: LZ4 per frame where it pays, raw bytes elsewhere, and an
XXH3-64 checksum per stored block, checked as each block is read.

A cell holds the uint8 frames ``(T, H, W, 3)`` of one media item as T *blocks*, one per frame.
:func:`encode_frames` compresses each frame on its own with the LZ4 block format and keeps the
compressed block only when it is at least :data:`MIN_SAVING` smaller than the frame; otherwise
the frame's raw bytes are the block. A cell in which no frame compresses is stored as the plain
C-order bytes (codec ``"none"``), whose blocks are simply its frames. Every block has its own
checksum (``frames_block_xxh3``, :func:`block_checksum`).

Why LZ4 and why per frame (measured on this 2-core machine, page cache, resized frames
of the benchmark's real and synthetic videos):

* LZ4 shrank real videos' frames to 0.50-0.93 of their size (0.66 overall) and
  decompressed at ~2.3-5.6 GB/s on one core; zstd level 1 saved more (0.59) but decompressed
  at 0.5-0.7 GB/s, far below a raw read from the page cache.
* Frames of noise-like content (the benchmark's synthetic videos) do not compress with
  LZ4 at all (1.004: slightly larger); only an entropy coder gains there (zstd: 0.93),
  at a tenth of raw read speed. Such frames are stored raw.
* Independent per-frame blocks let a multi-frame cell be read on several threads (``preadv``
  and cramjam's decompressor release the GIL), frame by frame, straight into the output array.

Why a checksum per block rather than per cell (schema 5; schema 4 hashed the whole cell before
decoding it): a per-cell hash is one serial pass over the cell on the calling thread before any
decoding starts, and python-xxhash holds the GIL while it runs. Per block, the thread that
reads a block hashes it while it is still in that core's cache and decompresses it next, so
checking is spread over the threads and costs no second trip through memory. The figures are
in ``benchmarks/RESULTS.md``.

Two ways to decode, kept bit-identical by ``tests/store/test_frame_codec.py``:
:func:`decode_frames` (the *plain path*: the whole cell's bytes in memory) and
:func:`decode_frames_from` (the *block path*: each block is read from its source by the
thread that checks and decodes it, on a few threads for large cells; what
:class:`~videorl_kit.store.frame_bytes.FrameBytesReader` uses on local data files).
``frames_sha256`` is always the hash of the *decoded* frames, so ``cache verify`` checks the
decompression too.

Example:
    >>> import numpy as np
    >>> frames = np.zeros((2, 4, 4, 3), dtype=np.uint8)
    >>> encoded = encode_frames(frames)
    >>> encoded.codec, len(encoded.payload) < frames.nbytes, len(encoded.chunk_sizes)
    ('lz4', True, 2)
    >>> back = decode_frames(np.frombuffer(encoded.payload, dtype=np.uint8), frames.shape,
    ...                      encoded.codec, encoded.chunk_sizes, encoded.checksums)
    >>> bool((back == frames).all())
    True
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
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

MIN_SAVING: Final[float] = 0.60
"""A frame is stored compressed only if that saves at least this fraction of its bytes.
Decompressing runs at ~2.5-3.5 GB/s a core here for frames LZ4 halves (~10 GB/s for
near-blank ones) against 5-20 GB/s for reading raw bytes from the page cache, so a small
saving costs more read time than the disk it frees is worth. On the benchmark's real videos
(84 frames), 60% keeps the 2 near-blank frames compressed and the frames table at about 0.24 of
float32; 50% (schema 6 until issue 19's last round) also kept 9 frames that LZ4 only halves
(0.227), and cached reads with checksums were about 10% slower (0.67-0.69 of raw reads against
0.75-0.76, measured side by side in one process); 40% (schemas 3-4) kept 36 (0.189) and reached
about 0.52."""

PARALLEL_MIN_BYTES: Final[int] = 1 << 20
"""Cells whose frames take at least this many bytes are read and decoded on a thread pool
(on machines of at least :data:`PARALLEL_MIN_CORES` cores)."""

PARALLEL_MIN_CORES: Final[int] = 4
"""Below this many cores every cell is read and decoded on the calling thread. Measured on the
benchmark's real videos on a shared 2-core machine (load 11-14, page cache warm): a cell of 16
LZ4 frames decoded in 0.9-1.3 ms serially and in 2.9-4.2 ms on two threads; the hand-offs
cost more than the second core gives when other processes want it too."""

BlockReader = Callable[[int, np.ndarray], None]
"""``read(offset, out)``: fill ``out`` with the cell's bytes from ``offset`` on, or raise."""

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_scratch = threading.local()


class FrameCodecError(VideoRLKitError, ValueError):
    """A stored cell does not decode to the frames its row describes."""


class BlockChecksumError(FrameCodecError):
    """A stored block's bytes do not match their checksum (``frame`` is its index)."""

    def __init__(self, frame: int) -> None:
        super().__init__(f"frame {frame}'s stored bytes do not match their checksum")
        self.frame = frame


def block_checksum(block: bytes | np.ndarray) -> int:
    """XXH3-64 of one stored block: an item of the ``frames_block_xxh3`` column.

    Example:
        >>> import numpy as np
        >>> block_checksum(b"abc") == block_checksum(np.frombuffer(b"abc", dtype=np.uint8))
        True
        >>> block_checksum(b"abc") == block_checksum(b"abd")
        False
    """
    return xxhash.xxh3_64_intdigest(block)


def block_sizes(shape: Sequence[int], codec: str, chunk_sizes: Sequence[int]) -> list[int]:
    """The stored size of each block of a cell, in order: one block per frame.

    Example:
        >>> block_sizes((2, 4, 4, 3), "none", [])
        [48, 48]
        >>> block_sizes((2, 4, 4, 3), "lz4", [10, 48])
        [10, 48]
    """
    if codec == CODEC_LZ4:
        return [int(s) for s in chunk_sizes]
    n = int(shape[0]) if len(shape) else 0
    frame_bytes = int(np.prod(shape[1:])) if n else 0
    return [frame_bytes] * n if frame_bytes else []


def block_checksums(payload: bytes | np.ndarray, sizes: Sequence[int]) -> list[int]:
    """:func:`block_checksum` of each consecutive block of ``payload``.

    Example:
        >>> block_checksums(b"abcd", [1, 3]) == [block_checksum(b"a"), block_checksum(b"bcd")]
        True
    """
    view = memoryview(payload).cast("B")
    out, start = [], 0
    for size in sizes:
        out.append(block_checksum(view[start : start + size]))
        start += size
    return out


@dataclass(frozen=True)
class EncodedFrames:
    """A cell ready to store: ``codec``, the ``payload`` bytes, per-frame LZ4 block sizes
    (empty for ``"none"``) and one checksum per block."""

    codec: str
    payload: bytes
    chunk_sizes: list[int]
    checksums: list[int]


def encode_frames(frames: np.ndarray, *, min_saving: float = MIN_SAVING) -> EncodedFrames:
    """Encode uint8 frames ``(T, ...)`` losslessly for the frames column.

    Frames that LZ4 shrinks by at least ``min_saving`` are stored compressed, the others
    raw; with none compressed the cell is the plain bytes (codec ``"none"``).

    Example:
        >>> import numpy as np
        >>> noise = np.random.default_rng(0).integers(0, 256, (2, 8, 8, 3), dtype=np.uint8)
        >>> encoded = encode_frames(noise)
        >>> encoded.codec, len(encoded.checksums)   # incompressible: stored raw
        ('none', 2)
    """
    frames = np.ascontiguousarray(frames, dtype=np.uint8)
    if frames.ndim < 2 or frames.shape[0] == 0 or frames.nbytes == 0:
        return EncodedFrames(CODEC_NONE, frames.tobytes(), [], [])
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
    checksums = [block_checksum(b) for b in blocks]
    if not any_compressed:
        return EncodedFrames(CODEC_NONE, frames.tobytes(), [], checksums)
    sizes = [len(b) if isinstance(b, bytes) else frame_bytes for b in blocks]
    return EncodedFrames(CODEC_LZ4, b"".join(blocks), sizes, checksums)


def decode_threads() -> int:
    """Threads that read and decode one cell (the caller's included): one per core, at most 4.

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


def _forget_pool_after_fork() -> None:
    """A forked child (a DataLoader worker) has none of the parent's pool threads."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool_after_fork)


def _run_blocks(n: int, work: Callable[[int], None], *, parallel: bool) -> None:
    """``work(j)`` for every ``j`` in ``range(n)``; with ``parallel``, pool threads take blocks
    from the same queue as the calling thread, so a thread the OS delays leaves its share to
    the others. The first error raised by any ``work`` is raised here."""
    helpers = min(n, decode_threads()) - 1 if parallel else 0
    if (os.cpu_count() or 1) < PARALLEL_MIN_CORES:
        helpers = 0
    if helpers <= 0:
        for j in range(n):
            work(j)
        return
    pending = iter(range(n))  # next() on a range iterator is atomic under the GIL
    failed = threading.Event()

    def drain() -> None:
        for j in pending:
            if failed.is_set():
                return
            try:
                work(j)
            except BaseException:
                failed.set()
                raise

    pool = _thread_pool()
    futures: list[Future[None]] = [pool.submit(drain) for _ in range(helpers)]
    error: BaseException | None = None
    try:
        drain()
    except BaseException as exc:
        error = exc
    for future in futures:
        if future.cancel():  # never started: the calling thread did its share
            continue
        exc = future.exception()
        if error is None and exc is not None:
            error = exc
    if error is not None:
        raise error


def _decompress(block: np.ndarray, out: np.ndarray, frame: int) -> None:
    try:
        written = cramjam.lz4.decompress_block_into(block, out)
    except cramjam.DecompressionError as exc:
        raise FrameCodecError(f"frame {frame} does not decompress ({exc})") from None
    if written != out.size:
        raise FrameCodecError(f"frame {frame} decompressed to {written} of {out.size} bytes")


def _check_layout(
    size: int, shape: tuple[int, ...], codec: str, chunk_sizes: Sequence[int],
    checksums: Sequence[int] | None,
) -> list[int]:  # fmt: skip
    """The block sizes of a cell of ``size`` stored bytes, after checking they fit its row."""
    if codec not in CODECS:
        raise FrameCodecError(f"unknown frames codec {codec!r} (known: {', '.join(CODECS)})")
    total = int(np.prod(shape))
    if codec == CODEC_NONE and size != total:
        raise FrameCodecError(f"holds {size} bytes but its shape {shape} needs {total}")
    sizes = block_sizes(shape, codec, chunk_sizes)
    if codec == CODEC_LZ4 and (len(sizes) != shape[0] or sum(sizes) != size):
        raise FrameCodecError(
            f"has {len(sizes)} blocks of {sum(sizes)} bytes in all, but "
            f"{shape[0]} frames and {size} stored bytes"
        )
    if checksums is not None and len(checksums) != len(sizes):
        raise FrameCodecError(f"has {len(checksums)} block checksums for {len(sizes)} blocks")
    return sizes


def decode_frames(
    payload: np.ndarray,
    shape: Sequence[int],
    codec: str,
    chunk_sizes: Sequence[int],
    checksums: Sequence[int] | None = None,
) -> np.ndarray:
    """The frames of one stored cell as a uint8 array of ``shape`` (the plain path).

    ``payload`` is the cell's bytes (1-D uint8). With ``checksums`` (the row's
    ``frames_block_xxh3``) each block is checked before it is decoded. A ``"none"`` cell is
    reshaped without a copy. Raises :class:`FrameCodecError` when the bytes do not fit the
    row's description (:class:`BlockChecksumError` when a checksum differs).

    Example:
        >>> import numpy as np
        >>> decode_frames(np.arange(6, dtype=np.uint8), (1, 1, 2, 3), "none", []).shape
        (1, 1, 2, 3)
        >>> pixels = np.arange(6, dtype=np.uint8)
        >>> decode_frames(pixels, (1, 1, 2, 3), "none", [], [0])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.store.frame_codec.BlockChecksumError: frame 0's stored bytes do not match ...
    """
    shape = tuple(int(s) for s in shape)
    sizes = _check_layout(int(payload.size), shape, codec, chunk_sizes, checksums)
    ends = np.cumsum(sizes).tolist()
    starts = [0, *ends[:-1]]
    if checksums is not None:
        for j, (start, end) in enumerate(zip(starts, ends, strict=True)):
            if block_checksum(payload[start:end]) != checksums[j]:
                raise BlockChecksumError(j)
    if codec == CODEC_NONE:
        return payload.reshape(shape)
    out = np.empty(shape, dtype=np.uint8)
    flat = out.reshape(shape[0], -1)

    def one(j: int) -> None:
        block = payload[starts[j] : ends[j]]
        if block.size == flat.shape[1]:
            flat[j] = block
        else:
            _decompress(block, flat[j], j)

    _run_blocks(shape[0], one, parallel=out.nbytes >= PARALLEL_MIN_BYTES)
    return out


def _scratch_buffer(size: int) -> np.ndarray:
    """A per-thread buffer of at least ``size`` bytes (reused: it stays in the core's cache)."""
    buffer: np.ndarray | None = getattr(_scratch, "buffer", None)
    if buffer is None or buffer.size < size:
        buffer = np.empty(max(size, 1 << 20), dtype=np.uint8)
        _scratch.buffer = buffer
    return buffer[:size]


def decode_frames_from(
    read: BlockReader,
    size: int,
    shape: Sequence[int],
    codec: str,
    chunk_sizes: Sequence[int],
    checksums: Sequence[int] | None = None,
) -> np.ndarray:
    """The frames of one stored cell of ``size`` bytes, read block by block (the block path).

    ``read(offset, out)`` fills ``out`` with the cell's bytes from ``offset`` (it raises if the
    source no longer holds them). A raw block is read straight into its place in the output;
    an LZ4 block into a small per-thread buffer, then decompressed into place. With
    ``checksums`` each block is checked right after it is read. Cells of at least
    :data:`PARALLEL_MIN_BYTES` are spread over a few threads; smaller ones are read in one
    call and decoded by :func:`decode_frames`. Same result and errors as :func:`decode_frames`
    on the whole cell.

    Example:
        >>> import numpy as np
        >>> encoded = encode_frames(np.zeros((2, 4, 4, 3), dtype=np.uint8))
        >>> payload = np.frombuffer(encoded.payload, dtype=np.uint8)
        >>> def read(offset, out):
        ...     out[:] = payload[offset : offset + out.size]
        >>> decode_frames_from(read, payload.size, (2, 4, 4, 3), encoded.codec,
        ...                    encoded.chunk_sizes, encoded.checksums).shape
        (2, 4, 4, 3)
    """
    shape = tuple(int(s) for s in shape)
    sizes = _check_layout(size, shape, codec, chunk_sizes, checksums)
    out = np.empty(shape, dtype=np.uint8)
    if out.nbytes < PARALLEL_MIN_BYTES or len(sizes) < 2:
        payload = out.reshape(-1) if codec == CODEC_NONE else np.empty(size, dtype=np.uint8)
        read(0, payload)
        return decode_frames(payload, shape, codec, chunk_sizes, checksums)
    flat = out.reshape(shape[0], -1)
    frame_bytes = flat.shape[1]
    ends = np.cumsum(sizes).tolist()
    starts = [0, *ends[:-1]]

    def one(j: int) -> None:
        raw = sizes[j] == frame_bytes
        block = flat[j] if raw else _scratch_buffer(sizes[j])
        read(starts[j], block)
        if checksums is not None and block_checksum(block) != checksums[j]:
            raise BlockChecksumError(j)
        if not raw:
            _decompress(block, flat[j], j)

    _run_blocks(shape[0], one, parallel=True)
    return out
