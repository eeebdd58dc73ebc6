"""Build the frames table through Ray Data (``engine="ray"``): Ray workers decode and write.

The driver plans the work (the builder hands over only keys not yet in the frames table)
and cuts it into chunks of ``chunk_items`` tasks (the builder's commit bound,
``batch_items``). Each chunk goes through one Ray Data pipeline:

1. **decode**: ``ray.data.from_items`` over the chunk's tasks, then ``map_batches`` of
   :class:`_DecodeBlock` (one CPU per block task). A block task decodes its items in a
   supervised child process (:func:`~videorl_kit.store.engine_local.run_local`, one
   worker), so a decoder that hangs is killed after ``item_timeout_s`` and one that crashes
   fails only its own item, exactly as in a local build. The chunk is ``materialize``-d:
   the decoded blocks (frames included) stay in the Ray object store, on the workers.
2. **metadata to the driver**: ``select_columns`` of the status columns only (status, the
   pickled :class:`~videorl_kit.store.worker.DecodeResult` *without* its frame bytes, the
   pids of the processes that decoded it). No frame byte crosses to the driver.
3. **write**: the ok rows, cut to the frames-table columns and stamped with ``created_at``
   (:func:`frames_rows`), are written with ``lance_ray.write_lance(mode="append")`` with the
   kit's frames schema (field metadata: the blob-encoded ``frames`` column) and the table's
   data-storage version. Its write tasks run on the Ray workers, each writing one fragment
   data file; the driver then commits a single Lance ``Append`` transaction for the whole
   chunk, only after every write task succeeded. A crash loses at most one chunk.
4. **check**: the chunk's keys are read back (:func:`settle_keys`): a key committed twice
   (e.g. another builder committed it meanwhile) keeps its earliest row and the later
   copies are deleted; a key missing after the commit fails with
   :class:`FramesNotCommittedError` (a lost write; retried with ``retry_failed``).
5. The results go back to the builder, which records failures, skips and samples exactly
   as for the local engine. Ok results carry ``extra[FRAMES_COMMITTED] = True`` so the
   builder does not insert their frames a second time.

Why ``lance_ray.write_lance`` and not ``ray.data.Dataset.write_lance``: Ray 2.60's own Lance
sink passes ``storage_options_provider`` to ``lance.LanceDataset`` and ``write_fragments``,
which pylance 14 (the kit's Lance) no longer accepts, so every write fails with a
``TypeError``. ``lance-ray`` (the Lance project's Ray integration) has the same datasink
design (fragments written in tasks, one commit on the driver) and follows the pylance API.

**Idempotency and crash safety.** The builder plans only uncommitted keys. A retried Ray
task writes new data files, but only the fragments returned by the successful attempts
reach the single ``Append`` commit, so a retry never duplicates rows. A build killed
before a chunk's commit leaves only data files that no table version references (readers
never see them); a resumed build decodes that chunk again. A build killed between a
commit and its duplicate check can leave duplicates: every Ray build first runs
:func:`remove_duplicate_keys` over the whole table (keeping the earliest row per key).

**When the Ray pipeline fails** (a Ray worker lost beyond its retries, the decode function
not importable on the workers, a write error, Ray failing to start), the build does not
stop and does not pretend: the chunk that failed and every later one are decoded by the
local engine and committed by the builder's committer (``merge_insert``, so keys the
failed chunk did commit are not inserted twice), and :attr:`RayBuildStats.fallback` says
why and how many items; the build summary carries it as ``engine_fallback`` and the CLI
prints it as a warning. Failing those items instead would record an infrastructure problem
as a property of the media, retried only with ``--retry-failed``.

When no Ray instance is running, one is started for the build (``ray.init(num_cpus=workers)``)
and shut down afterwards.

Example:
    >>> import tempfile
    >>> from videorl_kit.store.tables import StoreTables
    >>> from videorl_kit.store.worker import decode_task
    >>> engine = RayFramesBuild(StoreTables.create(tempfile.mkdtemp()), workers=2,
    ...                         decode_fn=decode_task)
    >>> list(engine.run([]))  # no tasks: Ray is not started
    []
    >>> engine.stats.chunks, engine.stats.fallback
    (0, None)
"""

from __future__ import annotations

import logging
import os
import pickle
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from videorl_kit.errors import UserError, VideoRLKitError
from videorl_kit.store.commit import CommitEvent, sql_in
from videorl_kit.store.defaults import DEFAULT_ITEM_TIMEOUT_S, DEFAULT_MP_CONTEXT
from videorl_kit.store.schema import FRAMES_SCHEMA, FRAMES_TABLE
from videorl_kit.store.tables import StoreTables
from videorl_kit.store.worker import DecodeFn, DecodeResult, DecodeTask, ErrorInfo

FRAMES_COMMITTED = "frames_committed"
"""``DecodeResult.extra`` key: True when the engine already committed the item's frames row."""
DECODED_BY_PID = "decoded_by_pid"
"""``DecodeResult.extra`` key: pid of the process that ran the decode function."""
RAY_TASK_PID = "ray_task_pid"
"""``DecodeResult.extra`` key: pid of the Ray worker that ran the item's decode block."""
FRAMES_NBYTES = "frames_nbytes"
"""``DecodeResult.extra`` key: bytes of the (encoded) frames cell written for the item."""

_CREATED_AT = "created_at"
_ROW_COLUMNS = [f.name for f in FRAMES_SCHEMA if f.name != _CREATED_AT]
_META_COLUMNS = ["cache_key", "status", "result"]

DECODED_SCHEMA = pa.schema(
    [pa.field(f.name, f.type, nullable=True) for f in FRAMES_SCHEMA if f.name != _CREATED_AT]
    + [pa.field("status", pa.string()), pa.field("result", pa.binary())]
)
"""A decode block's output: the frames-table columns (null unless ok) + status + metadata."""


class FramesNotCommittedError(VideoRLKitError):
    """An ok item's frames row is not in the table after its chunk's commit (a lost write)."""


@dataclass
class RayBuildStats:
    """What the Ray engine did, for the build summary and tests.

    Example:
        >>> RayBuildStats(chunks=2, frames_commits=2, rows_written=5).as_dict()["rows_written"]
        5
    """

    chunks: int = 0
    frames_commits: int = 0
    rows_written: int = 0
    bytes_written: int = 0
    duplicates_removed: int = 0
    decode_pids: set[int] = field(default_factory=set)
    ray_task_pids: set[int] = field(default_factory=set)
    driver_pid: int = field(default_factory=os.getpid)
    fallback: str | None = None
    fallback_items: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON form (pid sets as sorted lists)."""
        return {
            "chunks": self.chunks,
            "frames_commits": self.frames_commits,
            "rows_written": self.rows_written,
            "bytes_written": self.bytes_written,
            "duplicates_removed": self.duplicates_removed,
            "decode_pids": sorted(self.decode_pids),
            "ray_task_pids": sorted(self.ray_task_pids),
            "driver_pid": self.driver_pid,
            "fallback": self.fallback,
            "fallback_items": self.fallback_items,
        }


# -- the Ray-side functions ------------------------------------------------------------------


class _RecordPid:
    """Wraps a decode function: the result records the pid of the process that decoded it."""

    def __init__(self, decode_fn: DecodeFn):
        self.decode_fn = decode_fn

    def __call__(self, task: DecodeTask) -> DecodeResult:
        result = self.decode_fn(task)
        result.extra[DECODED_BY_PID] = os.getpid()
        return result


def _decoded_table(result: DecodeResult) -> pa.Table:
    """One result as a one-row :data:`DECODED_SCHEMA` table (frame columns null unless ok)."""
    row = result.row if result.status == "ok" and result.row is not None else None
    extra = dict(result.extra)
    if row is not None:
        extra[FRAMES_NBYTES] = len(row["frames"])
        meta_row: dict[str, Any] | None = {k: v for k, v in row.items() if k != "frames"}
    else:
        meta_row = None
    meta = replace(result, row=meta_row, extra=extra)
    columns: dict[str, list[Any]] = {name: [None] for name in _ROW_COLUMNS}
    if row is not None:
        columns.update({name: [row[name]] for name in _ROW_COLUMNS})
    columns["cache_key"] = [result.task.cache_key]
    columns["status"] = [result.status]
    columns["result"] = [pickle.dumps(meta, protocol=pickle.HIGHEST_PROTOCOL)]
    return pa.Table.from_pydict(columns, schema=DECODED_SCHEMA)


class _DecodeBlock:
    """Ray ``map_batches`` function: decode one block of task records, one row per task.

    The decoding runs in a supervised child process (:func:`run_local` with one worker),
    so a decoder that hangs is killed after ``item_timeout_s`` and one that crashes fails
    only its own item, exactly as in a local build; the Ray task itself never hangs.
    """

    def __init__(self, decode_fn: DecodeFn, item_timeout_s: float | None, mp_context: str):
        self.decode_fn = decode_fn
        self.item_timeout_s = item_timeout_s
        self.mp_context = mp_context

    def __call__(self, batch: dict[str, Any]) -> pa.Table:
        from videorl_kit.store.engine_local import run_local

        tasks: list[DecodeTask] = [pickle.loads(raw) for raw in batch["task"]]
        results = run_local(
            tasks, workers=1, decode_fn=_RecordPid(self.decode_fn), mp_context=self.mp_context,
            item_timeout_s=self.item_timeout_s,
        )  # fmt: skip
        tables = []
        for result in results:
            result.extra[RAY_TASK_PID] = os.getpid()
            tables.append(_decoded_table(result))
        # one output block per decode block: its ok rows become one fragment when written
        return pa.concat_tables(tables) if tables else DECODED_SCHEMA.empty_table()


def frames_rows(batch: pa.Table) -> pa.Table:
    """The ok rows of a decoded block as a frames-table batch (``created_at`` = now).

    Example:
        >>> frames_rows(DECODED_SCHEMA.empty_table()).schema == FRAMES_SCHEMA
        True
    """
    import pyarrow.compute as pc

    ok = batch.filter(pc.equal(batch.column("status"), "ok"))
    now = pa.array([datetime.now(UTC)] * ok.num_rows, type=FRAMES_SCHEMA.field(_CREATED_AT).type)
    arrays = [ok.column(name) for name in _ROW_COLUMNS] + [now]
    return pa.Table.from_arrays(arrays, names=[*_ROW_COLUMNS, _CREATED_AT]).cast(FRAMES_SCHEMA)


# -- duplicate keys --------------------------------------------------------------------------


def settle_keys(frames_uri: str, keys: list[str] | None = None) -> tuple[set[str], int]:
    """Keep one row per cache key of ``keys`` (None: every key); return (missing keys, removed).

    A key with several rows keeps the one with the lowest row address, i.e. the row
    committed first (Lance numbers new fragments upwards), whichever builder wrote it; the
    other copies are deleted in one transaction. Rows of one key are the same decode of
    the same content, so which copy stays does not change what readers get.

    Example:
        >>> import tempfile
        >>> store = StoreTables.create(tempfile.mkdtemp())
        >>> settle_keys(store.uri("frames"), ["k1"])
        ({'k1'}, 0)
    """
    import lance

    if keys is not None and not keys:
        return set(), 0
    dataset = lance.dataset(frames_uri)
    where = sql_in("cache_key", sorted(set(keys))) if keys else None
    found = dataset.to_table(columns=["cache_key"], filter=where, with_row_address=True)
    addresses: dict[str, list[int]] = {}
    for key, address in zip(
        found.column("cache_key").to_pylist(), found.column("_rowaddr").to_pylist(), strict=True
    ):
        addresses.setdefault(key, []).append(int(address))
    missing = set(keys or ()) - set(addresses)
    doubled = sorted(key for key, found_at in addresses.items() if len(found_at) > 1)
    later = sorted(a for key in doubled for a in sorted(addresses[key])[1:])
    if later:
        dataset.delete(
            f"{sql_in('cache_key', doubled)} AND _rowaddr IN ({', '.join(map(str, later))})"
        )
    return missing, len(later)


def remove_duplicate_keys(frames_uri: str) -> int:
    """Delete every later copy of a cache key in the frames table; return how many.

    Example:
        >>> import tempfile
        >>> remove_duplicate_keys(StoreTables.create(tempfile.mkdtemp()).uri("frames"))
        0
    """
    return settle_keys(frames_uri, None)[1]


# -- the driver --------------------------------------------------------------------------------


def _import_ray() -> Any:
    try:
        import lance_ray  # noqa: F401
        import ray
        import ray.data
    except ImportError:
        raise UserError(
            "--engine ray needs Ray Data and lance-ray: pip install 'videorl-kit[ray]' "
            "(ray[data]>=2.55, lance-ray>=0.5)"
        ) from None
    return ray


def start_local_ray(ray: Any, workers: int) -> bool:
    """Start a local Ray instance with ``workers`` CPUs unless one runs; True if started.

    Its workers get the driver's import path, so they can import the decode function by
    name; Ray's own usage statistics stay off unless the environment asks for them.

    Example:
        >>> import ray                                      # doctest: +SKIP
        >>> start_local_ray(ray, 2), start_local_ray(ray, 2)  # doctest: +SKIP
        (True, False)
    """
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # Ray workers import the decode function by name: let them see the driver's import path
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    with warnings.catch_warnings():
        # Ray fork-execs its helper processes; Lance's fork warning does not apply to them
        warnings.filterwarnings("ignore", message="lance is not fork-safe")
        ray.init(
            num_cpus=workers,
            include_dashboard=False,
            log_to_driver=False,
            logging_level="ERROR",
            runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(paths)}},
        )
    return True


def _describe(exc: BaseException) -> str:
    """One line naming an exception: Ray wraps a task's error in a multi-line message whose
    last line is the original one ("ModuleNotFoundError: No module named 'x'")."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {(lines[-1] if lines else repr(exc))[:300]}"


class RayFramesBuild:
    """One Ray build of the frames table: decode and write in chunks on Ray workers.

    ``run(tasks)`` yields one :class:`DecodeResult` per task once its chunk is committed;
    :attr:`stats` tells what was done (chunks, commits, rows, pids, fallback). See the
    module docstring for the pipeline, the idempotency rules and the fallback.

    Example:
        >>> engine = RayFramesBuild(tables, workers=2, decode_fn=decode_task)  # doctest: +SKIP
        >>> results = list(engine.run(tasks))                                 # doctest: +SKIP
        >>> engine.stats.fallback is None                                     # doctest: +SKIP
        True
    """

    def __init__(
        self,
        tables: StoreTables,
        *,
        workers: int,
        decode_fn: DecodeFn,
        chunk_items: int = 16,
        mp_context: str = DEFAULT_MP_CONTEXT,
        item_timeout_s: float | None = DEFAULT_ITEM_TIMEOUT_S,
        on_commit: Callable[[CommitEvent], None] | None = None,
    ):
        self.tables = tables
        self.frames_uri = tables.uri(FRAMES_TABLE)
        self.workers = max(1, int(workers))
        self.decode_fn = decode_fn
        self.chunk_items = max(1, int(chunk_items))
        self.mp_context = mp_context
        self.item_timeout_s = item_timeout_s
        self.on_commit = on_commit
        self.stats = RayBuildStats()

    def run(self, tasks: list[DecodeTask]) -> Iterator[DecodeResult]:
        """Yield one :class:`DecodeResult` per task (ok ones already committed)."""
        self.stats.duplicates_removed += remove_duplicate_keys(self.frames_uri)
        if not tasks:
            return
        ray = _import_ray()
        chunks = [tasks[i : i + self.chunk_items] for i in range(0, len(tasks), self.chunk_items)]
        started_here = False
        remaining: list[DecodeTask] = []
        ray_data_logger = logging.getLogger("ray.data")
        level = ray_data_logger.level
        ray_data_logger.setLevel(logging.ERROR)  # no per-dataset notices over the progress bar
        try:
            try:
                started_here = start_local_ray(ray, self.workers)
                with warnings.catch_warnings():  # Ray's own deprecated-option notices, not ours
                    warnings.simplefilter("ignore", DeprecationWarning)
                    ray.data.DataContext.get_current().enable_progress_bars = False
            except Exception as exc:
                remaining = list(tasks)
                self._fall_back(f"Ray did not start ({_describe(exc)})", remaining)
                chunks = []
            for number, chunk in enumerate(chunks):
                try:
                    results = self._run_chunk(ray, chunk)
                except Exception as exc:
                    remaining = [t for c in chunks[number:] for t in c]
                    self._fall_back(
                        f"the Ray pipeline failed on chunk {number + 1}/{len(chunks)} "
                        f"({_describe(exc)})",
                        remaining,
                    )
                    break
                yield from results
        finally:
            ray_data_logger.setLevel(level)
            if started_here:
                ray.shutdown()
        if remaining:
            from videorl_kit.store.engine_local import run_local

            yield from run_local(
                remaining, workers=self.workers, decode_fn=self.decode_fn,
                mp_context=self.mp_context, item_timeout_s=self.item_timeout_s,
            )  # fmt: skip

    def _fall_back(self, why: str, remaining: list[DecodeTask]) -> None:
        self.stats.fallback_items = len(remaining)
        self.stats.fallback = f"{why}; {len(remaining)} item(s) finished by the local engine"

    def _run_chunk(self, ray: Any, chunk: list[DecodeTask]) -> list[DecodeResult]:
        """Decode and commit one chunk on the Ray workers; the results, in chunk order."""
        import lance
        import lance_ray

        self.stats.chunks += 1
        records = [{"task": pickle.dumps(t, protocol=pickle.HIGHEST_PROTOCOL)} for t in chunk]
        decoded = (
            ray.data.from_items(records, override_num_blocks=min(len(records), self.workers))
            .map_batches(
                _DecodeBlock(self.decode_fn, self.item_timeout_s, self.mp_context),
                batch_size=None,  # one block = one batch = one supervised decode process
                batch_format="numpy",
                num_cpus=1,
            )
            .materialize()
        )
        by_key: dict[str, DecodeResult] = {}
        for row in decoded.select_columns(_META_COLUMNS).iter_rows():
            result: DecodeResult = pickle.loads(row["result"])
            by_key[result.task.cache_key] = result
            for key, pids in ((DECODED_BY_PID, self.stats.decode_pids),
                              (RAY_TASK_PID, self.stats.ray_task_pids)):  # fmt: skip
                if key in result.extra:
                    pids.add(int(result.extra[key]))
        lost = [t.cache_key for t in chunk if t.cache_key not in by_key]
        if lost:  # a bug, not a bad input: let the fallback finish the chunk
            raise RuntimeError(f"the Ray decode returned no result for {len(lost)} task(s)")
        ok_keys = [k for k, r in by_key.items() if r.status == "ok"]
        if ok_keys:
            storage_version = lance.dataset(self.frames_uri).data_storage_version
            lance_ray.write_lance(
                decoded.map_batches(frames_rows, batch_format="pyarrow", batch_size=None),
                self.frames_uri,
                mode="append",
                schema=FRAMES_SCHEMA,
                data_storage_version=storage_version,
                min_rows_per_file=1,  # every write task writes its own block: no regrouping
            )
            version = int(lance.dataset(self.frames_uri).version)
            missing, removed = settle_keys(self.frames_uri, ok_keys)
            self._record_commit(by_key, ok_keys, missing, removed, version)
        return [by_key[t.cache_key] for t in chunk]

    def _record_commit(
        self, by_key: dict[str, DecodeResult], ok_keys: list[str], missing: set[str],
        removed: int, version: int,
    ) -> None:  # fmt: skip
        written = 0
        for key in ok_keys:
            result = by_key[key]
            if key in missing:
                error = FramesNotCommittedError(
                    f"{result.task.source_uri}: decoded, but its frames row is not in the "
                    "frames table after the chunk's commit (a lost write); retry with "
                    "--retry-failed"
                )
                by_key[key] = DecodeResult(
                    result.task, "failed", error=ErrorInfo.from_exception(error),
                    seconds=result.seconds, extra=result.extra,
                )  # fmt: skip
                continue
            result.extra[FRAMES_COMMITTED] = True
            self.stats.bytes_written += int(result.extra.get(FRAMES_NBYTES, 0))
            written += 1
        self.stats.frames_commits += 1
        self.stats.rows_written += written
        self.stats.duplicates_removed += removed
        if self.on_commit is not None:  # rows this commit added to the table, net of copies
            self.on_commit(CommitEvent(written - removed, 0, version))
