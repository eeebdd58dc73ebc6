"""The per-item work of a cache build, run inside worker processes (or Ray tasks).

:func:`decode_task` turns one :class:`DecodeTask` into one :class:`DecodeResult`: a frames
row, a failure (error class, message, traceback) or a skip by rule. It never raises for a
bad input, so one bad file cannot stop a build; a crash of the whole process (a segfault in
a decoder) is handled by the engine that runs it.

Example:
    >>> budget = {"fps": 2.0, "min_frames": 4, "max_frames": 8, "min_pixels": 3136,
    ...           "max_pixels": 12544, "patch": 28}
    >>> task = DecodeTask(source_uri="/nonexistent.mp4", modality="video", budget=budget,
    ...                   budget_hash="0" * 16, content_hash="x", cache_key="k",
    ...                   decoder="pyav", decoder_version="1")
    >>> result = decode_task(task)
    >>> result.status, result.error.error_class, result.error.message
    ('failed', 'MissingFileError', '/nonexistent.mp4: file does not exist')
"""

from __future__ import annotations

import hashlib
import os
import time
import traceback as traceback_module
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import PIL.Image

from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.core.skip_rules import RULE_DATA_TYPE_MISMATCH, RULE_OVER_TOKEN_BUDGET
from videorl_kit.media import geometry
from videorl_kit.media.container import open_video
from videorl_kit.media.decode import decode_image, decode_video
from videorl_kit.media.decoded import SAMPLER_VERSION
from videorl_kit.media.decoders import DEFAULT_DECODER, get_decoder
from videorl_kit.media.errors import MediaError
from videorl_kit.media.frame_folder import FRAME_FOLDER_DECODER, decode_frame_folder
from videorl_kit.store.frame_codec import encode_frames
from videorl_kit.store.row_digest import row_digest
from videorl_kit.store.schema import CACHE_SCHEMA_VERSION, canonical_json

Status = Literal["ok", "failed", "skipped"]


class SourceChangedError(VideoRLKitError):
    """The media file changed (or vanished) between hashing and decoding."""


class WorkerCrashError(VideoRLKitError):
    """The worker process died (signal, out of memory) while decoding this item."""


class DecodeTimeoutError(VideoRLKitError):
    """Decoding this item ran past the per-item time limit; its worker process was killed."""


@dataclass(frozen=True)
class DecodeTask:
    """One distinct media item to decode, with the identity computed by the builder."""

    source_uri: str
    modality: str
    budget: dict[str, Any]
    budget_hash: str
    content_hash: str
    cache_key: str
    decoder: str
    decoder_version: str
    size: int = -1
    mtime_ns: int = -1
    max_visual_tokens: int | None = None
    frames_fps: float | None = None  # a folder of numbered frames played at this fps


@dataclass(frozen=True)
class ErrorInfo:
    """Why an item failed."""

    error_class: str
    message: str
    traceback: str

    @classmethod
    def from_exception(cls, exc: BaseException) -> ErrorInfo:
        """Capture ``exc`` (class name, one-line message, formatted traceback)."""
        message = str(exc).strip() or repr(exc)
        text = "".join(traceback_module.format_exception(type(exc), exc, exc.__traceback__))
        return cls(type(exc).__name__, message, text)


@dataclass
class DecodeResult:
    """What became of one :class:`DecodeTask`."""

    task: DecodeTask
    status: Status
    row: dict[str, Any] | None = None
    error: ErrorInfo | None = None
    skip_rule: str | None = None
    skip_detail: str | None = None
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        """Bytes of frames carried (0 unless ok)."""
        return len(self.row["frames"]) if self.row else 0


DecodeFn = Callable[[DecodeTask], DecodeResult]


def _check_unchanged(task: DecodeTask) -> None:
    try:
        stat = os.stat(task.source_uri)
    except OSError as exc:
        raise SourceChangedError(f"{task.source_uri}: vanished during the build ({exc})") from exc
    if task.size >= 0 and (stat.st_size, stat.st_mtime_ns) != (task.size, task.mtime_ns):
        raise SourceChangedError(
            f"{task.source_uri}: changed during the build (size/mtime differ from when it "
            "was hashed); run the build again"
        )


def frames_row(task: DecodeTask, decoded: Any, seconds: float) -> dict[str, Any]:
    """The ``frames`` table row (without ``created_at``) of a decoded video or image.

    Example:
        >>> row = frames_row(task, decode_media(task), seconds=0.1)   # doctest: +SKIP
        >>> row["frames_shape"], row["visual_tokens"]                 # doctest: +SKIP
        ([8, 252, 308, 3], 396)
    """
    reported = (getattr(decoded, "decoder", None), getattr(decoded, "decoder_version", None))
    if reported[1] is not None and reported != (task.decoder, task.decoder_version):
        raise ValueError(
            f"decoder reported {reported[0]} {reported[1]!r} but the cache key was computed "
            f"for {task.decoder} {task.decoder_version!r}; the frames would be mislabelled"
        )
    frames = np.ascontiguousarray(decoded.frames, dtype=np.uint8)
    if frames.ndim != 4 or frames.shape[-1] != 3:
        raise ValueError(f"decoder returned frames of shape {frames.shape}, expected T×H×W×3")
    n, height, width, _ = (int(s) for s in frames.shape)
    patch = int(task.budget.get("patch", 28))
    temporal_patch = int(task.budget.get("temporal_patch", 2 if task.modality == "video" else 1))
    if task.modality == "video":
        tokens = geometry.visual_tokens(
            n, height, width, factor=patch, temporal_patch=temporal_patch
        )
        frame_indices = [int(i) for i in decoded.frame_indices]
        timestamps = [float(t) for t in decoded.timestamps_s]
        source_fps = float(decoded.source_fps)
        source_frames = int(decoded.source_frames)
        duration = float(decoded.duration_s)
    else:
        tokens = geometry.image_visual_tokens(height, width, factor=patch)
        frame_indices, timestamps = [0], [0.0]
        source_fps, source_frames, duration = 0.0, 1, 0.0
    encoded = encode_frames(frames)
    row = {
        "cache_key": task.cache_key,
        "source_uri": task.source_uri,
        "source_content_hash": task.content_hash,
        "source_size": task.size,
        "source_mtime_ns": task.mtime_ns,
        "modality": task.modality,
        "budget_hash": task.budget_hash,
        "budget_json": canonical_json(task.budget),
        "decoder": task.decoder,
        "decoder_version": task.decoder_version,
        "sampler_version": SAMPLER_VERSION,
        "cache_schema_version": CACHE_SCHEMA_VERSION,
        "frames": encoded.payload,
        "frames_shape": [n, height, width, 3],
        "frames_codec": encoded.codec,
        "frames_chunk_sizes": encoded.chunk_sizes,
        "frames_sha256": hashlib.sha256(frames).hexdigest(),
        "frames_block_xxh3": encoded.checksums,
        "decode_warnings": [str(w) for w in getattr(decoded, "warnings", ())],
        "truncation": truncation_of(decoded),
        "frame_indices": frame_indices,
        "timestamps_s": timestamps,
        "source_fps": source_fps,
        "source_frames": source_frames,
        "duration_s": duration,
        "source_height": _optional_int(getattr(decoded, "source_height", None)),
        "source_width": _optional_int(getattr(decoded, "source_width", None)),
        "height": height,
        "width": width,
        "patch": patch,
        "temporal_patch": temporal_patch,
        "visual_tokens": int(tokens),
        "decode_seconds": float(seconds),
    }
    row["row_digest"] = row_digest(row)
    return row


def truncation_of(decoded: Any) -> str | None:
    """Why the decoded source looks cut short (its ``truncation``), or None (images, whole files).

    Example:
        >>> from types import SimpleNamespace
        >>> truncation_of(SimpleNamespace(truncation="file is cut short: ...")), truncation_of(1)
        ('file is cut short: ...', None)
    """
    reason = getattr(decoded, "truncation", None)
    return str(reason) if reason else None


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


DECODER_THREADS = 0
"""Decoder threads per worker (0: FFmpeg picks, one per core), used as *slice* threads: they
split each picture, so frames are bit-identical, CPU time is unchanged (measured on this
repository's benchmark: 8.3-8.6 s of CPU for 8 videos with 1, 2 or auto threads) and a
worker uses cores its siblings leave idle (e.g. at the end of a build, or while the build
process commits), like PyAV's default decoder settings do."""


def decode_media(task: DecodeTask) -> Any:
    """Decode ``task``'s file with the decoder its cache key names (``task.decoder``).

    Videos decode with PyAV (slice threads), decord or torchcodec; images with Pillow; a
    folder of numbered frames (decoder ``frames``) at its declared fps.
    """
    if task.decoder == FRAME_FOLDER_DECODER:
        assert task.frames_fps is not None, "a frame folder's task carries its fps"
        return decode_frame_folder(task.source_uri, task.budget, fps=task.frames_fps)
    if task.modality == "video":
        return decode_video(
            task.source_uri, task.budget, decoder=task.decoder, threads=DECODER_THREADS,
            thread_type="SLICE",
        )  # fmt: skip
    return decode_image(task.source_uri, task.budget)


def warm_up() -> None:
    """Load the default decoder (PyAV) now, so a worker's first item is timed fairly.

    Called once when a worker process starts, before it takes tasks: the per-item time
    limit then measures decoding, not interpreter start-up.

    Example:
        >>> warm_up()
    """
    get_decoder(DEFAULT_DECODER)


def run_task(task: DecodeTask, decode: Callable[[DecodeTask], Any]) -> DecodeResult:
    """Run ``decode`` on ``task`` and wrap its outcome; exceptions become failures."""
    started = time.perf_counter()
    try:
        decoded = decode(task)
        _check_unchanged(task)
        seconds = time.perf_counter() - started
        row = frames_row(task, decoded, seconds)
    except Exception as exc:
        return DecodeResult(
            task,
            "failed",
            error=ErrorInfo.from_exception(exc),
            seconds=time.perf_counter() - started,
        )
    limit = task.max_visual_tokens
    if limit is not None and row["visual_tokens"] > limit:
        return DecodeResult(
            task,
            "skipped",
            skip_rule=RULE_OVER_TOKEN_BUDGET,
            skip_detail=f"{row['visual_tokens']} visual tokens > limit {limit}",
            seconds=row["decode_seconds"],
        )
    return DecodeResult(task, "ok", row=row, seconds=row["decode_seconds"])


_NOT_STILL_IMAGES = frozenset({"MPEG"})
"""Formats Pillow identifies but that hold moving pictures (it cannot decode them)."""


def declared_type_contradiction(path: str, modality: str) -> str | None:
    """Why the file at ``path`` cannot be the ``modality`` its row declares, or None.

    A still image in a video slot would decode as a video of one repeated frame, and a
    video in an image slot as its first frame: both are skipped (rule
    ``data_type_mismatch``) instead. A file that is neither (missing, damaged) is left to
    the decoder, which fails with the reason.

    Example:
        >>> import tempfile, PIL.Image
        >>> png = tempfile.mkdtemp() + "/still.png"
        >>> PIL.Image.new("RGB", (8, 8)).save(png)
        >>> declared_type_contradiction(png, "video")
        'declared a video, but the file is a PNG image'
        >>> declared_type_contradiction(png, "image") is None
        True
    """
    try:
        with PIL.Image.open(path) as image:
            kind: str | None = image.format
            still = kind not in _NOT_STILL_IMAGES and getattr(image, "n_frames", 1) <= 1
    except (OSError, ValueError, SyntaxError, PIL.Image.DecompressionBombError):
        kind, still = None, False
    if modality == "video":
        return f"declared a video, but the file is a {kind} image" if still else None
    if kind is not None:
        return None
    try:
        container, _ = open_video(path)
    except MediaError:
        return None
    container.close()
    return "declared an image, but the file is a video"


def decode_task(task: DecodeTask) -> DecodeResult:
    """Decode one item with the kit's decoders; never raises for a bad input.

    A file whose content contradicts its declared modality is skipped with rule
    ``data_type_mismatch`` (see :func:`declared_type_contradiction`). This is the default
    ``decode_fn`` of :func:`videorl_kit.store.builder.build_cache`.
    """
    contradiction = declared_type_contradiction(task.source_uri, task.modality)
    if contradiction is not None:
        return DecodeResult(
            task, "skipped", skip_rule=RULE_DATA_TYPE_MISMATCH, skip_detail=contradiction
        )
    return run_task(task, decode_media)
