"""The ``samples`` table: one row per data row of every built task.

A row records the question, options, answer (text; structured answers as JSON text), the
rendered prompt, the cache keys of its media and a prompt-token estimate, plus a status:

``ready``          every media item is cached (or the row has no media)
``media_failed``   at least one media item failed to decode (see ``failures``)
``skipped``        not usable: ``skip_rule`` names the rule and ``skip_reason`` says why. A
                   row rule of :mod:`videorl_kit.spec.data` (``malformed_row``: ``row 7
                   (id 'q-7'): missing field 'problem'``, rows counted from 1,
                   ``problem_type_mismatch``, ``data_type_mismatch``, ``duplicate_id``,
                   ...), ``prompt_error`` (the prompt does not render), a media item's skip rule
                   (``over_token_budget``, ``data_type_mismatch``), or
                   ``over_token_budget`` for a prompt over ``max_prompt_tokens``

A row also keeps the raw data row (``row_json``), so consumers can group metrics by any
column of the source data (``data_source``, ...).

Every row also records where its spec came from (file, version, content hash, the Hub
files and commits it was built from, and the commit of Hub data; see
:mod:`videorl_kit.store.provenance`).

The sample ledger ``n_samples == n_ready + n_failed + n_skipped`` is reported next to the
media ledger of the build. Writes are upserts keyed on (``task_id``, ``sample_id``) and only
touch rows whose content changed (``row_hash``), so an unchanged rebuild adds no version.

Example:
    >>> estimate_text_tokens("How many red squares?")
    6
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from videorl_kit.core.errors import UserError
from videorl_kit.core.skip_rules import RULE_OVER_TOKEN_BUDGET, RULE_PROMPT_ERROR
from videorl_kit.spec.data import ROW_LABEL, row_label
from videorl_kit.spec.prompt import render_prompt
from videorl_kit.store.commit import sql_in, sql_quote
from videorl_kit.store.inputs import MediaItem, RowRef
from videorl_kit.store.lock import retry_conflicts, write_lock
from videorl_kit.store.provenance import SpecSource
from videorl_kit.store.schema import (
    CACHE_SCHEMA_VERSION,
    SAMPLES_SCHEMA,
    SAMPLES_TABLE,
    budget_hash,
    canonical_json,
    sha256_text,
)
from videorl_kit.store.tables import StoreTables

STATUS_READY = "ready"
STATUS_MEDIA_FAILED = "media_failed"
STATUS_SKIPPED = "skipped"

SKIP_EXAMPLES = 3
"""Example rows kept per skip rule in a :class:`SampleLedger` (and shown by the CLI)."""

BYTES_PER_TEXT_TOKEN = 4
"""Rough UTF-8 bytes per text token for the estimate (no tokenizer at build time)."""


@dataclass(frozen=True)
class ItemOutcome:
    """How one media item ended in a build."""

    status: str  # "ok" | "failed" | "skipped"
    cache_key: str | None = None
    already_cached: bool = False
    rule: str | None = None
    detail: str | None = None
    visual_tokens: int | None = None


@dataclass
class SampleLedger:
    """Counts of the samples table rows written by one build."""

    n_samples: int = 0
    n_ready: int = 0
    n_failed: int = 0
    n_skipped: int = 0
    skips: dict[str, dict[str, Any]] = field(default_factory=dict)  # see group_skips
    rows_written: int = 0
    rows_deleted: int = 0

    @property
    def invariant_holds(self) -> bool:
        """``n_samples == n_ready + n_failed + n_skipped``."""
        return self.n_samples == self.n_ready + self.n_failed + self.n_skipped

    @property
    def skipped_by_rule(self) -> dict[str, int]:
        """Skipped samples counted by rule."""
        return {rule: entry["count"] for rule, entry in self.skips.items()}

    def as_dict(self) -> dict[str, Any]:
        """Plain-data form for JSON output."""
        return {
            "n_samples": self.n_samples,
            "n_ready": self.n_ready,
            "n_failed": self.n_failed,
            "n_skipped": self.n_skipped,
            "skipped_by_rule": self.skipped_by_rule,
            "skips": self.skips,
            "rows_written": self.rows_written,
            "rows_deleted": self.rows_deleted,
        }


def estimate_text_tokens(text: str) -> int:
    """Rough text-token count: UTF-8 bytes / 4, rounded up (about right for English BPE).

    Example:
        >>> estimate_text_tokens(""), estimate_text_tokens("abcd"), estimate_text_tokens("abcde")
        (0, 1, 2)
    """
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TEXT_TOKEN)


def skip_example(
    task_id: str, row_index: int, reason: str | None, sample_id: str | None = None
) -> str:
    """How one skipped row is named in the skip listings: task, row (from 1, with the row's
    own id when it has one: ``sample_id`` is not the made-up ``<task>-<row_index>``) and
    reason, as ``validate --data`` names it.

    Example:
        >>> skip_example("mixed", 6, "row 7: data_type is 'image' but the row has no image")
        "mixed row 7: data_type is 'image' but the row has no image"
        >>> skip_example("mixed", 6, "over_token_budget: video a.mp4: 9000 tokens", "q-17")
        "mixed row 7 (id 'q-17'): over_token_budget: video a.mp4: 9000 tokens"
    """
    given = (sample_id or "").removesuffix(f"#row{row_index}")  # a duplicate id's store key
    row_id = given if given and given != f"{task_id}-{row_index}" else None
    detail = ROW_LABEL.sub("", reason or "", count=1)
    return f"{task_id} {row_label(row_index, row_id)}: {detail}"


def group_skips(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Skipped ``samples`` rows grouped by rule: ``{rule: {"count", "examples"}}``, by rule.

    ``examples`` names the first :data:`SKIP_EXAMPLES` rows (:func:`skip_example`) in task
    and row order.

    Example:
        >>> group_skips([{"task_id": "t", "row_index": 4, "skip_rule": "malformed_row",
        ...               "skip_reason": "row 5: missing field 'problem'"}])
        {'malformed_row': {'count': 1, 'examples': ["t row 5: missing field 'problem'"]}}
    """
    groups: dict[str, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: (r["task_id"], r["row_index"])):
        entry = groups.setdefault(row["skip_rule"] or "unknown", {"count": 0, "examples": []})
        entry["count"] += 1
        if len(entry["examples"]) < SKIP_EXAMPLES:
            entry["examples"].append(
                skip_example(
                    row["task_id"], row["row_index"], row["skip_reason"], row.get("sample_id")
                )
            )
    return dict(sorted(groups.items()))


def skip_summary(tables: StoreTables) -> dict[str, dict[str, Any]]:
    """Every skipped sample of a store, grouped by rule (:func:`group_skips`).

    Example:
        >>> import tempfile
        >>> skip_summary(StoreTables.create(tempfile.mkdtemp()))
        {}
    """
    table = tables.table(SAMPLES_TABLE).to_table(
        columns=["task_id", "row_index", "sample_id", "skip_rule", "skip_reason"],
        filter=f"status = {sql_quote(STATUS_SKIPPED)}",
    )
    return group_skips(table.to_pylist())


def _row_json(raw: dict[str, Any]) -> str | None:
    if not raw:
        return None
    return json.dumps(raw, sort_keys=True, ensure_ascii=False, default=str)


def _media_problem(kind: str, item: MediaItem, outcome: ItemOutcome) -> str:
    if outcome.status == "failed":
        return f"{kind} {item.source_uri} failed to decode ({outcome.detail}); see `cache status`"
    return f"{outcome.rule}: {kind} {item.source_uri}: {outcome.detail}"


def sample_row(
    ref: RowRef,
    outcomes: dict[MediaItem, ItemOutcome],
    *,
    max_prompt_tokens: int | None = None,
) -> dict[str, Any]:
    """The ``samples`` row of one data row (without ``updated_at``).

    Example (text-only rows: no media, so no outcomes are needed):
        >>> import json, pathlib, tempfile
        >>> from videorl_kit.spec.models import TaskSpec
        >>> from videorl_kit.store.inputs import collect_inputs
        >>> data = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
        >>> _ = data.write_text(json.dumps({"problem": "2+2?", "answer": 4, "source": "x"}))
        >>> spec = TaskSpec.model_validate({"id": "t", "version": 1, "problem_type": "numerical",
        ...     "data": {"path": str(data)}, "prompt": {"template": "Q: {{ question }}"}})
        >>> row = sample_row(collect_inputs([spec]).rows[0], {})
        >>> row["status"], row["prompt"], row["answer"], json.loads(row["row_json"])["source"]
        ('ready', 'Q: 2+2?', '4', 'x')
    """
    spec, sample = ref.spec, ref.sample
    status, rule, reason, prompt = STATUS_READY, ref.skip_rule, ref.skip_reason, None
    if rule is not None:
        status = STATUS_SKIPPED
    else:
        try:
            prompt = render_prompt(spec, sample)
        except UserError as exc:
            status, rule, reason = STATUS_SKIPPED, RULE_PROMPT_ERROR, f"{RULE_PROMPT_ERROR}: {exc}"
    media = [("video", m) for m in ref.videos] + [("image", m) for m in ref.images]
    visual: int | None = 0
    if status == STATUS_READY:
        for kind, item in media:
            outcome = outcomes[item]
            if outcome.status == "failed":
                status, reason = STATUS_MEDIA_FAILED, _media_problem(kind, item, outcome)
                break
            if outcome.status == "skipped":
                status, rule = STATUS_SKIPPED, outcome.rule
                reason = _media_problem(kind, item, outcome)
                break
            visual = (visual or 0) + int(outcome.visual_tokens or 0)
    if status != STATUS_READY:
        visual = None
    text = (prompt or "") + (spec.prompt.system or "")
    text_tokens = estimate_text_tokens(text) if prompt is not None else None
    total = None if visual is None or text_tokens is None else visual + text_tokens
    limit = max_prompt_tokens
    if status == STATUS_READY and limit is not None and total is not None and total > limit:
        status, rule = STATUS_SKIPPED, RULE_OVER_TOKEN_BUDGET
        reason = f"{rule}: about {total} prompt tokens > max_prompt_tokens {limit}"

    def key_of(item: MediaItem) -> str | None:
        outcome = outcomes.get(item)
        return outcome.cache_key if outcome is not None and outcome.status == "ok" else None

    video_budget = spec.budget.video.model_dump(mode="json")
    image_budget = spec.budget.image.model_dump(mode="json")
    row: dict[str, Any] = {
        "task_id": spec.id,
        "sample_id": sample.sample_id,
        "spec_version": spec.version,
        "row_index": sample.row_index,
        "problem_type": str(sample.problem_type or spec.problem_type),
        "question": sample.question,
        "options": sample.options,
        "answer": sample.answer,
        "prompt": prompt,
        "system_prompt": spec.prompt.system,
        "video_uris": [m.source_uri for m in ref.videos],
        "image_uris": [m.source_uri for m in ref.images],
        "video_keys": [key_of(m) for m in ref.videos],
        "image_keys": [key_of(m) for m in ref.images],
        "video_budget_hash": budget_hash("video", video_budget),
        "image_budget_hash": budget_hash("image", image_budget),
        "visual_tokens": visual,
        "text_tokens_estimate": text_tokens,
        "prompt_tokens_estimate": total,
        "status": status,
        "skip_rule": rule,
        "skip_reason": reason,
        "row_json": _row_json(sample.raw),
        **(ref.source or SpecSource.of(spec)).columns(),
        "cache_schema_version": CACHE_SCHEMA_VERSION,
    }
    row["row_hash"] = sha256_text(canonical_json(row))
    return row


def _existing_hashes(tables: StoreTables, task_ids: list[str]) -> dict[tuple[str, str], str]:
    if not task_ids:
        return {}
    dataset = tables.table(SAMPLES_TABLE)
    table = dataset.to_table(
        columns=["task_id", "sample_id", "row_hash"], filter=sql_in("task_id", task_ids)
    )
    return {
        (t, s): h
        for t, s, h in zip(
            table.column("task_id").to_pylist(),
            table.column("sample_id").to_pylist(),
            table.column("row_hash").to_pylist(),
            strict=True,
        )
    }


SampleRows = dict[tuple[str, str], dict[str, Any]]
"""``samples`` rows by ``(task_id, sample_id)``."""


def sample_rows(
    refs: Iterable[RowRef],
    outcomes: dict[MediaItem, ItemOutcome],
    *,
    max_prompt_tokens: int | None = None,
) -> tuple[SampleRows, SampleLedger]:
    """The ``samples`` rows of ``refs`` and their ledger, written nowhere.

    A malformed row whose id collides with a well-formed one is keyed
    ``<id>#row<row_index>``.

    Example:
        >>> import json, pathlib, tempfile
        >>> from videorl_kit.spec.models import TaskSpec
        >>> from videorl_kit.store.inputs import collect_inputs
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> rows = [{"problem": "2+2?", "answer": 4}, {"problem": "no answer"}]
        >>> _ = (folder / "rows.jsonl").write_text("\\n".join(map(json.dumps, rows)))
        >>> spec = TaskSpec.model_validate({"id": "t", "version": 1, "problem_type": "numerical",
        ...     "data": {"path": str(folder / "rows.jsonl")},
        ...     "prompt": {"template": "{{ question }}"}})
        >>> built, ledger = sample_rows(collect_inputs([spec]).rows, {})
        >>> [built[key]["status"] for key in sorted(built)]
        ['ready', 'skipped']
        >>> ledger.n_samples, ledger.n_ready, ledger.skipped_by_rule, ledger.invariant_holds
        (2, 1, {'malformed_row': 1}, True)
    """
    ledger = SampleLedger()
    rows: SampleRows = {}
    built = [sample_row(ref, outcomes, max_prompt_tokens=max_prompt_tokens) for ref in refs]
    # well-formed rows first: a malformed row that collides with a real id gets a suffix
    for row in sorted(built, key=lambda r: r["status"] == STATUS_SKIPPED and r["prompt"] is None):
        ledger.n_samples += 1
        if row["status"] == STATUS_READY:
            ledger.n_ready += 1
        elif row["status"] == STATUS_MEDIA_FAILED:
            ledger.n_failed += 1
        else:
            ledger.n_skipped += 1
        key = (row["task_id"], row["sample_id"])
        if key in rows:
            key = (row["task_id"], f"{row['sample_id']}#row{row['row_index']}")
            row["sample_id"] = key[1]
            row["row_hash"] = sha256_text(
                canonical_json({k: v for k, v in row.items() if k != "row_hash"})
            )
        rows[key] = row
    ledger.skips = group_skips(r for r in rows.values() if r["status"] == STATUS_SKIPPED)
    return rows, ledger


def write_samples(
    tables: StoreTables, rows: SampleRows, ledger: SampleLedger, *, batch_rows: int = 4096
) -> None:
    """Upsert ``rows`` (from :func:`sample_rows`); delete rows of their tasks no longer in
    them. Counts what changed in ``ledger`` (``rows_written``, ``rows_deleted``).

    Only rows whose content changed are written, so an unchanged rebuild creates no new
    table version.

    Example:
        >>> import json, pathlib, tempfile
        >>> from videorl_kit.spec.models import TaskSpec
        >>> from videorl_kit.store.inputs import collect_inputs
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "rows.jsonl").write_text(json.dumps({"problem": "2+2?", "answer": 4}))
        >>> spec = TaskSpec.model_validate({"id": "t", "version": 1, "problem_type": "numerical",
        ...     "data": {"path": str(folder / "rows.jsonl")},
        ...     "prompt": {"template": "{{ question }}"}})
        >>> tables = StoreTables.create(folder / "store")
        >>> for _ in range(2):
        ...     rows, ledger = sample_rows(collect_inputs([spec]).rows, {})
        ...     write_samples(tables, rows, ledger)
        ...     print(ledger.rows_written)  # the second time: unchanged
        1
        0
    """
    with write_lock(tables.root):  # read and write in one turn: another build may write too
        _write_changed(tables, rows, ledger, batch_rows)


def _write_changed(
    tables: StoreTables, rows: SampleRows, ledger: SampleLedger, batch_rows: int
) -> None:
    task_ids = list(dict.fromkeys(task_id for task_id, _ in rows))
    existing = _existing_hashes(tables, task_ids)
    changed = [row for key, row in rows.items() if existing.get(key) != row["row_hash"]]
    now = datetime.now(UTC)
    for start in range(0, len(changed), batch_rows):
        chunk = [{**row, "updated_at": now} for row in changed[start : start + batch_rows]]
        table = pa.Table.from_pylist(chunk, schema=SAMPLES_SCHEMA)
        retry_conflicts(
            lambda table=table: (
                tables.table(SAMPLES_TABLE)
                .merge_insert(["task_id", "sample_id"])
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(table)
            )
        )
    ledger.rows_written = len(changed)
    stale = [key for key in existing if key not in rows]
    for task_id in task_ids:
        gone = [sample_id for t, sample_id in stale if t == task_id]
        if gone:
            condition = f"task_id = {sql_quote(task_id)} AND {sql_in('sample_id', gone)}"
            retry_conflicts(lambda c=condition: tables.table(SAMPLES_TABLE).delete(c))
            ledger.rows_deleted += len(gone)
