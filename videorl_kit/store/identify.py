"""What a build knows before it decodes: file identities, decoder identities, the store's state.

* :func:`identify_files` hashes every media file's content (threads), reusing a hash the
  store already holds while the file's size and mtime are unchanged; a file that cannot be
  read gets its error instead.
* :func:`decoder_identity` names the decoder (and its version) of a modality: both are part
  of the cache key.
* :class:`CommittedState` is what the store's tables hold when the build starts: cached keys
  (with their visual tokens), recorded failures and known content hashes.
* :func:`failure_row` is the ``failures`` table row of an item that failed.

Example:
    >>> import tempfile
    >>> from videorl_kit.store.tables import StoreTables
    >>> state = CommittedState.read(StoreTables.create(tempfile.mkdtemp()))
    >>> state.cached_tokens, state.known_failures
    ({}, {})
    >>> identify_files(["/no/such.mp4"], {})["/no/such.mp4"].error.error_class
    'MissingFileError'
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.media.decode import IMAGE_DECODER, decoder_version
from videorl_kit.media.decoders import DEFAULT_DECODER
from videorl_kit.media.errors import DecoderUnavailableError, MissingFileError
from videorl_kit.media.frame_folder import (
    FRAME_FOLDER_DECODER,
    frame_folder_decoder_version,
    frame_folder_hash,
)
from videorl_kit.media.hashing import file_content_hash
from videorl_kit.store.inputs import MediaItem
from videorl_kit.store.schema import (
    CACHE_SCHEMA_VERSION,
    FAILURES_TABLE,
    FRAMES_TABLE,
    canonical_json,
    failure_id,
)
from videorl_kit.store.tables import StoreTables
from videorl_kit.store.worker import ErrorInfo

__all__ = [
    "CommittedState",
    "FileIdentity",
    "HashMemo",
    "decoder_identity",
    "failure_row",
    "identify_files",
    "identify_sources",
    "item_decoder",
]

FOLDER_WITHOUT_FPS = (
    "is a folder; a video stored as numbered frame images needs data.frames_fps in its spec"
)
"""Why a folder in a row's videos cannot be read when the spec declares no frame rate."""

HashMemo = dict[tuple[str, int, int], str]
"""(path, size, mtime_ns) -> content hash, from the committed tables."""

_IDENTITY_COLUMNS = ["source_uri", "source_size", "source_mtime_ns", "source_content_hash"]


@dataclass(frozen=True)
class FileIdentity:
    """A media file's content hash, size and mtime, or why it could not be read."""

    content_hash: str | None
    size: int
    mtime_ns: int
    error: ErrorInfo | None = None


def _identify(path: str, memo: HashMemo) -> FileIdentity:
    """Content hash of ``path``; reused from ``memo`` while its size and mtime are unchanged."""
    try:
        try:
            before = os.stat(path)
        except FileNotFoundError:
            raise MissingFileError(path, "file does not exist") from None
        if stat.S_ISDIR(before.st_mode):
            raise MissingFileError(path, FOLDER_WITHOUT_FPS)
        known = memo.get((path, before.st_size, before.st_mtime_ns))
        if known is not None:
            return FileIdentity(known, before.st_size, before.st_mtime_ns)
        digest = file_content_hash(path)
        after = os.stat(path)
        if (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns):
            raise OSError(f"{path}: changed while it was being hashed")
        return FileIdentity(digest, after.st_size, after.st_mtime_ns)
    except Exception as exc:  # missing, unreadable, a directory, ...
        return FileIdentity(None, -1, -1, ErrorInfo.from_exception(exc))


def _identify_folder(path: str, fps: float) -> FileIdentity:
    """Content hash of a folder of frames played at ``fps`` (every frame is hashed: a
    folder's size and mtime do not say whether a frame changed, so no memo)."""
    try:
        return FileIdentity(frame_folder_hash(path, fps), -1, -1)
    except Exception as exc:  # missing, no frames, unreadable, ...
        return FileIdentity(None, -1, -1, ErrorInfo.from_exception(exc))


def identify_files(
    paths: Sequence[str], memo: HashMemo, threads: int = 2
) -> dict[str, FileIdentity]:
    """The identity of every path (hashed on up to ``threads`` threads, at most 8)."""
    with ThreadPoolExecutor(max_workers=min(8, max(2, threads))) as pool:
        return dict(zip(paths, pool.map(lambda path: _identify(path, memo), paths), strict=True))


SourceKey = tuple[str, float | None]
"""A source as a build identifies it: its path and, for a folder of frames, its fps."""


def identify_sources(
    sources: Sequence[SourceKey], memo: HashMemo, threads: int = 2
) -> dict[SourceKey, FileIdentity]:
    """:func:`identify_files` for files and frame folders: ``(path, None)`` is a media file,
    ``(path, fps)`` a folder of numbered frames played at ``fps``.

    Example:
        >>> found = identify_sources([("/no/such.mp4", None), ("/no/frames", 30.0)], {})
        >>> [found[s].error.error_class for s in found]
        ['MissingFileError', 'MissingFileError']
    """

    def one(source: SourceKey) -> FileIdentity:
        path, fps = source
        return _identify(path, memo) if fps is None else _identify_folder(path, fps)

    with ThreadPoolExecutor(max_workers=min(8, max(2, threads))) as pool:
        return dict(zip(sources, pool.map(one, sources), strict=True))


def item_decoder(item: MediaItem, decoders: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """(decoder, version) of ``item``: its modality's, or the frame-folder reader's.

    Example:
        >>> from videorl_kit.spec.models import VideoBudget
        >>> item = MediaItem.video("/data/frames", VideoBudget(), frames_fps=10.0)
        >>> item_decoder(item, {"video": ("pyav", "av 1")})[0]
        'frames'
    """
    if item.frames_fps is not None:
        return FRAME_FOLDER_DECODER, frame_folder_decoder_version()
    return decoders[item.modality]


def decoder_identity(modality: str, video_decoder: str = DEFAULT_DECODER) -> tuple[str, str]:
    """(decoder name, decoder version) that decodes ``modality`` in a build.

    Videos decode with ``video_decoder`` (PyAV by default; decord or torchcodec when asked),
    images with Pillow. The version string names the library, the codec library and
    media's sampler version, and is part of the cache key, so frames from different
    decoders never share a row.

    Raises :class:`UserError` when the video decoder is unknown or cannot be loaded.

    Example:
        >>> decoder_identity("video")[0], decoder_identity("image", "decord")[0]
        ('pyav', 'pillow')
        >>> decoder_identity("video", "ffmpeg-cli")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.core.errors.UserError: decoder 'ffmpeg-cli' is unknown; choose one of pyav, ...
    """
    name = video_decoder if modality == "video" else IMAGE_DECODER
    try:
        return name, decoder_version(name)
    except DecoderUnavailableError as exc:
        raise UserError(f"{exc}, or build with the default --decoder {DEFAULT_DECODER}") from None


@dataclass
class CommittedState:
    """What the store's committed tables hold when a build starts."""

    cached_tokens: dict[str, int] = field(default_factory=dict)  # cache key -> visual tokens
    known_failures: dict[str, dict[str, Any]] = field(default_factory=dict)  # by failure_id
    hash_memo: HashMemo = field(default_factory=dict)

    @classmethod
    def read(cls, tables: StoreTables) -> CommittedState:
        """Read the frames and failures tables' keys, failures and file identities."""
        frames = tables.table(FRAMES_TABLE).to_table(
            columns=["cache_key", "visual_tokens", *_IDENTITY_COLUMNS]
        )
        failures = tables.table(FAILURES_TABLE).to_table(
            columns=[
                *_IDENTITY_COLUMNS,
                "failure_id",
                "budget_hash",
                "cache_key",
                "attempts",
                "first_failed_at",
                "error_class",
                "message",
            ]
        )
        state = cls(
            cached_tokens=dict(
                zip(
                    frames.column("cache_key").to_pylist(),
                    frames.column("visual_tokens").to_pylist(),
                    strict=True,
                )
            ),
            known_failures={row["failure_id"]: row for row in failures.to_pylist()},
        )
        for table in (frames, failures):
            columns = (table.column(c).to_pylist() for c in _IDENTITY_COLUMNS)
            for uri, size, mtime, digest in zip(*columns, strict=True):
                if digest:
                    state.hash_memo[(uri, size, mtime)] = digest
        return state


def failure_row(
    item: MediaItem,
    key: str | None,
    identity: FileIdentity,
    error: ErrorInfo,
    decoder: tuple[str, str],
    previous: dict[str, Any] | None,
) -> dict[str, Any]:
    """The ``failures`` row of ``item`` (``previous``: its row from an earlier build, if any).

    Example:
        >>> from videorl_kit.spec.models import VideoBudget
        >>> item = MediaItem.video("/data/a.mp4", VideoBudget())
        >>> row = failure_row(item, None, FileIdentity(None, -1, -1),
        ...                   ErrorInfo("MissingFileError", "gone", ""), ("pyav", "av 1"), None)
        >>> row["error_class"], row["attempts"], row["cache_key"]
        ('MissingFileError', 1, '')
    """
    now = datetime.now(UTC)
    return {
        "failure_id": failure_id(item.source_uri, key),
        "source_uri": item.source_uri,
        "cache_key": key or "",
        "source_content_hash": identity.content_hash or "",
        "source_size": identity.size,
        "source_mtime_ns": identity.mtime_ns,
        "modality": item.modality,
        "budget_hash": item.budget_hash,
        "budget_json": canonical_json(item.budget),
        "error_class": error.error_class,
        "message": error.message,
        "traceback": error.traceback,
        "decoder": decoder[0],
        "decoder_version": decoder[1],
        "attempts": int(previous["attempts"]) + 1 if previous else 1,
        "first_failed_at": previous["first_failed_at"] if previous else now,
        "last_failed_at": now,
        "cache_schema_version": CACHE_SCHEMA_VERSION,
    }
