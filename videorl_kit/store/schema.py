"""The four Lance tables of a store, the cache-schema version and the cache key.

A store is one folder holding four Lance datasets:

``frames``        one row per decoded media item (key ``cache_key``)
``failures``      one row per media item that could not be decoded (key ``failure_id``,
                  a hash of ``source_uri`` and ``cache_key``)
``samples``       one row per data row of a task (key ``task_id`` + ``sample_id``)
``trajectories``  model responses with their rewards (key ``trajectory_id``)

Frames are stored as **uint8 bytes + shape** (``large_binary`` + ``frames_shape``):
rows have different shapes (frame count and resized size depend on each video), which a
fixed-shape tensor column cannot hold. Measured on this machine (2.4 MB cells, page cache):
a one-row ``take`` of a plain binary cell ran at ~2.2 GB/s with Lance's 2.0 file format and
~0.6-0.8 GB/s with 2.1/2.2 (with or without compression); a fixed-size-list column was no
faster. The column is therefore written in the 2.0 format with Lance's *blob* encoding, which
keeps each cell contiguous in its data file, so the reader can fetch it with one ``preadv``
(~6 GB/s, :mod:`videorl_kit.store.frame_bytes`). Since schema version 3 a cell may be
LZ4-compressed frame by frame (``frames_codec``, ``frames_chunk_sizes``; see
:mod:`videorl_kit.store.frame_codec`): frames that LZ4 shrinks by at least 40% are stored
compressed, the others raw, and a cell with no compressible frame is the plain bytes.

The cache key is ``sha256`` over the canonical JSON (sorted keys, no spaces) of every input
that changes the pixels: the source's content hash, the modality, the budget parameters,
the decoder name and version, the sampler version and :data:`CACHE_SCHEMA_VERSION`. All of
them are also stored as columns, so a row explains its own key.

Example:
    >>> key = cache_key(content_hash="ab" * 32, modality="video",
    ...                 budget={"fps": 2.0, "max_frames": 8}, decoder="pyav", decoder_version="1")
    >>> len(key), key == cache_key(content_hash="ab" * 32, modality="video",
    ...     budget={"max_frames": 8, "fps": 2.0}, decoder="pyav", decoder_version="1")
    (64, True)
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final

import pyarrow as pa

from videorl_kit.media.decoded import SAMPLER_VERSION

CACHE_SCHEMA_VERSION: Final[int] = 6
"""Version of the table layout and key recipe; bump on any change of meaning.

History: 1 = first layout; 2 = ``samples`` records the spec's provenance (``spec_file``,
``spec_sha256``, ``spec_hub_files``, ``data_repo``, ``data_revision``, ``data_file``,
``data_sha256``); 3 = ``frames`` cells may be LZ4-compressed per frame (``frames_codec``,
``frames_chunk_sizes``), which a version-2 reader would misread; within version 3,
``samples`` gained ``skip_rule`` and ``row_json`` (additive: a store without them is refused by
the missing-column check with the same rebuild hint); 4 = ``frames_xxh3`` (XXH3-64 of each
stored cell, checked on every read) and ``decode_warnings`` (what the decoder noticed, e.g.
frames the container holds but that do not decode); 5 = ``frames_block_xxh3`` (XXH3-64 of
each stored block, one per frame, checked as each block is read) replaces ``frames_xxh3``, and
``truncation`` says why a cached source looks cut short (null when it looks whole); 6 =
``row_digest`` (XXH3-128 of each frames row's metadata: shape, codec, block sizes and checksums,
timing, size, key and key inputs; :mod:`videorl_kit.store.row_digest`), checked when a reader
first reads the row. A store of
another version is refused with a rebuild hint that says what changed
(:data:`SCHEMA_CHANGES`).
"""

SCHEMA_CHANGES: Final[dict[int, str]] = {
    5: "a checksum per stored frame block instead of one per cell, and the truncation column",
    6: "a digest of each frames row's metadata (shape, timing, key), checked on read",
}
"""What each cache-schema version changed, for the message that refuses an older store."""

FRAMES_TABLE: Final[str] = "frames"
FAILURES_TABLE: Final[str] = "failures"
SAMPLES_TABLE: Final[str] = "samples"
TRAJECTORIES_TABLE: Final[str] = "trajectories"
TABLE_NAMES: Final[tuple[str, ...]] = (
    FRAMES_TABLE,
    FAILURES_TABLE,
    SAMPLES_TABLE,
    TRAJECTORIES_TABLE,
)

FRAMES_STORAGE_VERSION: Final[str] = "2.0"
"""Lance data-storage version of the frames table (fastest whole-cell reads of large binaries)."""

CONFIG_SCHEMA_VERSION: Final[str] = "videorl.cache_schema_version"
"""Dataset-config key holding the cache-schema version the table was written with."""
CONFIG_TABLE: Final[str] = "videorl.table"
CONFIG_BUDGET_PREFIX: Final[str] = "videorl.budget."
"""Dataset-config key prefix: ``videorl.budget.<budget_hash>`` = canonical JSON of the budget."""

_TS = pa.timestamp("us", tz="UTC")


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no whitespace and no NaN: the same value always gives the same text.

    Example:
        >>> canonical_json({"b": 1, "a": [1.5, None]})
        '{"a":[1.5,null],"b":1}'
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def sha256_text(text: str) -> str:
    """Hex sha256 of UTF-8 ``text``.

    Example:
        >>> sha256_text("")[:12]
        'e3b0c44298fc'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def budget_hash(modality: str, budget: dict[str, Any]) -> str:
    """Short hash (16 hex digits) naming one budget of one modality; readers check it.

    Example:
        >>> budget_hash("video", {"fps": 2.0}) == budget_hash("video", {"fps": 2.0})
        True
        >>> budget_hash("video", {"fps": 2.0}) == budget_hash("image", {"fps": 2.0})
        False
    """
    return sha256_text(canonical_json({"modality": modality, "budget": budget}))[:16]


def cache_key_inputs(
    *,
    content_hash: str,
    modality: str,
    budget: dict[str, Any],
    decoder: str,
    decoder_version: str,
    sampler_version: str | None = None,
    cache_schema_version: int | None = None,
) -> dict[str, Any]:
    """Everything the cache key is computed from, as one JSON-ready dict.

    The sampler and cache-schema versions default (None) to this kit's; a reader checking a
    stored row passes the row's own.

    Example:
        >>> sorted(cache_key_inputs(content_hash="x", modality="image", budget={},
        ...     decoder="pyav", decoder_version="1"))  # doctest: +NORMALIZE_WHITESPACE
        ['budget', 'cache_schema_version', 'content_hash', 'decoder', 'decoder_version',
         'modality', 'sampler_version']
    """
    return {
        "content_hash": content_hash,
        "modality": modality,
        "budget": budget,
        "decoder": decoder,
        "decoder_version": decoder_version,
        "sampler_version": SAMPLER_VERSION if sampler_version is None else sampler_version,
        "cache_schema_version": (
            CACHE_SCHEMA_VERSION if cache_schema_version is None else cache_schema_version
        ),
    }


def cache_key(
    *,
    content_hash: str,
    modality: str,
    budget: dict[str, Any],
    decoder: str,
    decoder_version: str,
    sampler_version: str | None = None,
    cache_schema_version: int | None = None,
) -> str:
    """The row key of a decoded media item (64 hex digits; see :func:`cache_key_inputs`).

    Example:
        >>> a = cache_key(content_hash="x", modality="video", budget={"fps": 2.0},
        ...               decoder="pyav", decoder_version="1")
        >>> b = cache_key(content_hash="x", modality="video", budget={"fps": 1.0},
        ...               decoder="pyav", decoder_version="1")
        >>> a != b
        True
    """
    inputs = cache_key_inputs(
        content_hash=content_hash,
        modality=modality,
        budget=budget,
        decoder=decoder,
        decoder_version=decoder_version,
        sampler_version=sampler_version,
        cache_schema_version=cache_schema_version,
    )
    return sha256_text(canonical_json(inputs))


def failure_id(source_uri: str, key: str | None) -> str:
    """Key of a failures row: the source plus its cache key ("" when the file could not be read).

    A file that later changes gets a new cache key, so it is tried again without
    ``--retry-failed``; a file that stays unreadable keeps its failure row.

    Example:
        >>> failure_id("/v/a.mp4", None) == failure_id("/v/a.mp4", "")
        True
    """
    return sha256_text(canonical_json({"source_uri": source_uri, "cache_key": key or ""}))


def _table_schema(table: str, *fields: pa.Field) -> pa.Schema:
    """The Arrow schema of one store table, tagged with its name and the schema version."""
    return pa.schema(
        list(fields),
        metadata={CONFIG_TABLE: table, CONFIG_SCHEMA_VERSION: str(CACHE_SCHEMA_VERSION)},
    )


FRAMES_SCHEMA: Final[pa.Schema] = _table_schema(
    FRAMES_TABLE,
    pa.field("cache_key", pa.string(), nullable=False),
    pa.field("source_uri", pa.string(), nullable=False),
    pa.field("source_content_hash", pa.string(), nullable=False),
    # size and mtime when hashed: a later build reuses the hash while they are unchanged
    pa.field("source_size", pa.int64(), nullable=False),
    pa.field("source_mtime_ns", pa.int64(), nullable=False),
    pa.field("modality", pa.string(), nullable=False),
    pa.field("budget_hash", pa.string(), nullable=False),
    pa.field("budget_json", pa.string(), nullable=False),
    pa.field("decoder", pa.string(), nullable=False),
    pa.field("decoder_version", pa.string(), nullable=False),
    pa.field("sampler_version", pa.string(), nullable=False),
    pa.field("cache_schema_version", pa.int32(), nullable=False),
    # uint8 frames, C order, shape frames_shape = (T, H, W, 3), encoded by frames_codec;
    # blob-encoded: each cell is contiguous in its data file and scans return
    # {position, size} descriptors
    pa.field(
        "frames",
        pa.large_binary(),
        nullable=False,
        metadata={"lance-encoding:blob": "true"},
    ),
    pa.field("frames_shape", pa.list_(pa.int32(), 4), nullable=False),
    # "none" (raw bytes) or "lz4" (one block per frame, sizes below; a block as large as
    # a frame is that frame raw): videorl_kit.store.frame_codec
    pa.field("frames_codec", pa.string(), nullable=False),
    pa.field("frames_chunk_sizes", pa.list_(pa.int64()), nullable=False),
    pa.field("frames_sha256", pa.string(), nullable=False),  # of the decoded frames
    # XXH3-64 of each stored block (one per frame, LZ4 or raw, in order); readers check each
    # block as they read it
    pa.field("frames_block_xxh3", pa.list_(pa.uint64()), nullable=False),
    # what the decoder noticed about the source (dropped or undecodable frames, ...)
    pa.field("decode_warnings", pa.list_(pa.string()), nullable=False),
    # why the source looks cut short (its readable prefix was cached); null when it looks whole
    pa.field("truncation", pa.string(), nullable=True),
    pa.field("frame_indices", pa.list_(pa.int64()), nullable=False),
    pa.field("timestamps_s", pa.list_(pa.float64()), nullable=False),
    pa.field("source_fps", pa.float64(), nullable=False),
    pa.field("source_frames", pa.int64(), nullable=False),
    pa.field("duration_s", pa.float64(), nullable=False),
    pa.field("source_height", pa.int32(), nullable=True),
    pa.field("source_width", pa.int32(), nullable=True),
    pa.field("height", pa.int32(), nullable=False),
    pa.field("width", pa.int32(), nullable=False),
    pa.field("patch", pa.int32(), nullable=False),
    pa.field("temporal_patch", pa.int32(), nullable=False),
    pa.field("visual_tokens", pa.int64(), nullable=False),
    pa.field("decode_seconds", pa.float64(), nullable=False),
    # XXH3-128 of the row's metadata (videorl_kit.store.row_digest.DIGEST_FIELDS)
    pa.field("row_digest", pa.string(), nullable=False),
    pa.field("created_at", _TS, nullable=False),  # last: the Ray engine appends it
)

FAILURES_SCHEMA: Final[pa.Schema] = _table_schema(
    FAILURES_TABLE,
    pa.field("failure_id", pa.string(), nullable=False),
    pa.field("source_uri", pa.string(), nullable=False),
    pa.field("cache_key", pa.string(), nullable=False),  # "" when the file was unreadable
    pa.field("source_content_hash", pa.string(), nullable=False),  # "" when unreadable
    pa.field("source_size", pa.int64(), nullable=False),  # -1 when unreadable
    pa.field("source_mtime_ns", pa.int64(), nullable=False),
    pa.field("modality", pa.string(), nullable=False),
    pa.field("budget_hash", pa.string(), nullable=False),
    pa.field("budget_json", pa.string(), nullable=False),
    pa.field("error_class", pa.string(), nullable=False),
    pa.field("message", pa.string(), nullable=False),
    pa.field("traceback", pa.string(), nullable=False),
    pa.field("decoder", pa.string(), nullable=False),
    pa.field("decoder_version", pa.string(), nullable=False),
    pa.field("attempts", pa.int32(), nullable=False),
    pa.field("first_failed_at", _TS, nullable=False),
    pa.field("last_failed_at", _TS, nullable=False),
    pa.field("cache_schema_version", pa.int32(), nullable=False),
)

SAMPLES_SCHEMA: Final[pa.Schema] = _table_schema(
    SAMPLES_TABLE,
    pa.field("task_id", pa.string(), nullable=False),
    pa.field("sample_id", pa.string(), nullable=False),
    pa.field("spec_version", pa.int32(), nullable=False),
    pa.field("row_index", pa.int64(), nullable=False),
    pa.field("problem_type", pa.string(), nullable=False),
    pa.field("question", pa.string(), nullable=False),
    pa.field("options", pa.list_(pa.string()), nullable=True),
    pa.field("answer", pa.string(), nullable=False),  # text; structured answers as JSON text
    pa.field("prompt", pa.string(), nullable=True),  # rendered user turn (None if skipped)
    pa.field("system_prompt", pa.string(), nullable=True),
    pa.field("video_uris", pa.list_(pa.string()), nullable=False),
    pa.field("image_uris", pa.list_(pa.string()), nullable=False),
    pa.field("video_keys", pa.list_(pa.string()), nullable=False),  # null item: not cached
    pa.field("image_keys", pa.list_(pa.string()), nullable=False),
    pa.field("video_budget_hash", pa.string(), nullable=False),
    pa.field("image_budget_hash", pa.string(), nullable=False),
    pa.field("visual_tokens", pa.int64(), nullable=True),
    pa.field("text_tokens_estimate", pa.int64(), nullable=True),
    pa.field("prompt_tokens_estimate", pa.int64(), nullable=True),
    pa.field("status", pa.string(), nullable=False),  # see videorl_kit.store.samples
    pa.field("skip_rule", pa.string(), nullable=True),  # the named rule of a skipped row
    pa.field("skip_reason", pa.string(), nullable=True),
    pa.field("row_json", pa.string(), nullable=True),  # the raw data row (data_source, ...)
    # provenance of the spec (videorl_kit.store.provenance)
    pa.field("spec_file", pa.string(), nullable=True),
    pa.field("spec_sha256", pa.string(), nullable=False),
    pa.field("spec_hub_files", pa.string(), nullable=False),  # JSON list of Hub files
    pa.field("data_repo", pa.string(), nullable=True),  # Hub data only
    pa.field("data_revision", pa.string(), nullable=True),  # the commit the rows came from
    pa.field("data_file", pa.string(), nullable=True),
    pa.field("data_sha256", pa.string(), nullable=True),
    pa.field("row_hash", pa.string(), nullable=False),
    pa.field("cache_schema_version", pa.int32(), nullable=False),
    pa.field("updated_at", _TS, nullable=False),
)

TRAJECTORIES_SCHEMA: Final[pa.Schema] = _table_schema(
    TRAJECTORIES_TABLE,
    pa.field("trajectory_id", pa.string(), nullable=False),
    pa.field("sample_id", pa.string(), nullable=False),
    pa.field("task_id", pa.string(), nullable=False),
    pa.field("response", pa.string(), nullable=False),
    pa.field("token_ids", pa.list_(pa.int32()), nullable=True),
    pa.field("tokenizer_id", pa.string(), nullable=True),
    pa.field("behaviour_logprobs", pa.list_(pa.float32()), nullable=True),
    pa.field("reward_accuracy", pa.float64(), nullable=True),
    pa.field("reward_format", pa.float64(), nullable=True),
    pa.field("reward_overall", pa.float64(), nullable=True),
    pa.field("reward_status", pa.string(), nullable=True),
    pa.field("reward_details", pa.string(), nullable=True),  # JSON text
    pa.field("policy_id", pa.string(), nullable=True),
    # "offline:<file>", "eval:<run>" or "rollout"
    pa.field("source", pa.string(), nullable=False),
    pa.field("created_at", _TS, nullable=False),
    pa.field("cache_schema_version", pa.int32(), nullable=False),
)

SCHEMAS: Final[dict[str, pa.Schema]] = {
    FRAMES_TABLE: FRAMES_SCHEMA,
    FAILURES_TABLE: FAILURES_SCHEMA,
    SAMPLES_TABLE: SAMPLES_SCHEMA,
    TRAJECTORIES_TABLE: TRAJECTORIES_SCHEMA,
}

TABLE_KEYS: Final[dict[str, tuple[str, ...]]] = {
    FRAMES_TABLE: ("cache_key",),
    FAILURES_TABLE: ("failure_id",),
    SAMPLES_TABLE: ("task_id", "sample_id"),
    TRAJECTORIES_TABLE: ("trajectory_id",),
}
"""The merge key of each table (idempotent inserts match on these columns)."""
