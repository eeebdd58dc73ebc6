"""``build_cache``: decode every distinct media item of some specs once into a Lance store.

The build, step by step:

1. Collect the inputs (:mod:`videorl_kit.store.inputs` defines them precisely): distinct
   (media file, budget) items plus data rows skipped by a row rule.
2. Hash every media file's content (threads) and compute its cache key. A file that cannot
   be read fails right there, with its reason recorded in ``failures``.
3. Read the *committed* state: keys in ``frames`` and rows in ``failures``. To do =
   inputs − cached keys − recorded failures (unless ``retry_failed``).
4. Decode the to-do items (one task per distinct cache key) in N worker processes
   (``engine="local"``) or through Ray Data (``engine="ray"``: Ray workers decode and
   write the frames rows, one commit per chunk of ``batch_items`` tasks;
   :mod:`videorl_kit.store.engine_ray`), committing in bounded batches
   (:mod:`videorl_kit.store.commit`). A worker crash fails only its own item; a
   decode that hangs past ``item_timeout_s`` is killed with its worker (which is replaced)
   and fails only its own item.
5. Write the ``samples`` table, then return a :class:`BuildSummary` whose invariant
   ``n_input == n_ok + n_failed + n_skipped`` is checked (a violation is a bug and raises).

Re-running the same build decodes nothing and commits nothing (every table keeps its
version); killing it at any moment loses at most the uncommitted batch. See
:func:`build_cache` for an example.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from videorl_kit.errors import UserError
from videorl_kit.store.commit import (
    DEFAULT_BATCH_BYTES,
    DEFAULT_BATCH_ITEMS,
    DEFAULT_BATCH_SECONDS,
    BatchCommitter,
    CommitEvent,
)
from videorl_kit.store.defaults import DEFAULT_ITEM_TIMEOUT_S, EXIT_BUILD_FAILED
from videorl_kit.store.engine_ray import FRAMES_COMMITTED
from videorl_kit.store.errors import BuildInvariantError
from videorl_kit.store.inputs import BuildInputs, MediaItem, collect_inputs
from videorl_kit.store.samples import ItemOutcome, SampleLedger, write_samples
from videorl_kit.store.schema import (
    CACHE_SCHEMA_VERSION,
    FAILURES_TABLE,
    FRAMES_TABLE,
    cache_key,
    canonical_json,
    failure_id,
)
from videorl_kit.store.tables import StoreTables
from videorl_kit.store.worker import DecodeFn, DecodeResult, DecodeTask, ErrorInfo, decode_task

if TYPE_CHECKING:
    from videorl_kit.spec.models import TaskSpec
    from videorl_kit.store.engine_ray import RayFramesBuild

Engine = Literal["local", "ray"]


@dataclass(frozen=True)
class BuildProgress:
    """A progress report: ``done`` of ``total`` inputs settled so far, in ``phase``."""

    phase: str  # "hashing" | "decoding" | "samples" | "done"
    done: int
    total: int
    n_ok: int
    n_failed: int
    n_skipped: int
    n_already_cached: int
    current: str | None = None


ProgressFn = Callable[[BuildProgress], None]


@dataclass
class BuildSummary:
    """What a build did. ``n_input == n_ok + n_failed + n_skipped`` always holds.

    ``n_already_cached`` counts the ok inputs that were already in the store before this
    build (a subset of ``n_ok``); ``n_decoded`` the distinct items decoded now. With
    ``engine="ray"``, ``engine_fallback`` says why the local engine finished the build
    (None when Ray did all of it) and ``engine_stats`` what Ray did.

    Example:
        >>> s = BuildSummary(n_input=3, n_ok=1, n_failed=1, n_skipped=1)
        >>> s.invariant_holds, list(s.as_dict())[:6]
        (True, ['n_input', 'n_ok', 'n_failed', 'n_skipped', 'n_already_cached', 'seconds'])
    """

    n_input: int = 0
    n_ok: int = 0
    n_failed: int = 0
    n_skipped: int = 0
    n_already_cached: int = 0
    seconds: float = 0.0
    n_media_items: int = 0
    n_skipped_rows: int = 0
    n_decoded: int = 0
    n_new_failures: int = 0
    n_known_failures: int = 0
    n_retried: int = 0
    decode_warnings: dict[str, list[str]] = field(default_factory=dict)  # source -> warnings
    skipped_by_rule: dict[str, int] = field(default_factory=dict)
    failed_by_class: dict[str, int] = field(default_factory=dict)
    samples: SampleLedger = field(default_factory=SampleLedger)
    store: str = ""
    engine: str = "local"
    decoder: str = "pyav"
    workers: int = 1
    item_timeout_s: float | None = None
    n_commits: int = 0
    bytes_committed: int = 0
    frames_version: int = 0
    cache_schema_version: int = CACHE_SCHEMA_VERSION
    engine_fallback: str | None = None  # engine="ray": why (some) items were decoded locally
    engine_stats: dict[str, Any] = field(default_factory=dict)  # engine="ray": RayBuildStats

    @property
    def invariant_holds(self) -> bool:
        """``n_input == n_ok + n_failed + n_skipped``."""
        return self.n_input == self.n_ok + self.n_failed + self.n_skipped

    def exit_code(self, *, fail_on_error: bool = False) -> int:
        """0, or :data:`EXIT_BUILD_FAILED` when no input ended ok (every one failed or was
        skipped) or, with ``fail_on_error``, when any input failed to decode.

        A build with no inputs (text-only data) is a success.

        Example:
            >>> BuildSummary(n_input=2, n_ok=0, n_failed=2).exit_code()
            3
            >>> BuildSummary(n_input=2, n_ok=1, n_failed=1).exit_code()
            0
            >>> BuildSummary(n_input=2, n_ok=1, n_failed=1).exit_code(fail_on_error=True)
            3
        """
        nothing_usable = self.n_input > 0 and self.n_ok == 0
        return EXIT_BUILD_FAILED if nothing_usable or (fail_on_error and self.n_failed) else 0

    def as_dict(self) -> dict[str, Any]:
        """JSON form; the first six keys are the fixed contract of ``build-cache --json``."""
        return {
            "n_input": self.n_input,
            "n_ok": self.n_ok,
            "n_failed": self.n_failed,
            "n_skipped": self.n_skipped,
            "n_already_cached": self.n_already_cached,
            "seconds": round(self.seconds, 3),
            "invariant": "n_input == n_ok + n_failed + n_skipped",
            "invariant_holds": self.invariant_holds,
            "n_media_items": self.n_media_items,
            "n_skipped_rows": self.n_skipped_rows,
            "n_decoded": self.n_decoded,
            "n_new_failures": self.n_new_failures,
            "n_known_failures": self.n_known_failures,
            "n_retried": self.n_retried,
            "decode_warnings": self.decode_warnings,
            "skipped_by_rule": dict(sorted(self.skipped_by_rule.items())),
            "failed_by_class": dict(sorted(self.failed_by_class.items())),
            "samples": self.samples.as_dict(),
            "store": self.store,
            "engine": self.engine,
            "engine_fallback": self.engine_fallback,
            "decoder": self.decoder,
            "workers": self.workers,
            "item_timeout_s": self.item_timeout_s,
            "n_commits": self.n_commits,
            "bytes_committed": self.bytes_committed,
            "frames_version": self.frames_version,
            "cache_schema_version": self.cache_schema_version,
            "engine_stats": self.engine_stats,
        }


# -- identity -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Identity:
    content_hash: str | None
    size: int
    mtime_ns: int
    error: ErrorInfo | None


HashMemo = dict[tuple[str, int, int], str]
"""(path, size, mtime_ns) -> content hash, from the committed tables."""


def _identify_path(path: str, memo: HashMemo) -> _Identity:
    """Content hash of ``path``; reused from ``memo`` while its size and mtime are unchanged."""
    from videorl_kit.media.errors import MissingFileError
    from videorl_kit.media.hashing import file_content_hash

    try:
        try:
            before = os.stat(path)
        except FileNotFoundError:
            raise MissingFileError(path, "file does not exist") from None
        known = memo.get((path, before.st_size, before.st_mtime_ns))
        if known is not None:
            return _Identity(known, before.st_size, before.st_mtime_ns, None)
        digest = file_content_hash(path)
        after = os.stat(path)
        if (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns):
            raise OSError(f"{path}: changed while it was being hashed")
        return _Identity(digest, after.st_size, after.st_mtime_ns, None)
    except Exception as exc:  # missing, unreadable, a directory, ...
        return _Identity(None, -1, -1, ErrorInfo.from_exception(exc))


def decoder_identity(modality: str, video_decoder: str = "pyav") -> tuple[str, str]:
    """(decoder name, decoder version) that decodes ``modality`` in a build.

    Videos decode with ``video_decoder`` (PyAV by default; decord or torchcodec when asked),
    images with Pillow. The version string names the library, the codec library and
    media's sampler version, and is part of the cache key, so frames from different
    decoders never share a row.

    Raises :class:`UserError` when the video decoder is unknown or cannot be imported.

    Example:
        >>> decoder_identity("video")[0], decoder_identity("image", "decord")[0]
        ('pyav', 'pillow')
        >>> decoder_identity("video", "ffmpeg-cli")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.errors.UserError: --decoder 'ffmpeg-cli' is unknown; choose one of pyav, ...
    """
    from videorl_kit.media.decode import DECODERS, decoder_version

    if video_decoder not in DECODERS:
        raise UserError(
            f"--decoder {video_decoder!r} is unknown; choose one of {', '.join(DECODERS)}"
        )
    name = video_decoder if modality == "video" else "pillow"
    try:
        return name, decoder_version(name)
    except (ImportError, OSError, RuntimeError) as exc:  # torchcodec without FFmpeg libraries
        raise UserError(
            f"--decoder {name} cannot be loaded ({type(exc).__name__}: {exc}); install it with "
            f"pip install 'videorl-kit[{name}]', or build with the default --decoder pyav"
        ) from None


# -- engines --------------------------------------------------------------------------------


def _run_engine(
    engine: Engine,
    tasks: list[DecodeTask],
    *,
    workers: int,
    decode_fn: DecodeFn,
    mp_context: str,
    item_timeout_s: float | None,
    tables: StoreTables,
    batch_items: int,
    on_commit: Callable[[CommitEvent], None] | None,
) -> tuple[Iterator[DecodeResult], RayFramesBuild | None]:
    """The engine's results, and the Ray build (None for ``"local"``).

    The local engine only decodes (the builder's committer writes every row); the Ray
    engine also writes and commits the frames rows of ok items on its workers, in chunks
    of ``batch_items`` tasks, and marks those results ``extra[FRAMES_COMMITTED]``.
    """
    if engine == "local":
        from videorl_kit.store.engine_local import run_local

        return run_local(
            tasks, workers=workers, decode_fn=decode_fn, mp_context=mp_context,
            item_timeout_s=item_timeout_s,
        ), None  # fmt: skip
    if engine == "ray":
        from videorl_kit.store.engine_ray import RayFramesBuild

        ray_build = RayFramesBuild(
            tables, workers=workers, decode_fn=decode_fn, chunk_items=batch_items,
            mp_context=mp_context, item_timeout_s=item_timeout_s, on_commit=on_commit,
        )  # fmt: skip
        return ray_build.run(tasks), ray_build
    raise UserError(f"unknown engine {engine!r}; use 'local' or 'ray'")


# -- the build ------------------------------------------------------------------------------


def _load_specs(specs: Iterable[TaskSpec | str | Path]) -> list[TaskSpec]:
    from videorl_kit.spec import load_spec

    return [s if not isinstance(s, str | Path) else load_spec(s) for s in specs]


class _Build:
    """State of one build run (kept in one place so ``build_cache`` stays readable)."""

    def __init__(
        self,
        inputs: BuildInputs,
        tables: StoreTables,
        *,
        retry_failed: bool,
        progress: ProgressFn | None,
        max_visual_tokens: int | None,
    ):
        self.inputs = inputs
        self.tables = tables
        self.retry_failed = retry_failed
        self.progress = progress
        self.max_visual_tokens = max_visual_tokens
        self.outcomes: dict[MediaItem, ItemOutcome] = {}
        self.summary = BuildSummary()
        self.failed_by_class: Counter[str] = Counter()
        self.skipped_by_rule: Counter[str] = Counter({})
        self.known_failures: dict[str, dict[str, Any]] = {}
        self.cached_tokens: dict[str, int] = {}
        self.hash_memo: HashMemo = {}
        self.counts: Counter[str] = Counter()
        self.n_cached = 0
        self.n_skipped_rows = len(inputs.skipped_rows)
        self._last_phase = ""
        self._last_report = 0.0

    # bookkeeping -------------------------------------------------------------------------
    def settle(self, item: MediaItem, outcome: ItemOutcome) -> None:
        if item in self.outcomes:
            raise BuildInvariantError(f"{item.source_uri}: settled twice")
        self.outcomes[item] = outcome
        self.counts[outcome.status] += 1
        self.n_cached += outcome.already_cached
        if outcome.status == "failed":
            self.failed_by_class[outcome.rule or "Error"] += 1
        elif outcome.status == "skipped":
            self.skipped_by_rule[outcome.rule or "unknown"] += 1
        self.report("decoding", current=item.source_uri)

    def report(self, phase: str, current: str | None = None, *, force: bool = False) -> None:
        """Call the progress callback (at most every 0.1 s within a phase, unless forced)."""
        if self.progress is None:
            return
        now = time.monotonic()
        if not force and phase == self._last_phase and now - self._last_report < 0.1:
            return
        self._last_phase, self._last_report = phase, now
        self.progress(
            BuildProgress(
                phase=phase,
                done=len(self.outcomes) + self.n_skipped_rows,
                total=self.inputs.n_input,
                n_ok=self.counts["ok"],
                n_failed=self.counts["failed"],
                n_skipped=self.counts["skipped"] + self.n_skipped_rows,
                n_already_cached=self.n_cached,
                current=current,
            )
        )

    def load_committed(self) -> None:
        identity = ["source_uri", "source_size", "source_mtime_ns", "source_content_hash"]
        frames = self.tables.table(FRAMES_TABLE).to_table(
            columns=["cache_key", "visual_tokens", *identity]
        )
        self.cached_tokens = dict(
            zip(
                frames.column("cache_key").to_pylist(),
                frames.column("visual_tokens").to_pylist(),
                strict=True,
            )
        )
        failures = self.tables.table(FAILURES_TABLE).to_table(
            columns=[
                *identity,
                "failure_id",
                "budget_hash",
                "cache_key",
                "attempts",
                "first_failed_at",
                "error_class",
                "message",
            ]
        )
        self.known_failures = {row["failure_id"]: row for row in failures.to_pylist()}
        for table in (frames, failures):
            for uri, size, mtime, digest in zip(
                *(table.column(c).to_pylist() for c in identity), strict=True
            ):
                if digest:
                    self.hash_memo[(uri, size, mtime)] = digest

    def failure_row(
        self, item: MediaItem, key: str | None, ident: _Identity, error: ErrorInfo,
        decoder: str, decoder_version: str,
    ) -> dict[str, Any]:  # fmt: skip
        fid = failure_id(item.source_uri, key)
        previous = self.known_failures.get(fid)
        now = datetime.now(UTC)
        return {
            "failure_id": fid,
            "source_uri": item.source_uri,
            "cache_key": key or "",
            "source_content_hash": ident.content_hash or "",
            "source_size": ident.size,
            "source_mtime_ns": ident.mtime_ns,
            "modality": item.modality,
            "budget_hash": item.budget_hash,
            "budget_json": canonical_json(item.budget),
            "error_class": error.error_class,
            "message": error.message,
            "traceback": error.traceback,
            "decoder": decoder,
            "decoder_version": decoder_version,
            "attempts": int(previous["attempts"]) + 1 if previous else 1,
            "first_failed_at": previous["first_failed_at"] if previous else now,
            "last_failed_at": now,
            "cache_schema_version": CACHE_SCHEMA_VERSION,
        }

    def known_failure(self, fid: str) -> ItemOutcome | None:
        """The outcome of an already recorded failure, unless retrying."""
        row = self.known_failures.get(fid)
        if row is None or self.retry_failed:
            return None
        self.summary.n_known_failures += 1
        return ItemOutcome(
            "failed", cache_key=row["cache_key"] or None, rule=row["error_class"],
            detail=f"{row['error_class']}: {row['message']}",
        )  # fmt: skip


def build_cache(
    specs: Iterable[TaskSpec | str | Path],
    store_dir: str | Path,
    *,
    workers: int | None = None,
    retry_failed: bool = False,
    engine: Engine = "local",
    progress: ProgressFn | None = None,
    max_visual_tokens: int | None = None,
    max_prompt_tokens: int | None = None,
    batch_items: int = DEFAULT_BATCH_ITEMS,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    batch_seconds: float = DEFAULT_BATCH_SECONDS,
    decode_fn: DecodeFn | None = None,
    mp_context: str = "forkserver",
    on_commit: Callable[[CommitEvent], None] | None = None,
    rehash: bool = False,
    item_timeout_s: float | None = DEFAULT_ITEM_TIMEOUT_S,
    decoder: str = "pyav",
) -> BuildSummary:
    """Decode every distinct (media file, budget) of ``specs`` once into the store at ``store_dir``.

    Args:
        specs: loaded :class:`TaskSpec` objects or paths of spec files.
        store_dir: the store folder (created if needed).
        workers: decoding processes (default: CPU count).
        retry_failed: decode again the items recorded in ``failures`` (``attempts`` grows).
        engine: ``"local"`` (process pool) or ``"ray"`` (Ray Data on a local Ray instance
            started for the build when none is running; Ray workers decode and write the
            frames rows). If the Ray pipeline fails, the rest is built locally and
            ``BuildSummary.engine_fallback`` says why.
        progress: called with a :class:`BuildProgress` after each settled input.
        max_visual_tokens: skip (rule ``over_token_budget``) media items with more visual
            tokens than this.
        max_prompt_tokens: mark samples whose estimated prompt is longer as skipped.
        batch_items, batch_bytes, batch_seconds: commit bounds (a crash loses at most one
            batch). The Ray engine commits its frames rows per chunk of ``batch_items``
            tasks.
        decode_fn: advanced: a picklable top-level ``DecodeTask -> DecodeResult`` function
            replacing :func:`videorl_kit.store.worker.decode_task` (fault injection in tests,
            other decoders).
        mp_context: multiprocessing start method of the local engine (never ``fork``).
        on_commit: called after each batch commit.
        rehash: hash every file again even when its size and mtime match a stored row (by
            default a stored content hash is reused while both are unchanged).
        item_timeout_s: wall-clock limit for decoding one media item (None or 0: none).
            A decoder that hangs past it is killed with its worker process, which is
            replaced; the item fails with ``DecodeTimeoutError`` ("decode timed out after
            S s") and, like every failure, is retried only with ``retry_failed``.
        decoder: the video decoder, one of ``media.decode.DECODERS`` (``"pyav"``, the
            default, seeks and skips frames it does not need; ``"decord"`` and
            ``"torchcodec"`` read frames by index as qwen-vl-utils does with them). It is
            part of the cache key: rows from another decoder are not reused.

    Returns:
        A :class:`BuildSummary`; ``n_input == n_ok + n_failed + n_skipped`` is checked.

    Example:
        >>> import json, tempfile
        >>> from videorl_kit.synth import write_demo_task
        >>> folder = tempfile.mkdtemp()
        >>> spec = write_demo_task(folder, n_per_task=1)
        >>> row = {"problem": "How many?", "answer": "2", "problem_type": "numerical",
        ...        "videos": ["gone.mp4"]}  # a row whose video is missing
        >>> with open(f"{folder}/demo.jsonl", "a") as rows:
        ...     _ = rows.write(json.dumps(row) + "\\n")
        >>> s = build_cache([spec], f"{folder}/store", workers=1)
        >>> (s.n_input, s.n_ok, s.n_failed, s.n_skipped, s.n_already_cached)
        (3, 2, 1, 0, 0)
        >>> s.failed_by_class, s.exit_code()
        ({'MissingFileError': 1}, 0)
    """
    started = time.perf_counter()
    if mp_context == "fork":
        raise UserError(
            "mp_context 'fork' is unsafe with decoder and Lance threads; use forkserver or spawn"
        )
    workers = max(1, workers or os.cpu_count() or 1)
    if item_timeout_s is not None and item_timeout_s < 0:
        raise UserError(f"item timeout must be >= 0 seconds (0: no limit), not {item_timeout_s}")
    item_timeout_s = float(item_timeout_s) if item_timeout_s else None
    identities_by_modality = {m: decoder_identity(m, decoder) for m in ("video", "image")}
    inputs = collect_inputs(_load_specs(specs))
    tables = StoreTables.create(store_dir)
    build = _Build(
        inputs, tables, retry_failed=retry_failed, progress=progress,
        max_visual_tokens=max_visual_tokens,
    )  # fmt: skip
    summary = build.summary
    for item in {(i.modality, i.budget_hash): i for i in inputs.items}.values():
        tables.register_budget(item.modality, item.budget)
    build.load_committed()
    committer = BatchCommitter(
        tables, batch_items=batch_items, batch_bytes=batch_bytes,
        batch_seconds=batch_seconds, on_commit=on_commit,
    )  # fmt: skip

    # identify: hash content, compute keys, settle what is already known
    build.report("hashing", force=True)
    uris = list(dict.fromkeys(item.source_uri for item in inputs.items))
    with ThreadPoolExecutor(max_workers=min(8, max(2, workers))) as pool:
        memo = {} if rehash else build.hash_memo
        identified = pool.map(lambda uri: _identify_path(uri, memo), uris)
        by_uri = dict(zip(uris, identified, strict=True))
    identities = [by_uri[item.source_uri] for item in inputs.items]
    groups: dict[str, list[MediaItem]] = {}
    tasks: dict[str, DecodeTask] = {}
    for item, ident in zip(inputs.items, identities, strict=True):
        decoder_name, decoder_version = identities_by_modality[item.modality]
        if ident.content_hash is None:
            assert ident.error is not None
            outcome = build.known_failure(failure_id(item.source_uri, None))
            if outcome is None:
                committer.add_failure(
                    build.failure_row(item, None, ident, ident.error, decoder_name, decoder_version)
                )
                summary.n_new_failures += 1
                outcome = ItemOutcome(
                    "failed", rule=ident.error.error_class,
                    detail=f"{ident.error.error_class}: {ident.error.message}",
                )  # fmt: skip
            build.settle(item, outcome)
            continue
        key = cache_key(
            content_hash=ident.content_hash, modality=item.modality, budget=item.budget,
            decoder=decoder_name, decoder_version=decoder_version,
        )  # fmt: skip
        if key in build.cached_tokens:
            build.settle(
                item,
                ItemOutcome("ok", key, already_cached=True, visual_tokens=build.cached_tokens[key]),
            )
            continue
        known = build.known_failure(failure_id(item.source_uri, key))
        if known is not None:
            build.settle(item, known)
            continue
        if failure_id(item.source_uri, key) in build.known_failures:
            summary.n_retried += 1
        groups.setdefault(key, []).append(item)
        if key not in tasks:
            tasks[key] = DecodeTask(
                source_uri=item.source_uri, modality=item.modality, budget=item.budget,
                budget_hash=item.budget_hash, content_hash=ident.content_hash, cache_key=key,
                decoder=decoder_name, decoder_version=decoder_version, size=ident.size,
                mtime_ns=ident.mtime_ns, max_visual_tokens=max_visual_tokens,
            )  # fmt: skip

    # decode what is left
    results, ray_build = _run_engine(
        engine, list(tasks.values()), workers=workers, decode_fn=decode_fn or decode_task,
        mp_context=mp_context, item_timeout_s=item_timeout_s, tables=tables,
        batch_items=batch_items, on_commit=on_commit,
    )  # fmt: skip
    for result in results:
        task = result.task
        for item in groups[task.cache_key]:
            if result.status == "ok":
                assert result.row is not None
                if not result.extra.get(FRAMES_COMMITTED):  # the Ray engine wrote it already
                    committer.add_frames(result.row)
                outcome = ItemOutcome(
                    "ok", task.cache_key, visual_tokens=result.row["visual_tokens"]
                )
            elif result.status == "skipped":
                outcome = ItemOutcome(
                    "skipped", task.cache_key, rule=result.skip_rule, detail=result.skip_detail
                )
            else:
                error = result.error or ErrorInfo("Error", "unknown error", "")
                committer.add_failure(
                    build.failure_row(
                        item, task.cache_key, by_uri[item.source_uri], error, task.decoder,
                        task.decoder_version,
                    )
                )  # fmt: skip
                summary.n_new_failures += 1
                outcome = ItemOutcome(
                    "failed", task.cache_key, rule=error.error_class,
                    detail=f"{error.error_class}: {error.message}",
                )  # fmt: skip
            build.settle(item, outcome)
        if result.status == "ok":
            summary.n_decoded += 1
            if result.row and result.row.get("decode_warnings"):
                summary.decode_warnings[task.source_uri] = list(result.row["decode_warnings"])
    # failure rows made obsolete: their (file, budget) is cached now, after a successful
    # retry, a fixed file (new content, new key) or a crash between two commits
    cached_now = {
        (item.source_uri, item.budget_hash)
        for item, outcome in build.outcomes.items()
        if outcome.status == "ok"
    }
    for fid, row in build.known_failures.items():
        if (row["source_uri"], row["budget_hash"]) in cached_now:
            committer.resolve_failure(fid)
    committer.flush()

    # samples
    build.report("samples", force=True)
    summary.samples = write_samples(
        tables, inputs.rows, build.outcomes, max_prompt_tokens=max_prompt_tokens
    )
    tables.record_versions()  # a later open notices if a newer manifest goes missing

    # summary + invariant
    values = list(build.outcomes.values())
    skipped_rows = inputs.skipped_rows
    build.skipped_by_rule.update(row.skip_rule for row in skipped_rows)
    summary.n_input = inputs.n_input
    summary.n_media_items = len(inputs.items)
    summary.n_skipped_rows = len(skipped_rows)
    summary.n_ok = sum(v.status == "ok" for v in values)
    summary.n_failed = sum(v.status == "failed" for v in values)
    summary.n_skipped = sum(v.status == "skipped" for v in values) + len(skipped_rows)
    summary.n_already_cached = sum(v.already_cached for v in values)
    summary.skipped_by_rule = dict(build.skipped_by_rule)
    summary.failed_by_class = dict(build.failed_by_class)
    summary.store = str(tables.root)
    summary.engine = engine
    summary.decoder = decoder
    summary.workers = workers
    summary.item_timeout_s = item_timeout_s
    summary.n_commits = committer.n_commits
    summary.bytes_committed = committer.bytes_committed
    if ray_build is not None:
        summary.n_commits += ray_build.stats.frames_commits
        summary.bytes_committed += ray_build.stats.bytes_written
        summary.engine_fallback = ray_build.stats.fallback
        summary.engine_stats = ray_build.stats.as_dict()
    summary.frames_version = int(tables.table(FRAMES_TABLE).version)
    summary.seconds = time.perf_counter() - started
    missing = [i.source_uri for i in inputs.items if i not in build.outcomes]
    if missing or not summary.invariant_holds or not summary.samples.invariant_holds:
        raise BuildInvariantError(
            f"build accounting is inconsistent (a bug): n_input={summary.n_input} "
            f"n_ok={summary.n_ok} n_failed={summary.n_failed} n_skipped={summary.n_skipped}; "
            f"unsettled: {missing[:5]}"
        )
    build.report("done", force=True)
    return summary
