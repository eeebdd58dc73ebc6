"""The Ray engine (``engine="ray"``): Ray workers decode and write the frames table.

The builder hands over only keys not yet in the frames table; :class:`RayEngine` cuts them
into chunks of ``chunk_items`` tasks (the build's commit bound, ``batch_items``). Each
chunk goes through one Ray Data pipeline:

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
   (:func:`frames_rows`), are written by ``lance_ray.LanceFragmentWriter`` with the kit's
   frames schema (field metadata: the blob-encoded ``frames`` column) and the table's
   data-storage version: its tasks run on the Ray workers, each writing one fragment data
   file, and return only the fragments' metadata.
4. **commit**: once every write task has succeeded, the build's committer commits the
   chunk's fragments in one Lance ``Append`` transaction and settles the chunk's keys
   (:meth:`~videorl_kit.store.commit.BatchCommitter.commit_fragments`): a key committed
   twice (e.g. another builder committed it meanwhile) keeps its earliest row and the later
   copies are deleted; a key missing after the commit fails with
   :class:`FramesNotCommittedError` (a lost write; retried with ``retry_failed``). A crash
   loses at most one chunk.
5. The results go back to the builder, which records failures, skips and samples exactly
   as for the local engine.

Why lance-ray's fragment writer and not ``ray.data.Dataset.write_lance``: Ray 2.60's own
Lance sink passes ``storage_options_provider`` to ``lance.LanceDataset`` and
``write_fragments``, which pylance 14 (the kit's Lance) no longer accepts, so every write
fails with a ``TypeError``. ``lance-ray`` (the Lance project's Ray integration) writes
fragments in tasks and follows the pylance API; its writer leaves the commit to the caller,
so the Ray engine commits through the same committer as the local one.

**Idempotency and crash safety.** The builder plans only uncommitted keys. A retried Ray
task writes new data files, but only the fragments returned by the successful attempts
reach the single ``Append`` commit, so a retry never duplicates rows. A build killed
before a chunk's commit leaves only data files that no table version references (readers
never see them); a resumed build decodes that chunk again. A build killed between a
commit and its settling can leave duplicates: every Ray build first settles the whole
table (:meth:`~videorl_kit.store.commit.BatchCommitter.settle_duplicates`, keeping the
earliest row per key).

**When the Ray pipeline fails** (a Ray worker lost beyond its retries, the decode function
not importable on the workers, a write error, Ray failing to start), the build does not
stop and does not pretend: the chunk that failed and every later one are decoded by the
local engine (:class:`~videorl_kit.store.engine_local.LocalEngine`) and committed by the
same committer (``merge_insert``, so keys the failed chunk did commit are not inserted
twice), and :attr:`RayBuildStats.fallback` says why and how many items; the build summary
carries it as ``engine_fallback`` and the CLI prints it as a warning. Failing those items
instead would record an infrastructure problem as a property of the media, retried only
with ``--retry-failed``.

When no Ray instance is running, one is started for the build (``ray.init(num_cpus=workers)``)
and shut down afterwards.

Example:
    >>> import tempfile
    >>> from videorl_kit.store.commit import BatchCommitter
    >>> from videorl_kit.store.tables import StoreTables
    >>> committer = BatchCommitter(StoreTables.create(tempfile.mkdtemp()))
    >>> engine = RayEngine(workers=2)
    >>> list(engine.run([], committer))  # no tasks: Ray is not started
    []
    >>> engine.report().fallback, engine.stats.chunks
    (None, 0)
"""

from __future__ import annotations

import logging
import os
import pickle
import sys
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from videorl_kit.core.errors import UserError, VideoRLKitError
from videorl_kit.store.commit import BatchCommitter
from videorl_kit.store.defaults import DEFAULT_ITEM_TIMEOUT_S, DEFAULT_MP_CONTEXT
from videorl_kit.store.engine import EngineReport
from videorl_kit.store.engine_local import LocalEngine, run_local
from videorl_kit.store.schema import FRAMES_SCHEMA, FRAMES_TABLE
from videorl_kit.store.worker import DecodeFn, DecodeResult, DecodeTask, ErrorInfo, decode_task

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
    ok = batch.filter(pc.equal(batch.column("status"), "ok"))
    now = pa.array([datetime.now(UTC)] * ok.num_rows, type=FRAMES_SCHEMA.field(_CREATED_AT).type)
    arrays = [ok.column(name) for name in _ROW_COLUMNS] + [now]
    return pa.Table.from_arrays(arrays, names=[*_ROW_COLUMNS, _CREATED_AT]).cast(FRAMES_SCHEMA)


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


class RayEngine:
    """The Ray engine: decode and write in chunks on Ray workers, commit through the build.

    ``run(tasks, committer)`` yields one :class:`DecodeResult` per task once its chunk is
    committed; :attr:`stats` tells what was done (chunks, commits, rows, pids, fallback).
    See the module notes for the pipeline, the idempotency rules and the fallback.
    """

    def __init__(
        self,
        *,
        workers: int,
        decode_fn: DecodeFn = decode_task,
        chunk_items: int = 16,
        mp_context: str = DEFAULT_MP_CONTEXT,
        item_timeout_s: float | None = DEFAULT_ITEM_TIMEOUT_S,
    ):
        self.local = LocalEngine(
            workers=max(1, int(workers)), decode_fn=decode_fn, mp_context=mp_context,
            item_timeout_s=item_timeout_s,
        )  # fmt: skip
        self.chunk_items = max(1, int(chunk_items))
        self.stats = RayBuildStats()

    def report(self) -> EngineReport:
        """Why (part of) the build fell back to the local engine, and :attr:`stats`."""
        return EngineReport(self.stats.fallback, self.stats.as_dict())

    def run(self, tasks: Sequence[DecodeTask], committer: BatchCommitter) -> Iterator[DecodeResult]:
        """Yield one :class:`DecodeResult` per task (ok ones already committed)."""
        self.stats.duplicates_removed += committer.settle_duplicates()
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
                started_here = start_local_ray(ray, self.local.workers)
                with warnings.catch_warnings():  # Ray's own deprecated-option notices, not ours
                    warnings.simplefilter("ignore", DeprecationWarning)
                    ray.data.DataContext.get_current().enable_progress_bars = False
            except Exception as exc:
                remaining = list(tasks)
                self._fall_back(f"Ray did not start ({_describe(exc)})", remaining)
                chunks = []
            for number, chunk in enumerate(chunks):
                try:
                    results = self._run_chunk(ray, chunk, committer)
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
        yield from self.local.run(remaining, committer)

    def _fall_back(self, why: str, remaining: list[DecodeTask]) -> None:
        self.stats.fallback_items = len(remaining)
        self.stats.fallback = f"{why}; {len(remaining)} item(s) finished by the local engine"

    def _run_chunk(
        self, ray: Any, chunk: Sequence[DecodeTask], committer: BatchCommitter
    ) -> list[DecodeResult]:
        """Decode, write and commit one chunk on the Ray workers; the results, in chunk order."""
        import lance_ray

        self.stats.chunks += 1
        local = self.local
        records = [{"task": pickle.dumps(t, protocol=pickle.HIGHEST_PROTOCOL)} for t in chunk]
        decoded = (
            ray.data.from_items(records, override_num_blocks=min(len(records), local.workers))
            .map_batches(
                _DecodeBlock(local.decode_fn, local.item_timeout_s, local.mp_context),
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
            frames = committer.tables.table(FRAMES_TABLE)
            writer = lance_ray.LanceFragmentWriter(
                committer.tables.uri(FRAMES_TABLE),
                transform=frames_rows,
                schema=FRAMES_SCHEMA,
                data_storage_version=frames.data_storage_version,
            )
            written = decoded.map_batches(writer, batch_format="pyarrow", batch_size=None)
            fragments = [pickle.loads(row["fragment"]) for row in written.take_all()]
            nbytes = {k: int(by_key[k].extra.get(FRAMES_NBYTES, 0)) for k in ok_keys}
            missing, removed = committer.commit_fragments(fragments, ok_keys, nbytes)
            self._record_commit(by_key, ok_keys, missing, removed)
        return [by_key[t.cache_key] for t in chunk]

    def _record_commit(
        self, by_key: dict[str, DecodeResult], ok_keys: list[str], missing: set[str],
        removed: int,
    ) -> None:  # fmt: skip
        for key in missing:
            result = by_key[key]
            error = FramesNotCommittedError(
                f"{result.task.source_uri}: decoded, but its frames row is not in the "
                "frames table after the chunk's commit (a lost write); retry with "
                "--retry-failed"
            )
            by_key[key] = DecodeResult(
                result.task, "failed", error=ErrorInfo.from_exception(error),
                seconds=result.seconds, extra=result.extra,
            )  # fmt: skip
        present = [key for key in ok_keys if key not in missing]
        self.stats.frames_commits += 1
        self.stats.rows_written += len(present)
        self.stats.bytes_written += sum(int(by_key[k].extra.get(FRAMES_NBYTES, 0)) for k in present)
        self.stats.duplicates_removed += removed
