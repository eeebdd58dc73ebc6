"""``build_cache``: decode every distinct media item of some specs once into a Lance store.

A build runs five phases, each a function of this module, in this order:

1. **collect** (:func:`collect`): the inputs (:mod:`videorl_kit.store.inputs` defines them
   precisely: distinct (media file, budget) items, plus data rows skipped by a row rule),
   the store's tables (created if needed) and the budgets they will hold.
2. **identify** (:func:`identify`): hash every media file's content (threads) and compute
   its cache key (:mod:`videorl_kit.store.identify`). An item whose key is committed is ok
   already; one whose failure is recorded stays failed (unless ``retry_failed``); a file
   that cannot be read fails right there. The rest become decode tasks, one per key.
3. **decode**: the engine the config names (:func:`make_engine`; the local process pool or
   Ray, :mod:`videorl_kit.store.engine`) decodes the tasks and gets every ok frames row into
   the table through the build's one committer (:mod:`videorl_kit.store.commit`: bounded,
   idempotent batches). A worker crash fails only its own item; a decode that hangs past
   ``item_timeout_s`` is killed with its worker (which is replaced) and fails only its item.
4. **settle** (:func:`settle`, :func:`settle_obsolete_failures`): each result ends the items
   that share its key as ok, failed (a failures row says why) or skipped (a named rule);
   failure rows made obsolete by a now-cached item are deleted; the last batch is committed.
5. **samples** (:func:`~videorl_kit.store.samples.sample_rows`, written by
   :func:`~videorl_kit.store.samples.write_samples`), then the :class:`BuildSummary`
   (:func:`summarize`), whose invariant ``n_input == n_ok + n_failed + n_skipped`` is
   checked (a violation is a bug and raises).

:func:`build_frames` runs the same build but leaves the ``samples`` table as it is and
returns the rows instead: the evaluator builds with it, so evaluating the first rows of a
task, its fixture or an overridden spec never changes the samples that training reads.

Re-running the same build decodes nothing and commits nothing (every table keeps its
version); killing it at any moment loses at most the uncommitted batch. See
:func:`build_cache` for an example.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from videorl_kit.spec import load_spec
from videorl_kit.spec.models import TaskSpec
from videorl_kit.store.build_config import BuildConfig
from videorl_kit.store.build_summary import BuildProgress, BuildSummary, ProgressFn
from videorl_kit.store.commit import BatchCommitter, CommitEvent
from videorl_kit.store.engine import DecodeEngine, EngineReport
from videorl_kit.store.engine_local import LocalEngine
from videorl_kit.store.engine_ray import RayEngine
from videorl_kit.store.errors import BuildInvariantError
from videorl_kit.store.identify import (
    CommittedState,
    FileIdentity,
    SourceKey,
    decoder_identity,
    failure_row,
    identify_sources,
    item_decoder,
)
from videorl_kit.store.inputs import BuildInputs, MediaItem, collect_inputs
from videorl_kit.store.samples import (
    ItemOutcome,
    SampleLedger,
    SampleRows,
    sample_rows,
    write_samples,
)
from videorl_kit.store.schema import FRAMES_TABLE, cache_key, failure_id
from videorl_kit.store.tables import StoreTables
from videorl_kit.store.worker import DecodeFn, DecodeResult, DecodeTask, ErrorInfo, decode_task

__all__ = [
    "BuildConfig",
    "BuildHooks",
    "BuildProgress",
    "BuildSummary",
    "FramesBuild",
    "build_cache",
    "build_frames",
    "collect",
    "identify",
    "make_engine",
    "settle",
    "settle_obsolete_failures",
    "summarize",
]

MODALITIES = ("video", "image")


@dataclass(frozen=True)
class BuildHooks:
    """Hooks for tests and benchmarks, not user options (the command line never sets them).

    ``decode_fn`` replaces :func:`~videorl_kit.store.worker.decode_task` (a picklable
    top-level ``DecodeTask -> DecodeResult`` function: fault injection in tests, a baseline
    decoder in a benchmark); ``on_commit`` is called after each commit.
    """

    decode_fn: DecodeFn = decode_task
    on_commit: Callable[[CommitEvent], None] | None = None


def build_cache(
    specs: Iterable[TaskSpec | str | Path],
    store_dir: str | Path,
    config: BuildConfig | None = None,
    *,
    progress: ProgressFn | None = None,
    _hooks: BuildHooks | None = None,
    **options: Any,
) -> BuildSummary:
    """Decode every distinct (media file, budget) of ``specs`` once into the store at ``store_dir``.

    Args:
        specs: loaded :class:`TaskSpec` objects or paths of spec files.
        store_dir: the store folder (created if needed).
        config: the build's options (:class:`BuildConfig`; default: its defaults).
        progress: called with a :class:`BuildProgress` after each settled input.
        _hooks: private (:class:`BuildHooks`): fault injection in tests, benchmarks.
        **options: :class:`BuildConfig` fields, replacing those of ``config``
            (``build_cache(specs, store, workers=1)``).

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
        >>> s = build_cache([spec], f"{folder}/store", BuildConfig(workers=1))
        >>> (s.n_input, s.n_ok, s.n_failed, s.n_skipped, s.n_already_cached)
        (3, 2, 1, 0, 0)
        >>> s.failed_by_class, s.exit_code()
        ({'MissingFileError': 1}, 0)
    """
    config = BuildConfig.with_options(config, options)
    return _build(specs, store_dir, config, progress, _hooks, write_samples_table=True).summary


@dataclass(frozen=True)
class FramesBuild:
    """What :func:`build_frames` did: the summary and the ``samples`` rows it did not write."""

    summary: BuildSummary
    samples: SampleRows


def build_frames(
    specs: Iterable[TaskSpec | str | Path],
    store_dir: str | Path,
    config: BuildConfig | None = None,
    *,
    progress: ProgressFn | None = None,
    **options: Any,
) -> FramesBuild:
    """:func:`build_cache` without touching the store's ``samples`` table: the frames and
    failures are built and committed the same way, the samples rows are returned.

    For consumers that read a variant of a task (its first rows, another data file, another
    budget) from a shared store, such as the evaluator: the rows training reads stay as the
    last :func:`build_cache` wrote them.

    Example:
        >>> import tempfile
        >>> from videorl_kit.synth import write_demo_task
        >>> folder = tempfile.mkdtemp()
        >>> built = build_frames([write_demo_task(folder, n_per_task=1)], f"{folder}/store")
        >>> built.summary.n_ok, [row["status"] for row in built.samples.values()]
        (2, ['ready', 'ready'])
        >>> StoreTables.open(f"{folder}/store").table("samples").count_rows()
        0
    """
    config = BuildConfig.with_options(config, options)
    return _build(specs, store_dir, config, progress, None, write_samples_table=False)


def _build(
    specs: Iterable[TaskSpec | str | Path], store_dir: str | Path, config: BuildConfig,
    progress: ProgressFn | None, hooks: BuildHooks | None, *, write_samples_table: bool,
) -> FramesBuild:  # fmt: skip
    started = time.perf_counter()
    hooks = hooks or BuildHooks()
    decoders = {m: decoder_identity(m, config.decoder) for m in MODALITIES}  # before any write
    build = collect(specs, store_dir, config, progress, hooks)  # 1
    plan = identify(build, decoders)  # 2
    engine = make_engine(config, hooks.decode_fn)
    for result in engine.run(list(plan.tasks.values()), build.committer):  # 3
        settle(build, plan, result)  # 4
    settle_obsolete_failures(build)
    build.report("samples", force=True)
    rows, ledger = sample_rows(  # 5
        build.inputs.rows, build.outcomes, max_prompt_tokens=config.max_prompt_tokens
    )
    if write_samples_table:
        write_samples(build.tables, rows, ledger)
    build.tables.record_versions()
    summary = summarize(build, engine.report(), ledger, time.perf_counter() - started)
    build.report("done", force=True)
    return FramesBuild(summary, rows)


# -- the state of one build -----------------------------------------------------------------


@dataclass
class _Counts:
    n_decoded: int = 0
    n_new_failures: int = 0
    n_known_failures: int = 0
    n_retried: int = 0
    decode_warnings: dict[str, list[str]] = field(default_factory=dict)
    truncated: dict[str, str] = field(default_factory=dict)


@dataclass
class Build:
    """One build in progress: its inputs, store, committer and how each item ended so far."""

    config: BuildConfig
    inputs: BuildInputs
    tables: StoreTables
    committer: BatchCommitter
    committed: CommittedState
    progress: ProgressFn | None = None
    outcomes: dict[MediaItem, ItemOutcome] = field(default_factory=dict)
    counts: _Counts = field(default_factory=_Counts)
    _by_status: Counter[str] = field(default_factory=Counter)
    _last_report: tuple[str, float] = ("", 0.0)

    def settle_item(self, item: MediaItem, outcome: ItemOutcome) -> None:
        """Record how ``item`` ended (once: a second time is a bug)."""
        if item in self.outcomes:
            raise BuildInvariantError(f"{item.source_uri}: settled twice")
        self.outcomes[item] = outcome
        self._by_status[outcome.status] += 1
        self._by_status["already_cached"] += outcome.already_cached
        self.report("decoding", current=item.source_uri)

    def fail(
        self, item: MediaItem, key: str | None, file: FileIdentity, error: ErrorInfo,
        decoder: tuple[str, str],
    ) -> None:  # fmt: skip
        """Settle ``item`` as failed now, with a failures row (``attempts`` counts up)."""
        previous = self.committed.known_failures.get(failure_id(item.source_uri, key))
        self.committer.add_failure(failure_row(item, key, file, error, decoder, previous))
        self.counts.n_new_failures += 1
        detail = f"{error.error_class}: {error.message}"
        self.settle_item(item, ItemOutcome("failed", key, rule=error.error_class, detail=detail))

    def known_failure(self, item: MediaItem, key: str | None) -> bool:
        """Settle ``item`` as failed by its recorded failure, unless retrying; True if so."""
        row = self.committed.known_failures.get(failure_id(item.source_uri, key))
        if row is None or self.config.retry_failed:
            return False
        self.counts.n_known_failures += 1
        detail = f"{row['error_class']}: {row['message']}"
        outcome = ItemOutcome("failed", row["cache_key"] or None, rule=row["error_class"],
                              detail=detail)  # fmt: skip
        self.settle_item(item, outcome)
        return True

    def report(self, phase: str, current: str | None = None, *, force: bool = False) -> None:
        """Call the progress callback (at most every 0.1 s within a phase, unless forced)."""
        if self.progress is None:
            return
        now = time.monotonic()
        last_phase, last_time = self._last_report
        if not force and phase == last_phase and now - last_time < 0.1:
            return
        self._last_report = (phase, now)
        n_rows = len(self.inputs.skipped_rows)
        self.progress(
            BuildProgress(
                phase=phase,
                done=len(self.outcomes) + n_rows,
                total=self.inputs.n_input,
                n_ok=self._by_status["ok"],
                n_failed=self._by_status["failed"],
                n_skipped=self._by_status["skipped"] + n_rows,
                n_already_cached=self._by_status["already_cached"],
                current=current,
            )
        )


def source_of(item: MediaItem) -> SourceKey:
    """The source ``item`` decodes: its path, and its fps when it is a folder of frames."""
    return item.source_uri, item.frames_fps


@dataclass
class Plan:
    """What the decode phase has to do: one task per cache key, the items that share it."""

    files: dict[SourceKey, FileIdentity]
    tasks: dict[str, DecodeTask] = field(default_factory=dict)
    items: dict[str, list[MediaItem]] = field(default_factory=dict)


# -- the phases -----------------------------------------------------------------------------


def collect(
    specs: Iterable[TaskSpec | str | Path], store_dir: str | Path, config: BuildConfig,
    progress: ProgressFn | None = None, hooks: BuildHooks | None = None,
) -> Build:  # fmt: skip
    """Phase 1: the inputs of ``specs``, the store (its budgets registered) and its state."""
    hooks = hooks or BuildHooks()
    inputs = collect_inputs([load_spec(s) if isinstance(s, str | Path) else s for s in specs])
    tables = StoreTables.create(store_dir)
    for item in {(i.modality, i.budget_hash): i for i in inputs.items}.values():
        tables.register_budget(item.modality, item.budget)
    committer = BatchCommitter(
        tables, batch_items=config.batch_items, batch_bytes=config.batch_bytes,
        batch_seconds=config.batch_seconds, on_commit=hooks.on_commit,
    )  # fmt: skip
    return Build(config, inputs, tables, committer, CommittedState.read(tables), progress)


def identify(build: Build, decoders: dict[str, tuple[str, str]]) -> Plan:
    """Phase 2: hash the files, key the items, settle those that need no decoding."""
    build.report("hashing", force=True)
    config = build.config
    sources = list(dict.fromkeys(source_of(item) for item in build.inputs.items))
    memo = {} if config.rehash else build.committed.hash_memo
    plan = Plan(files=identify_sources(sources, memo, threads=config.n_workers))
    for item in build.inputs.items:
        file, decoder = plan.files[source_of(item)], item_decoder(item, decoders)
        if file.content_hash is None:
            assert file.error is not None
            if not build.known_failure(item, None):
                build.fail(item, None, file, file.error, decoder)
            continue
        key = cache_key(
            content_hash=file.content_hash, modality=item.modality, budget=item.budget,
            decoder=decoder[0], decoder_version=decoder[1],
        )  # fmt: skip
        if key in build.committed.cached_tokens:
            tokens = build.committed.cached_tokens[key]
            cached = ItemOutcome("ok", key, already_cached=True, visual_tokens=tokens)
            build.settle_item(item, cached)
            continue
        if build.known_failure(item, key):
            continue
        if failure_id(item.source_uri, key) in build.committed.known_failures:
            build.counts.n_retried += 1
        plan.items.setdefault(key, []).append(item)
        plan.tasks.setdefault(key, DecodeTask(
            source_uri=item.source_uri, modality=item.modality, budget=item.budget,
            budget_hash=item.budget_hash, content_hash=file.content_hash, cache_key=key,
            decoder=decoder[0], decoder_version=decoder[1], size=file.size,
            mtime_ns=file.mtime_ns, max_visual_tokens=config.max_visual_tokens,
            frames_fps=item.frames_fps,
        ))  # fmt: skip
    return plan


def make_engine(config: BuildConfig, decode_fn: DecodeFn = decode_task) -> DecodeEngine:
    """Phase 3's engine: the one ``config.engine`` names, running ``decode_fn`` per task.

    Example:
        >>> type(make_engine(BuildConfig(engine="ray"))).__name__
        'RayEngine'
    """
    options: dict[str, Any] = {
        "workers": config.n_workers, "decode_fn": decode_fn, "mp_context": config.mp_context,
        "item_timeout_s": config.item_limit_s,
    }  # fmt: skip
    if config.engine == "ray":
        return RayEngine(**options, chunk_items=config.batch_items)
    return LocalEngine(**options)


def settle(build: Build, plan: Plan, result: DecodeResult) -> None:
    """Phase 4: end every item of ``result``'s key as ok, failed or skipped."""
    task = result.task
    for item in plan.items[task.cache_key]:
        if result.status == "ok":
            assert result.row is not None
            tokens = result.row["visual_tokens"]
            build.settle_item(item, ItemOutcome("ok", task.cache_key, visual_tokens=tokens))
        elif result.status == "skipped":
            outcome = ItemOutcome(
                "skipped", task.cache_key, rule=result.skip_rule, detail=result.skip_detail
            )
            build.settle_item(item, outcome)
        else:
            error = result.error or ErrorInfo("Error", "unknown error", "")
            decoder = (task.decoder, task.decoder_version)
            build.fail(item, task.cache_key, plan.files[source_of(item)], error, decoder)
    if result.status == "ok":
        build.counts.n_decoded += 1
        if result.row and result.row.get("decode_warnings"):
            build.counts.decode_warnings[task.source_uri] = list(result.row["decode_warnings"])
        if result.row and result.row.get("truncation"):
            build.counts.truncated[task.source_uri] = str(result.row["truncation"])


def settle_obsolete_failures(build: Build) -> None:
    """Phase 4, last step: delete the failure rows whose (file, budget) is cached now (after a
    successful retry, a fixed file with a new key, or a crash between two commits), and
    commit what is left in the batch."""
    cached_now = {
        (item.source_uri, item.budget_hash)
        for item, outcome in build.outcomes.items()
        if outcome.status == "ok"
    }
    for fid, row in build.committed.known_failures.items():
        if (row["source_uri"], row["budget_hash"]) in cached_now:
            build.committer.resolve_failure(fid)
    build.committer.flush()


def summarize(
    build: Build, engine: EngineReport, samples: SampleLedger, seconds: float
) -> BuildSummary:
    """The :class:`BuildSummary`; raises :class:`BuildInvariantError` if its counts disagree."""
    inputs, outcomes, counts = build.inputs, list(build.outcomes.values()), build.counts
    skipped_by_rule = Counter(o.rule or "unknown" for o in outcomes if o.status == "skipped")
    skipped_by_rule.update(row.skip_rule for row in inputs.skipped_rows)
    summary = BuildSummary(
        n_input=inputs.n_input,
        n_ok=sum(o.status == "ok" for o in outcomes),
        n_failed=sum(o.status == "failed" for o in outcomes),
        n_skipped=sum(o.status == "skipped" for o in outcomes) + len(inputs.skipped_rows),
        n_already_cached=sum(o.already_cached for o in outcomes),
        seconds=seconds,
        n_media_items=len(inputs.items),
        n_skipped_rows=len(inputs.skipped_rows),
        n_decoded=counts.n_decoded,
        n_new_failures=counts.n_new_failures,
        n_known_failures=counts.n_known_failures,
        n_retried=counts.n_retried,
        decode_warnings=counts.decode_warnings,
        truncated=counts.truncated,
        skipped_by_rule=dict(skipped_by_rule),
        failed_by_class=dict(Counter(o.rule or "Error" for o in outcomes if o.status == "failed")),
        failed_files={
            item.source_uri: outcome.detail or outcome.rule or "Error"
            for item, outcome in build.outcomes.items()
            if outcome.status == "failed"
        },
        samples=samples,
        store=str(build.tables.root),
        engine=build.config.engine,
        decoder=build.config.decoder,
        workers=build.config.n_workers,
        item_timeout_s=build.config.item_limit_s,
        n_commits=build.committer.n_commits,
        bytes_committed=build.committer.bytes_committed,
        frames_version=int(build.tables.table(FRAMES_TABLE).version),
        engine_fallback=engine.fallback,
        engine_stats=engine.stats,
    )
    missing = [i.source_uri for i in inputs.items if i not in build.outcomes]
    if missing or not summary.invariant_holds or not samples.invariant_holds:
        raise BuildInvariantError(
            f"build accounting is inconsistent (a bug): n_input={summary.n_input} "
            f"n_ok={summary.n_ok} n_failed={summary.n_failed} n_skipped={summary.n_skipped}; "
            f"unsettled: {missing[:5]}"
        )
    return summary
