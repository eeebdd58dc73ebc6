"""Reading decoded frames back: :class:`FrameStore` and :class:`CachedFrames`.

``FrameStore.open(dir)`` pins the frames table at its latest committed version, checks
the cache-schema version (and, when given, the expected budget) and loads a compact index:
every row's metadata (numpy arrays and Arrow strings, a few hundred bytes a row) and the
location of its frames bytes. ``get`` then reads one item frame by frame with ``preadv``
from its data file, straight into the output array, decompressing LZ4 frames as they arrive
(:mod:`videorl_kit.store.frame_bytes`, :mod:`videorl_kit.store.frame_codec`; a large item on a
few threads); ``get_many`` reads several in file order (sorted, as Lance reads are too) and
returns them in the order asked.

Every read checks each stored block (one per frame) against its XXH3-64 checksum
(``frames_block_xxh3``) as it reads it, and raises
:class:`~videorl_kit.store.errors.StoreIntegrityError` (naming the store, the cache key and the
source file, and the repair command) when they differ: a flipped bit on disk never reaches a
trainer as wrong pixels. The same one-line error, never a crash, answers a data file that was
cut short or deleted after the store was opened. ``verify=False`` (on :meth:`FrameStore.open`
or per call) skips the checksums, for hot loops over a trusted store.

What turns the checked bytes into frames, and what comes with them (the shape, codec, block
sizes and checksums, timestamps, frame indices, fps, size, the key and its inputs), is checked
too: the first read of a row with verification recomputes its ``row_digest`` from the
in-memory index (:mod:`videorl_kit.store.row_digest`, tens of microseconds, remembered for the
reader's life) and the key from the row's own key inputs; every read, verified or not, checks
that the shape agrees with the row's height and width and that there is one timestamp, frame
index and block per frame. A store holding a key that is not 64 hex digits is refused when it
is opened: the kit names files after keys. The digests detect damage and edits made outside
the kit; they are no signature (see that module's threat model).

Example (``store_dir`` holds the synthetic demo task's cache: two 4 s clips at 8 fps and two
stills; ``key`` is a clip's cache key):
    >>> store = FrameStore.open(store_dir)
    >>> item = store.get(key)
    >>> item.frames.shape, item.frames.dtype
    ((4, 84, 112, 3), dtype('uint8'))
    >>> item.timestamps_s, item.source_fps
    ([0.0, 1.25, 2.625, 3.875], 8.0)
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa

from videorl_kit.store.errors import (
    MissingKeyError,
    StoreIntegrityError,
    StoreMismatchError,
    rebuild_hint,
    repair_hint,
)
from videorl_kit.store.frame_bytes import (
    FrameBytesReader,
    MissingBytesError,
    blob_locations,
    is_blob_column,
)
from videorl_kit.store.frame_codec import BlockChecksumError, FrameCodecError
from videorl_kit.store.row_digest import (
    first_malformed_key,
    is_cache_key,
    malformed_key_problem,
    row_digest,
    row_problem,
    shown_key,
)
from videorl_kit.store.schema import FRAMES_TABLE, budget_hash, cache_key
from videorl_kit.store.tables import StoreTables

_META_COLUMNS: tuple[str, ...] = (
    "cache_key",
    "source_uri",
    "source_content_hash",
    "source_size",
    "source_mtime_ns",
    "modality",
    "budget_hash",
    "budget_json",
    "decoder",
    "decoder_version",
    "sampler_version",
    "cache_schema_version",
    "frames_shape",
    "frames_codec",
    "frames_chunk_sizes",
    "frames_sha256",
    "frames_block_xxh3",
    "decode_warnings",
    "truncation",
    "frame_indices",
    "timestamps_s",
    "source_fps",
    "source_frames",
    "duration_s",
    "source_height",
    "source_width",
    "height",
    "width",
    "patch",
    "temporal_patch",
    "visual_tokens",
    "row_digest",
)


@dataclass(frozen=True)
class CachedFrames:
    """One cached media item: uint8 frames (T×H×W×3, read-only view) plus timing metadata."""

    cache_key: str
    frames: np.ndarray
    frame_indices: list[int]
    timestamps_s: list[float]
    source_fps: float
    source_frames: int
    duration_s: float
    height: int
    width: int
    modality: str
    source_uri: str
    source_content_hash: str
    budget: dict[str, Any]
    budget_hash: str
    decoder: str
    decoder_version: str
    sampler_version: str
    frames_sha256: str
    patch: int
    temporal_patch: int
    visual_tokens: int
    source_height: int | None = None
    source_width: int | None = None
    decode_warnings: tuple[str, ...] = ()
    truncation: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def n_frames(self) -> int:
        """Number of frames T."""
        return int(self.frames.shape[0])

    def video_metadata(self) -> dict[str, Any]:
        """Keyword arguments for ``transformers.video_utils.VideoMetadata``.

        Passing these with ``do_sample_frames=False`` lets Qwen3-VL write the right
        ``<t seconds>`` markers (it divides ``frames_indices`` by ``fps``).

        Example:
            >>> meta = store.get(key).video_metadata()
            >>> meta["fps"], meta["total_num_frames"], meta["frames_indices"]
            (8.0, 32, [0, 10, 21, 31])
        """
        return {
            "total_num_frames": self.source_frames,
            "fps": self.source_fps,
            "width": self.source_width or self.width,
            "height": self.source_height or self.height,
            "duration": self.duration_s,
            "video_backend": self.decoder,
            "frames_indices": list(self.frame_indices),
        }


class _RowIndex:
    """Compact in-memory metadata of every frames row, plus where its bytes are."""

    _INTS = ("source_frames", "height", "width", "patch", "temporal_patch", "visual_tokens",
             "cache_schema_version", "source_size", "source_mtime_ns")  # fmt: skip
    _FLOATS = ("source_fps", "duration_s")
    _STRINGS = ("cache_key", "source_uri", "source_content_hash", "modality", "budget_hash",
                "budget_json", "decoder", "decoder_version", "sampler_version", "frames_sha256",
                "row_digest")  # fmt: skip
    _KEY_INPUTS = ("source_content_hash", "modality", "budget_hash", "budget_json", "decoder",
                   "decoder_version", "sampler_version")  # fmt: skip

    def __init__(self, dataset: lance.LanceDataset):
        table = dataset.to_table(columns=[*_META_COLUMNS, "frames"], with_row_address=True)
        self.table = table.drop_columns(["frames", "_rowaddr"])
        self.n = table.num_rows
        self.strings = {name: table.column(name).combine_chunks() for name in self._STRINGS}
        self.texts = {name: _text_buffers(array) for name, array in self.strings.items()}
        self.keys: list[str] = self.strings["cache_key"].to_pylist()
        self.ints = {n: table.column(n).to_numpy().astype(np.int64) for n in self._INTS}
        self.floats = {n: table.column(n).to_numpy().astype(np.float64) for n in self._FLOATS}
        self.optional = {
            name: table.column(name).to_pylist() for name in ("source_height", "source_width")
        }
        self.lists = {
            name: (
                np.asarray(table.column(name).combine_chunks().offsets),
                np.asarray(table.column(name).combine_chunks().flatten()),
            )
            for name in ("frame_indices", "timestamps_s", "frames_chunk_sizes",
                         "frames_block_xxh3")
        }  # fmt: skip
        self.codecs: list[str] = table.column("frames_codec").to_pylist()
        self.warnings = table.column("decode_warnings").to_pylist()
        self.truncations: list[str | None] = table.column("truncation").to_pylist()
        shapes = table.column("frames_shape").combine_chunks().flatten().to_numpy()
        self.shapes = shapes.reshape(-1, 4).astype(np.int64)
        # each row's own budget (rows that share a budget_json text share the dict); None
        # for a text that is not a JSON object (refused when the row is read)
        self.budgets = {j: _budget_of(j) for j in set(table.column("budget_json").to_pylist())}
        self.budget_hashes: dict[tuple[str, str], str] = {}  # (modality, budget_json) -> hash
        self.locations = blob_locations(
            dataset,
            "frames",
            table.column("frames").to_pylist(),
            table.column("_rowaddr").to_pylist(),
        )

    def list_at(self, name: str, row: int) -> list[Any]:
        return self.array_at(name, row).tolist()

    def array_at(self, name: str, row: int) -> np.ndarray:
        """Row ``row``'s value of list column ``name`` as a view of the index array."""
        offsets, values = self.lists[name]
        return values[offsets[row] : offsets[row + 1]]

    def first_bad_key(self) -> int | None:
        """The position of the first row whose key is not a cache key (None: all are)."""
        return first_malformed_key(self.strings["cache_key"])

    def shape_problem(self, row: int) -> str | None:
        """:func:`~videorl_kit.store.row_digest.row_problem` of row ``row``, or a budget that
        is not a JSON object (checked on every read)."""
        if self.budgets[self.text("budget_json", row)] is None:
            return "has a budget_json that is not a JSON object"
        offsets = {name: self.lists[name][0] for name in self.lists}

        def count(name: str) -> int:
            return int(offsets[name][row + 1] - offsets[name][row])

        i = self.ints
        return row_problem(
            self.shapes[row], i["height"][row], i["width"][row], self.codecs[row],
            count("timestamps_s"), count("frame_indices"), count("frames_chunk_sizes"),
            count("frames_block_xxh3"),
        )  # fmt: skip

    def digest_problem(self, row: int) -> str | None:
        """Why row ``row``'s metadata is not what the build wrote (None when it is): its
        recomputed :func:`~videorl_kit.store.row_digest.row_digest` differs from the stored
        one, or its key is not the hash of the key inputs it holds."""
        i, f = self.ints, self.floats
        values: dict[str, Any] = {name: self.utf8(name, row) for name in self._STRINGS}
        values.update((name, i[name][row]) for name in self._INTS)
        values.update((name, f[name][row]) for name in self._FLOATS)
        for name in self.lists:
            values[name] = self.array_at(name, row)
        values.update(
            frames_shape=self.shapes[row],
            frames_codec=self.codecs[row],
            decode_warnings=self.warnings[row],
            truncation=self.truncations[row],
            source_height=self.optional["source_height"][row],
            source_width=self.optional["source_width"][row],
        )
        if row_digest(values) != bytes(values["row_digest"]).decode("utf-8", "replace"):
            return (
                "has metadata (shape, timing, key or key inputs) that does not match its "
                "row_digest: it was edited or damaged after the build"
            )
        text = {name: self.text(name, row) for name in self._KEY_INPUTS}
        budget = self.budgets[text["budget_json"]]
        if budget is None:
            return "has a budget_json that is not a JSON object"
        key = cache_key(
            content_hash=text["source_content_hash"], modality=text["modality"], budget=budget,
            decoder=text["decoder"], decoder_version=text["decoder_version"],
            sampler_version=text["sampler_version"],
            cache_schema_version=int(values["cache_schema_version"]),
        )  # fmt: skip
        pair = (text["modality"], text["budget_json"])
        if pair not in self.budget_hashes:
            self.budget_hashes[pair] = budget_hash(text["modality"], budget)
        expected_budget = self.budget_hashes[pair]
        if key != self.keys[row]:
            return "is stored under a key that is not the hash of its own key inputs"
        if expected_budget != text["budget_hash"]:
            stored = text["budget_hash"]
            return f"has budget_hash {stored} but its budget hashes to {expected_budget}"
        return None

    def utf8(self, name: str, row: int) -> np.ndarray:
        """Row ``row``'s value of string column ``name``: its UTF-8 bytes, a view of the
        index's Arrow buffer (no Python string is made)."""
        offsets, data = self.texts[name]
        return data[offsets[row] : offsets[row + 1]]

    def text(self, name: str, row: int) -> str:
        """Row ``row``'s value of string column ``name``."""
        return self.utf8(name, row).tobytes().decode("utf-8")

    def item(self, row: int, frames: np.ndarray) -> CachedFrames:
        i, f = self.ints, self.floats

        def text(name: str) -> str:
            return self.text(name, row)

        return CachedFrames(
            cache_key=self.keys[row],
            frames=frames,
            frame_indices=self.list_at("frame_indices", row),
            timestamps_s=self.list_at("timestamps_s", row),
            source_fps=float(f["source_fps"][row]),
            source_frames=int(i["source_frames"][row]),
            duration_s=float(f["duration_s"][row]),
            height=int(i["height"][row]),
            width=int(i["width"][row]),
            modality=text("modality"),
            source_uri=text("source_uri"),
            source_content_hash=text("source_content_hash"),
            budget=self.budgets[text("budget_json")],
            budget_hash=text("budget_hash"),
            decoder=text("decoder"),
            decoder_version=text("decoder_version"),
            sampler_version=text("sampler_version"),
            frames_sha256=text("frames_sha256"),
            patch=int(i["patch"][row]),
            temporal_patch=int(i["temporal_patch"][row]),
            visual_tokens=int(i["visual_tokens"][row]),
            source_height=self.optional["source_height"][row],
            source_width=self.optional["source_width"][row],
            decode_warnings=tuple(self.warnings[row]),
            truncation=self.truncations[row],
        )


def _text_buffers(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, UTF-8 data) of a string array, as numpy views of its Arrow buffers."""
    if pa.types.is_large_string(array.type):
        offset_type = np.int64
    elif pa.types.is_string(array.type):
        offset_type = np.int32
    else:
        raise TypeError(f"expected a string column, got {array.type}")
    _, offsets, data = array.buffers()
    n = len(array)
    if offsets is None:
        return np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    starts = np.frombuffer(offsets, dtype=offset_type)[array.offset : array.offset + n + 1]
    bytes_ = np.zeros(0, dtype=np.uint8) if data is None else np.frombuffer(data, dtype=np.uint8)
    return starts.astype(np.int64), bytes_


def _budget_of(text: str) -> dict[str, Any] | None:
    """The budget a row's ``budget_json`` holds (None when it is not a JSON object)."""
    try:
        budget = json.loads(text)
    except ValueError:
        return None
    return budget if isinstance(budget, dict) else None


def budget_dict(budget: Any) -> dict[str, Any]:
    """The canonical dict of a budget given as a pydantic model or as a dict.

    Example:
        >>> budget_dict({"fps": 2.0})
        {'fps': 2.0}
    """
    return dict(budget) if isinstance(budget, dict) else budget.model_dump(mode="json")


def require_budget(tables: StoreTables, modality: str, budget: Any) -> str:
    """The hash of ``budget``; :class:`StoreMismatchError` unless the store was built with it.

    ``budget`` is a ``VideoBudget``/``ImageBudget`` or its ``model_dump()`` dict. The
    message lists the budgets the store holds and says how to build the missing one. Every
    reader that is given an expected budget (:meth:`FrameStore.open`,
    ``CachedSampleDataset``) checks it here.

    Example:
        >>> import tempfile
        >>> tables = StoreTables.create(tempfile.mkdtemp())
        >>> digest = tables.register_budget("video", {"fps": 2.0})
        >>> require_budget(tables, "video", {"fps": 2.0}) == digest
        True
        >>> require_budget(tables, "video", {"fps": 1.0})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.store.errors.StoreMismatchError: ...: no frames for the expected video ...
    """
    data = budget_dict(budget)
    expected = budget_hash(modality, data)
    known = tables.budgets()
    if expected not in known:
        have = (
            "; ".join(
                f"{h} ({v['modality']}: {json.dumps(v['budget'], sort_keys=True)})"
                for h, v in sorted(known.items())
            )
            or "none"
        )
        raise StoreMismatchError(
            f"{tables.root}: no frames for the expected {modality} budget {expected} "
            f"({json.dumps(data, sort_keys=True)}); the store holds budgets: {have}; "
            f"{rebuild_hint(str(tables.root))} with the spec that declares this budget"
        )
    return expected


class FrameStore:
    """Read-only access to the frames of a store, pinned at one table version.

    Construct it with :meth:`open`. ``check_keys=False`` (for ``cache repair`` only, which
    removes such rows) opens a store that holds a key that is not a cache key.

    Example:
        >>> store = FrameStore.open(store_dir)
        >>> clip = store.get(key)
        >>> clip.frames.shape, clip.source_fps
        ((4, 84, 112, 3), 8.0)
    """

    def __init__(
        self,
        tables: StoreTables,
        *,
        expected_budget_hash: str | None = None,
        version: int | None = None,
        direct_reads: bool = True,
        verify: bool = True,
        check_keys: bool = True,
    ):
        self._tables = tables
        self._dataset = tables.table(FRAMES_TABLE, version=version)
        if not is_blob_column(self._dataset, "frames"):
            raise StoreMismatchError(
                f"{tables.root}: the frames column is not blob-encoded (written by another "
                f"tool or kit version); {rebuild_hint(str(tables.root), schema_changed=True)}"
            )
        self._expected = expected_budget_hash
        self._index = _RowIndex(self._dataset)
        bad = self._index.first_bad_key() if check_keys else None
        if bad is not None:
            problem = malformed_key_problem(bad, self._index.keys[bad])
            raise StoreIntegrityError(
                f"{tables.root}: the store is damaged: {problem}; {repair_hint(str(tables.root))}",
                problem,
            )
        self._position: dict[str, int] = {key: i for i, key in enumerate(self._index.keys)}
        self._verified: set[int] = set()  # rows whose metadata matched their row_digest
        self._bytes = FrameBytesReader(self._dataset, "frames", direct=direct_reads)
        self._direct = direct_reads
        self.verify = verify

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        store_dir: str | Path,
        *,
        budget: Any | None = None,
        modality: str = "video",
        version: int | None = None,
        direct_reads: bool = True,
        verify: bool = True,
    ) -> FrameStore:
        """Open the store in ``store_dir``.

        ``budget`` (a ``VideoBudget``/``ImageBudget`` or its ``model_dump()`` dict), when
        given, must be one of the budgets the store was built with, and every row read must
        carry it; otherwise :class:`StoreMismatchError` says how to build it. A store
        written by another cache-schema version is always refused. ``direct_reads=False``
        reads frames through Lance's blob reader instead of ``preadv`` (slower, same bytes).
        ``verify=False`` skips the per-read checksums of the stored bytes and of each row's
        metadata (see the module notes): only for hot loops over a store you trust.

        Example:
            >>> FrameStore.open("/nonexistent")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            videorl_kit.store.errors.StoreNotFoundError: /nonexistent: not a videorl-kit store ...
        """
        tables = StoreTables.open(store_dir)
        expected = None if budget is None else require_budget(tables, modality, budget)
        return cls(
            tables, expected_budget_hash=expected, version=version, direct_reads=direct_reads,
            verify=verify,
        )  # fmt: skip

    @property
    def version(self) -> int:
        """The frames-table version this reader is pinned at."""
        return int(self._dataset.version)

    @property
    def root(self) -> Path:
        """The store folder."""
        return self._tables.root

    def refresh(self) -> FrameStore:
        """A new reader at the latest committed version (this one stays pinned)."""
        return FrameStore(
            self._tables, expected_budget_hash=self._expected, direct_reads=self._direct,
            verify=self.verify,
        )  # fmt: skip

    # -- keys --------------------------------------------------------------------------------
    def keys(self) -> list[str]:
        """Every cache key in the store (table order).

        Example:
            >>> len(FrameStore.open(store_dir).keys())  # two clips and two stills
            4
        """
        return list(self._index.keys)

    def __len__(self) -> int:
        return self._index.n

    def __contains__(self, key: object) -> bool:
        return key in self._position

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    # -- reads -------------------------------------------------------------------------------
    def _positions(self, keys: Sequence[str]) -> list[int]:
        positions = []
        for key in keys:
            position = self._position.get(key)
            if position is None:
                if not is_cache_key(key):
                    raise MissingKeyError(
                        f"{shown_key(key)} is not a cache key (64 lowercase hex digits), so "
                        f"store {self.root} cannot hold it; a samples row naming it was edited "
                        f"outside the kit: {rebuild_hint(str(self.root))}"
                    )
                raise MissingKeyError(
                    f"cache key {key!r} is not in store {self.root} (version {self.version}); "
                    f"{rebuild_hint(str(self.root))}"
                )
            positions.append(position)
        return positions

    def _check_budget(self, item: CachedFrames) -> CachedFrames:
        if self._expected is not None and item.budget_hash != self._expected:
            raise StoreMismatchError(
                f"{self.root}: row {item.cache_key} was built with budget {item.budget_hash} "
                f"({json.dumps(item.budget, sort_keys=True)}), expected {self._expected}; "
                f"{rebuild_hint(str(self.root))}"
            )
        return item

    def get(self, key: str, *, verify: bool | None = None) -> CachedFrames:
        """Read one cached item (:class:`MissingKeyError` if ``key`` is unknown).

        The stored bytes are checked against their checksums and the row's metadata against
        its digest unless ``verify=False`` (default: the store's setting);
        :class:`StoreIntegrityError` when they differ, or when the row's shape or timing
        cannot describe its frames (checked whatever ``verify`` says).

        Example:
            >>> item = store.get(key)
            >>> item.frames.dtype, len(item.timestamps_s) == item.n_frames
            (dtype('uint8'), True)
            >>> store.get("0" * 64)
            Traceback (most recent call last):
            ...
            videorl_kit.store.errors.MissingKeyError: cache key '000...' is not in store ...
        """
        return self.get_many([key], verify=verify)[0]

    def _damaged(self, position: int, problem: str) -> StoreIntegrityError:
        index = self._index
        source = index.text("source_uri", position)
        return StoreIntegrityError(
            f"{self.root}: frames row {index.keys[position]} (source {source}) {problem}; "
            f"{repair_hint(str(self.root))}",
            problem,
        )

    def _check_metadata(self, position: int, check: bool) -> None:
        """:class:`StoreIntegrityError` when a row's metadata cannot describe its frames
        (always checked) or, when ``check``, does not match its ``row_digest``.

        The digest is recomputed from the in-memory index the first time a row is read with
        verification and remembered: the index does not change while the reader lives.
        """
        index = self._index
        problem = index.shape_problem(position)
        if problem is None and check and position not in self._verified:
            problem = index.digest_problem(position)
            if problem is None:
                self._verified.add(position)
        if problem is not None:
            raise self._damaged(position, problem)

    def _frames(self, position: int, check: bool) -> np.ndarray:
        """The decoded frames of one row; :class:`StoreIntegrityError` when they cannot be."""
        index = self._index
        try:
            return self._bytes.frames(
                index.locations[position],
                index.shapes[position].tolist(),
                index.codecs[position],
                index.list_at("frames_chunk_sizes", position),
                index.list_at("frames_block_xxh3", position) if check else None,
            )
        except BlockChecksumError as exc:
            raise self._damaged(position, f"is corrupt: {exc}") from None
        except FrameCodecError as exc:
            raise self._damaged(position, f"{exc}; the store is damaged") from None
        except MissingBytesError as exc:
            raise self._damaged(position, f"cannot be read: {exc}") from None

    def get_many(self, keys: Sequence[str], *, verify: bool | None = None) -> list[CachedFrames]:
        """Read several items in file order; results follow the order of ``keys``.

        Repeated keys are read once and returned at every position they appear. ``verify``
        as in :meth:`get`.

        Example:
            >>> k1, k2 = store.keys()[:2]
            >>> items = store.get_many([k2, k1, k2])
            >>> [i.cache_key for i in items] == [k2, k1, k2]
            True
        """
        if not keys:
            return []
        positions = self._positions(keys)
        index = self._index
        unique = sorted(
            set(positions),
            key=lambda p: (index.locations[p].path or "", index.locations[p].position),
        )
        check = self.verify if verify is None else verify
        by_position: dict[int, CachedFrames] = {}
        for position in unique:
            self._check_metadata(position, check)
            frames = self._frames(position, check)
            frames.flags.writeable = False  # shared by repeated keys: never modify in place
            by_position[position] = self._check_budget(index.item(position, frames))
        return [by_position[p] for p in positions]

    def metadata(self) -> pa.Table:
        """Metadata columns of every row (no frames), as an Arrow table in key order."""
        return self._index.table
