"""``trajectories import``: responses from files into the store, each scored again by the kit.

:func:`import_trajectories` reads every row of every file first (:mod:`.readers`,
:mod:`.layouts`), then for each one:

1. finds its task: the row's ``task_id``, or the one spec given; the task's spec is the one
   given with ``--spec``, else the spec file the store's samples were built from;
2. finds its sample in the store's ``samples`` table: by ``sample_id``, by the task's own id
   column (``data.fields.id``), or, for a public-set data row without an id, by the row's
   content (the raw row the store kept);
3. checks its token ids (when given) decode to its text with the named tokenizer;
4. scores the response with the task's verifier for the sample's gold, options and problem
   type; accuracy, format, overall, status and the details (which name the verifier and its
   version) are stored; the file's own reward is kept in the details as ``file_reward``, never
   used instead.

Any bad row stops the import before anything is written, and the error lists every bad row
as ``file:line: what is wrong``. Otherwise all rows are committed **at once** (one Lance
``merge_insert``, an atomic commit: a killed import leaves the table as it was) and
**idempotently** (a trajectory's id is a hash of its task, sample, response, model and token
ids, or for an eval line the id ``eval --trajectories`` gives it; ids already stored are not
inserted again).

Example:
    >>> import json, tempfile, pathlib
    >>> from videorl_kit.synth import write_demo_task
    >>> from videorl_kit.store import build_cache
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> spec = write_demo_task(folder, n_per_task=2)
    >>> _ = build_cache([spec], folder / "store")
    >>> rows = folder / "curated.jsonl"
    >>> line = {"sample_id": "synth-count-0000", "response": "<answer>2</answer>", "reward": 1}
    >>> _ = rows.write_text(json.dumps(line) + "\\n")
    >>> report = import_trajectories([rows], folder / "store", specs=[spec], source="curated")
    >>> report.n_new, import_trajectories([rows], folder / "store", specs=[spec]).n_new
    (1, 0)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.rewards.task import TaskReward
from videorl_kit.spec.loader import SpecError, load_spec
from videorl_kit.spec.models import TaskSpec
from videorl_kit.store.commit import sql_in
from videorl_kit.store.sample_check import FrameSources, check_samples, refuse
from videorl_kit.store.samples import STATUS_READY, STATUS_SKIPPED
from videorl_kit.store.schema import SAMPLES_TABLE, canonical_json, sha256_text
from videorl_kit.store.tables import StoreTables
from videorl_kit.store.trajectories import append_trajectories
from videorl_kit.train.offline.layouts import TrajectoryRow, parse_row
from videorl_kit.train.offline.readers import RowError, read_rows
from videorl_kit.train.offline.tokens import load_tokenizer

MAX_LISTED_ERRORS = 50
"""Bad rows listed in one error (the count of the others follows)."""

Progress = Callable[[str], None]


@dataclass
class ImportReport:
    """What an import did; ``n_rows == n_without_trajectory + n_duplicates + n_new +
    n_existing``."""

    store: str
    files: list[str]
    n_rows: int = 0
    n_without_trajectory: int = 0
    n_duplicates: int = 0
    n_new: int = 0
    n_existing: int = 0
    by_task: dict[str, int] = field(default_factory=dict)
    by_source: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return dict(vars(self))

    def summary(self) -> str:
        """One line for people.

        Example:
            >>> print(ImportReport("s", ["a.jsonl"], n_rows=3, n_new=2, n_existing=1).summary())
            imported 2 new trajectories into s (1 already stored, 0 duplicates within the files,
            0 rows without a trajectory; 3 rows read)
        """
        return (
            f"imported {self.n_new} new trajectories into {self.store} ({self.n_existing} already "
            f"stored, {self.n_duplicates} duplicates within the files, "
            f"{self.n_without_trajectory} rows without a trajectory; {self.n_rows} rows read)"
        )


@dataclass(frozen=True)
class StoredSample:
    """What scoring needs of a ``samples`` row."""

    sample_id: str
    answer: str
    options: list[str] | None
    problem_type: str
    status: str
    skip_reason: str | None


class _Tasks:
    """Specs, rewards and stored samples of the tasks an import touches (loaded on demand)."""

    def __init__(self, tables: StoreTables, specs: Sequence[TaskSpec]):
        self.tables = tables
        self.specs = {spec.id: spec for spec in specs}
        self.given = list(self.specs)
        self._store_specs: dict[str, str | None] | None = None
        self._rewards: dict[str, TaskReward] = {}
        self._samples: dict[str, dict[str, StoredSample]] = {}
        self._by_row: dict[str, dict[str, str]] = {}

    def _spec_files(self) -> dict[str, str | None]:
        if self._store_specs is None:
            table = self.tables.table(SAMPLES_TABLE).to_table(columns=["task_id", "spec_file"])
            self._store_specs = dict(
                zip(
                    table.column("task_id").to_pylist(),
                    table.column("spec_file").to_pylist(),
                    strict=True,
                )
            )
        return self._store_specs

    def spec(self, task_id: str, where: str) -> TaskSpec:
        if task_id in self.specs:
            return self.specs[task_id]
        files = self._spec_files()
        if task_id not in files:
            known = sorted(set(files) | set(self.specs))
            raise RowError(
                f"{where}: unknown task {task_id!r}: the store {self.tables.root} has "
                f"no samples of it (tasks: {', '.join(known) or 'none'})"
            )
        file = files[task_id]
        if not file or not Path(file).is_file():
            raise RowError(
                f"{where}: task {task_id!r}: its spec file {file} is gone; "
                "pass the spec with --spec"
            )
        try:
            spec = load_spec(file)
        except SpecError as exc:
            raise RowError(f"{where}: task {task_id!r}: its spec {file} does not load "
                           f"({exc.issues[0]}); pass it with --spec") from None  # fmt: skip
        self.specs[task_id] = spec
        return spec

    def reward(self, task_id: str) -> TaskReward:
        if task_id not in self._rewards:
            self._rewards[task_id] = TaskReward.from_spec(self.specs[task_id])
        return self._rewards[task_id]

    def samples(self, task_id: str) -> dict[str, StoredSample]:
        if task_id not in self._samples:
            columns = [
                "sample_id",
                "answer",
                "options",
                "problem_type",
                "status",
                "skip_reason",
                "row_json",
            ]
            rows = (
                self.tables.table(SAMPLES_TABLE)
                .to_table(columns=columns, filter=sql_in("task_id", [task_id]))
                .to_pylist()
            )
            spec = self.specs[task_id]
            ready = [{**r, "task_id": task_id} for r in rows if r["status"] == STATUS_READY]
            # the gold the trajectories are scored with: the spec's, never an edited store's
            problems = check_samples(ready, spec, FrameSources({}), media=False)
            refuse(self.tables.root, problems, [str(spec.source_file)] if spec.source_file else [])
            self._samples[task_id] = {
                r["sample_id"]: StoredSample(*(r[c] for c in columns[:-1])) for r in rows
            }
            self._by_row[task_id] = {r["row_json"]: r["sample_id"] for r in rows if r["row_json"]}
        return self._samples[task_id]

    def sample_by_row(self, task_id: str, raw: dict[str, Any]) -> str | None:
        self.samples(task_id)
        text = json.dumps(raw, sort_keys=True, ensure_ascii=False, default=str)
        return self._by_row[task_id].get(text)


def _task_of(row: TrajectoryRow, tasks: _Tasks) -> TaskSpec:
    if row.task_id is not None:
        return tasks.spec(row.task_id, row.where)
    if len(tasks.given) == 1:
        return tasks.specs[tasks.given[0]]
    how = "no --spec was given" if not tasks.given else f"{len(tasks.given)} specs were given"
    raise RowError(
        f"{row.where}: the row names no task_id and {how}; add task_id to the rows "
        "or import the file with the one --spec it belongs to"
    )


def _sample_of(row: TrajectoryRow, spec: TaskSpec, tasks: _Tasks) -> StoredSample:
    samples = tasks.samples(spec.id)
    id_column = spec.data.fields.id
    sample_id = row.sample_id
    how = "sample_id"
    if sample_id is None and row.raw.get(id_column) not in (None, ""):
        sample_id, how = str(row.raw[id_column]), f"id column {id_column!r}"
    if sample_id is None and row.layout == "peer":
        sample_id, how = tasks.sample_by_row(spec.id, row.raw), "its data row"
        if sample_id is None:
            raise RowError(
                f"{row.where}: no sample of task {spec.id!r} in the store has this data "
                f"row, and the row has no {id_column!r} column to find it by"
            )
    if sample_id is None:
        raise RowError(
            f"{row.where}: the row names no sample (sample_id, or task {spec.id!r}'s id "
            f"column {id_column!r})"
        )
    sample = samples.get(sample_id)
    if sample is None:
        raise RowError(
            f"{row.where}: sample {sample_id!r} (by {how}) of task {spec.id!r} is not in "
            f"the store {tasks.tables.root}; build-cache the task's spec first"
        )
    if sample.status == STATUS_SKIPPED:
        raise RowError(
            f"{row.where}: sample {sample_id!r} of task {spec.id!r} is skipped in the "
            f"store ({sample.skip_reason}); it cannot be scored or trained on"
        )
    return sample


def _check_tokens(row: TrajectoryRow) -> None:
    if row.token_ids is None or row.tokenizer_id is None:
        return
    try:
        tokenizer = load_tokenizer(row.tokenizer_id)
    except ValueError as exc:
        raise RowError(f"{row.where}: {exc}") from None
    vocab = len(tokenizer)
    if max(row.token_ids) >= vocab:
        raise RowError(
            f"{row.where}: token id {max(row.token_ids)} is outside tokenizer "
            f"{row.tokenizer_id!r} (vocabulary of {vocab})"
        )
    plain = tokenizer.decode(row.token_ids, skip_special_tokens=True)
    if plain != row.response and tokenizer.decode(row.token_ids) != row.response:
        shown = plain if len(plain) <= 60 else plain[:57] + "..."
        raise RowError(
            f"{row.where}: token_ids decode to {shown!r} with tokenizer "
            f"{row.tokenizer_id!r}, not to the row's response text"
        )


def trajectory_id(
    task_id: str, sample_id: str, response: str, policy_id: str | None,
    token_ids: list[int] | None,
) -> str:  # fmt: skip
    """The id of an imported trajectory: the same response to the same sample by the same
    model (and token ids) is one trajectory, whatever file or source it came from.

    Example:
        >>> trajectory_id("t", "s", "B", None, None) == trajectory_id("t", "s", "B", None, None)
        True
    """
    key = {"task_id": task_id, "sample_id": sample_id, "response": response,
           "policy_id": policy_id, "token_ids": token_ids}  # fmt: skip
    return sha256_text(canonical_json(key))


def eval_trajectory_id(run_id: str, task_id: str, sample_id: str, response_hash: str) -> str:
    """The id ``eval --trajectories`` gives a response of run ``run_id`` (the same hash of
    ``[run_id, task_id, sample_id, response_hash]``)."""
    return sha256_text(canonical_json([run_id, task_id, sample_id, response_hash]))


def eval_run_id(file: Path) -> str:
    """The run id of an eval ``samples_<task>.jsonl``: its folder's ``results.json``, else the
    folder's name.

    Example:
        >>> eval_run_id(Path("/runs/abc/samples_x.jsonl"))
        'abc'
    """
    results = file.parent / "results.json"
    try:
        run = json.loads(results.read_text(encoding="utf-8")).get("run", {})
        if isinstance(run, dict) and isinstance(run.get("run_id"), str):
            return run["run_id"]
    except (OSError, ValueError):
        pass
    return file.parent.name


def _record(
    row: TrajectoryRow, spec: TaskSpec, sample: StoredSample, tasks: _Tasks, source: str,
    run_id: str | None,
) -> dict[str, Any]:  # fmt: skip
    result = tasks.reward(spec.id).score(
        row.response, sample.answer, sample.options, sample.problem_type
    )
    details = dict(result.details)
    if row.file_reward is not None:
        details["file_reward"] = row.file_reward
    if run_id is not None and row.eval_response_hash is not None:
        key = eval_trajectory_id(run_id, spec.id, sample.sample_id, row.eval_response_hash)
    else:
        key = trajectory_id(spec.id, sample.sample_id, row.response, row.policy_id, row.token_ids)
    return {
        "trajectory_id": key,
        "sample_id": sample.sample_id,
        "task_id": spec.id,
        "response": row.response,
        "token_ids": row.token_ids,
        "tokenizer_id": row.tokenizer_id,
        "behaviour_logprobs": row.behaviour_logprobs,
        "reward_accuracy": result.accuracy,
        "reward_format": result.format,
        "reward_overall": result.overall,
        "reward_status": result.status,
        "reward_details": json.dumps(details, sort_keys=True, default=str),
        "policy_id": row.policy_id,
        "source": source,
    }


def _default_source(file: Path, layout: str, run_id: str | None) -> str:
    if layout == "eval" and run_id is not None:
        return f"eval:{run_id}"
    return f"offline:{file.name}"


def _error(errors: list[str], n_rows: int) -> UserError:
    listed = errors[:MAX_LISTED_ERRORS]
    more = len(errors) - len(listed)
    lines = [f"{len(errors)} of {n_rows} rows cannot be imported; nothing was imported:", *listed]
    if more:
        lines.append(f"... and {more} more")
    return UserError("\n".join(lines))


def import_trajectories(
    files: Iterable[str | Path],
    store: str | Path,
    *,
    specs: Sequence[str | Path | TaskSpec] = (),
    source: str | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Import the trajectories of ``files`` into the store (see the module doc); all or nothing.

    ``specs`` are spec files (or loaded specs) for tasks whose rows do not say their task, or
    whose store spec file moved; ``source`` names the trajectories' source (default
    ``offline:<file name>``, ``eval:<run id>`` for eval samples files). Raises
    :class:`UserError` listing every bad row, and for a store or spec that does not open.
    """
    say = progress or (lambda _m: None)
    started = time.perf_counter()
    files = [Path(f) for f in files]
    if not files:
        raise UserError("trajectories import: name at least one file")
    if source is not None and not source.strip():
        raise UserError("--source must not be empty")
    tables = StoreTables.open(store)
    tables.ensure_writable()
    loaded = []
    for item in specs:
        try:
            loaded.append(item if isinstance(item, TaskSpec) else load_spec(item))
        except SpecError as exc:
            raise UserError("\n".join(str(issue) for issue in exc.issues)) from None
    tasks = _Tasks(tables, loaded)
    report = ImportReport(str(tables.root), [str(f) for f in files])
    records: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    for file in files:
        say(f"reading {file}")
        run_id: str | None = None
        try:
            for raw in read_rows(file):
                report.n_rows += 1
                try:
                    row = parse_row(raw)
                    if row is None:
                        report.n_without_trajectory += 1
                        continue
                    if row.layout == "eval" and run_id is None:
                        run_id = eval_run_id(file)
                    spec = _task_of(row, tasks)
                    sample = _sample_of(row, spec, tasks)
                    _check_tokens(row)
                    name = source or _default_source(file, row.layout, run_id)
                    record = _record(row, spec, sample, tasks, name, run_id)
                except RowError as exc:
                    errors.append(str(exc))
                    continue
                if record["trajectory_id"] in records:
                    report.n_duplicates += 1
                    continue
                records[record["trajectory_id"]] = record
        except RowError as exc:  # the file itself cannot be read on
            errors.append(str(exc))
    if errors:
        raise _error(errors, report.n_rows)
    rows = list(records.values())
    say(f"committing {len(rows)} trajectories")
    report.n_new = append_trajectories(tables, rows)
    if report.n_new:
        tables.record_versions()
    report.n_existing = len(rows) - report.n_new
    for record in rows:
        report.by_task[record["task_id"]] = report.by_task.get(record["task_id"], 0) + 1
        report.by_source[record["source"]] = report.by_source.get(record["source"], 0) + 1
    report.seconds = round(time.perf_counter() - started, 3)
    return report
