"""``cache repair``: bring a damaged store back to a state every reader accepts.

Steps, each recorded in the :class:`RepairReport`:

1. A table whose newest manifest went missing (:mod:`videorl_kit.store.integrity`) is
   accepted at the version Lance still has; what was committed after it is lost. A version
   record that is unreadable, or missing from a store with rows, is written again from the
   tables' current versions (a version lost at the same time can no longer be noticed: the
   report says so, and ``cache verify`` or a rebuild settles it).
2. Fragments whose data file is missing or truncated are dropped from their table (one Lance
   ``Delete`` commit per table); their rows are lost.
3. Every frames row is checked: its key's form, its metadata against its ``row_digest``
   (:mod:`videorl_kit.store.row_digest`), the stored bytes against their checksum, the
   decoded frames against ``frames_sha256``. Damaged rows, and cache keys that ready
   samples need but that the frames table no longer holds, are decoded again from their
   source file when it still exists and still hashes to the recorded content (same cache
   key); the new row replaces the damaged one. Anything else is removed and recorded in
   ``failures`` (class ``UnrecoverableRowError``), where ``cache status`` shows it and a
   later ``build-cache`` settles the samples that used it.

Repair is idempotent: run on a healthy store it changes nothing and says so.

Example:
    >>> report = repair_store(store_dir)  # a healthy store: nothing to do
    >>> report.redecoded, report.removed
    ([], [])
"""

from __future__ import annotations

import hashlib
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import lance

from videorl_kit.media.hashing import file_content_hash, not_a_regular_file
from videorl_kit.store.commit import BatchCommitter
from videorl_kit.store.defaults import DEFAULT_ITEM_TIMEOUT_S, DEFAULT_MP_CONTEXT
from videorl_kit.store.engine_local import run_local
from videorl_kit.store.errors import StoreIntegrityError
from videorl_kit.store.identify import FileIdentity, decoder_identity, failure_row
from videorl_kit.store.inputs import MediaItem
from videorl_kit.store.integrity import (
    accept_versions,
    damaged_files,
    reset_versions,
    rolled_back_tables,
    state_problem,
)
from videorl_kit.store.lock import write_lock
from videorl_kit.store.reader import FrameStore
from videorl_kit.store.row_digest import is_cache_key, shown_key
from videorl_kit.store.samples import STATUS_READY
from videorl_kit.store.schema import (
    FAILURES_TABLE,
    SAMPLES_TABLE,
    TABLE_NAMES,
    cache_key,
)
from videorl_kit.store.tables import StoreTables
from videorl_kit.store.worker import DecodeTask, ErrorInfo, decode_task

UNRECOVERABLE = "UnrecoverableRowError"
"""``error_class`` of the failure rows repair writes for rows it had to remove."""


@dataclass(frozen=True)
class _Damaged:
    """A frames row to restore: its key, where it came from and why it needs work."""

    cache_key: str
    source_uri: str
    modality: str
    budget_hash: str
    reason: str
    content_hash: str | None = None  # None: the row is gone, its identity is recomputed
    decoder: str = ""
    decoder_version: str = ""


@dataclass
class RepairReport:
    """What ``cache repair`` found and did."""

    store: str
    accepted_versions: dict[str, list[int]] = field(default_factory=dict)
    dropped_fragments: list[str] = field(default_factory=list)
    rows_lost: dict[str, int] = field(default_factory=dict)
    rows_checked: int = 0
    redecoded: list[str] = field(default_factory=list)
    removed: list[dict[str, str]] = field(default_factory=list)
    state_reset: str | None = None  # why the version record was written again

    @property
    def changed(self) -> bool:
        """True when the repair changed the store."""
        return bool(self.accepted_versions or self.dropped_fragments or self.redecoded
                    or self.removed or self.state_reset)  # fmt: skip

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {**asdict(self), "changed": self.changed}

    def summary(self) -> str:
        """One line per kind of change (or that there was nothing to repair).

        Example:
            >>> RepairReport(store="/s", rows_checked=3).summary()
            '/s: 3 frames rows checked; nothing to repair'
        """
        head = f"{self.store}: {self.rows_checked} frames rows checked"
        if not self.changed:
            return f"{head}; nothing to repair"
        lines = [head]
        if self.state_reset:
            lines.append(
                f"the store's {self.state_reset}: recorded the tables' current versions; if "
                f"the store may have lost a version too, check it with `videorl-kit cache "
                f"verify --store {shlex.quote(str(self.store))}` against the sources or rebuild it"
            )
        for table, (found, recorded) in self.accepted_versions.items():
            lines.append(f"accepted {table} at version {found} (the kit had committed {recorded})")
        lines += [f"dropped {f}" for f in self.dropped_fragments]
        lines += [f"lost {n} {t} row(s) with those files" for t, n in self.rows_lost.items() if n]
        if self.redecoded:
            lines.append(f"decoded {len(self.redecoded)} row(s) again from their sources")
        lines += [f"removed {_label(r['cache_key'])} ({r['source_uri']}): {r['reason']}"
                  for r in self.removed]  # fmt: skip
        if self.removed or self.accepted_versions or self.rows_lost.get(SAMPLES_TABLE):
            lines.append(
                "run `videorl-kit build-cache SPEC... --store "
                f"{shlex.quote(str(self.store))}` to bring the samples up to date"
            )
        return "\n".join(lines)


def _label(key: str) -> str:
    """A key as the summary shows it: its first 16 digits, or escaped when it is not a key."""
    return key[:16] if is_cache_key(key) else shown_key(key)


def _drop_damaged_fragments(tables: StoreTables, report: RepairReport) -> None:
    for name in TABLE_NAMES:
        dataset = tables.table(name)
        damaged = damaged_files(name, dataset)
        if not damaged:
            continue
        ids = sorted({d.fragment_id for d in damaged})
        report.dropped_fragments += [str(d) for d in damaged]
        report.rows_lost[name] = sum(
            f.metadata.num_rows for f in dataset.get_fragments() if f.fragment_id in ids
        )
        operation = lance.LanceOperation.Delete([], ids, "cache repair: damaged data files")
        lance.LanceDataset.commit(tables.uri(name), operation, read_version=dataset.version)


def _check_rows(store: FrameStore) -> list[_Damaged]:
    """Frames rows whose stored bytes or decoded frames do not match their hashes."""
    meta = store.metadata()
    damaged = []
    for row in meta.select(
        ["cache_key", "source_uri", "modality", "budget_hash", "source_content_hash",
         "decoder", "decoder_version"]
    ).to_pylist():  # fmt: skip
        try:
            if not is_cache_key(row["cache_key"]):  # never read: readers refuse the store
                ok, reason = False, "its cache key is not a cache key (the table was edited)"
            else:
                item = store.get(row["cache_key"], verify=True)
                ok = hashlib.sha256(item.frames).hexdigest() == item.frames_sha256
                reason = "its decoded frames do not match their sha256"
        except StoreIntegrityError as exc:
            ok, reason = False, exc.problem
        if not ok:
            damaged.append(
                _Damaged(row["cache_key"], row["source_uri"], row["modality"],
                         row["budget_hash"], reason, row["source_content_hash"],
                         row["decoder"], row["decoder_version"])
            )  # fmt: skip
    return damaged


def _lost_keys(tables: StoreTables, present: set[str]) -> list[_Damaged]:
    """Cache keys ready samples use that neither the frames nor the failures table holds."""
    failures = tables.table(FAILURES_TABLE).to_table(columns=["cache_key"])
    known = present | set(failures.column("cache_key").to_pylist())
    samples = tables.table(SAMPLES_TABLE).to_table(
        columns=["video_uris", "video_keys", "image_uris", "image_keys",
                 "video_budget_hash", "image_budget_hash"],
        filter=f"status = '{STATUS_READY}'",
    ).to_pylist()  # fmt: skip
    lost: dict[str, _Damaged] = {}
    for row in samples:
        for modality in ("video", "image"):
            pairs = zip(row[f"{modality}_uris"], row[f"{modality}_keys"], strict=False)
            for uri, key in pairs:
                if key and key not in known and key not in lost:
                    lost[key] = _Damaged(
                        key, uri, modality, row[f"{modality}_budget_hash"],
                        "its frames row was lost with a damaged data file",
                    )  # fmt: skip
    return list(lost.values())


def _decode_task(item: _Damaged, budgets: dict[str, dict[str, Any]]) -> DecodeTask | str:
    """The task that re-creates ``item``'s row, or why it cannot be re-created."""
    budget = budgets.get(item.budget_hash)
    if budget is None:
        return f"its budget {item.budget_hash} is not recorded in the store"
    source = Path(item.source_uri)
    special = not_a_regular_file(source)
    if special is not None:
        return f"its source {special}"
    if not source.is_file():
        return "its source file is gone"
    try:
        digest = file_content_hash(source)
        stat = source.stat()
    except OSError as exc:
        return f"its source file cannot be read ({exc})"
    if item.content_hash is not None and digest != item.content_hash:
        return "its source file changed since it was cached (content hash differs)"
    decoder, version = item.decoder, item.decoder_version
    if item.content_hash is None:  # identity unknown: the default decoder must give this key
        decoder, version = decoder_identity(item.modality)
    key = cache_key(content_hash=digest, modality=item.modality, budget=budget["budget"],
                    decoder=decoder, decoder_version=version)  # fmt: skip
    if key != item.cache_key:
        return "its source no longer gives the same cache key (file or decoder changed)"
    return DecodeTask(
        source_uri=item.source_uri, modality=item.modality, budget=budget["budget"],
        budget_hash=item.budget_hash, content_hash=digest, cache_key=key, decoder=decoder,
        decoder_version=version, size=stat.st_size, mtime_ns=stat.st_mtime_ns,
    )  # fmt: skip


def _failure_row(item: _Damaged, reason: str, budgets: dict[str, Any]) -> dict[str, Any]:
    """The ``failures`` row recording that repair removed ``item``'s frames row."""
    budget = budgets.get(item.budget_hash)
    media = MediaItem(item.source_uri, item.modality, budget["budget"] if budget else {},
                      item.budget_hash)  # fmt: skip
    return failure_row(
        media, item.cache_key, FileIdentity(item.content_hash, -1, -1),
        ErrorInfo(UNRECOVERABLE, f"removed by cache repair: {reason}", ""),
        (item.decoder, item.decoder_version), None,
    )  # fmt: skip


def repair_store(
    store_dir: str | Path, *, workers: int = 1, item_timeout_s: float = DEFAULT_ITEM_TIMEOUT_S
) -> RepairReport:
    """Repair the store in ``store_dir`` (see the module notes); returns what was done.

    Example:
        >>> import tempfile
        >>> repair_store(StoreTables.create(tempfile.mkdtemp()).root).changed
        False
    """
    tables = StoreTables.open(store_dir, check=False)
    tables.ensure_writable()
    with write_lock(tables.root):  # a repair runs alone: builds of this store wait for it
        return _repair(tables, workers, item_timeout_s)


def _repair(tables: StoreTables, workers: int, item_timeout_s: float) -> RepairReport:
    report = RepairReport(store=str(tables.root))
    problem = state_problem(tables.root, tables.has_rows())
    if problem:
        reset_versions(tables.root, tables.latest_versions())
        report.state_reset = problem
    rolled_back = rolled_back_tables(tables.root, tables.latest_versions())
    if rolled_back:
        accept_versions(tables.root, {t: found for t, (found, _) in rolled_back.items()})
        report.accepted_versions = {t: list(v) for t, v in rolled_back.items()}
    _drop_damaged_fragments(tables, report)

    store = FrameStore(tables, check_keys=False)
    report.rows_checked = len(store)
    todo = _check_rows(store) + _lost_keys(tables, set(store.keys()))
    budgets = tables.budgets()
    tasks, unrecoverable = [], []
    for item in todo:
        task = _decode_task(item, budgets)
        if isinstance(task, str):
            unrecoverable.append((item, task))
        else:
            tasks.append(task)
    by_key = {item.cache_key: item for item in todo}
    results = run_local(tasks, workers=workers, decode_fn=decode_task,
                        mp_context=DEFAULT_MP_CONTEXT, item_timeout_s=item_timeout_s)  # fmt: skip
    committer = BatchCommitter(tables, replace_frames=True)
    for result in results:
        if result.status == "ok" and result.row is not None:
            committer.add_frames(result.row)
            report.redecoded.append(result.task.cache_key)
        else:
            why = result.error.message if result.error else result.skip_detail
            unrecoverable.append(
                (by_key[result.task.cache_key], f"decoding it again failed: {why}")
            )
    for item, reason in unrecoverable:
        committer.remove_frames(item.cache_key)
        committer.add_failure(_failure_row(item, reason, budgets))
        report.removed.append(
            {"cache_key": item.cache_key, "source_uri": item.source_uri, "reason": reason}
        )
    committer.flush()
    if not committer.n_commits:
        tables.record_versions()
    return report
