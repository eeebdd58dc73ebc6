"""The ``samples`` table checked against its task spec: the spec is the reward's trust anchor.

The ``samples`` table keeps a copy of every data row's gold answer, options and problem
type, and the cache keys of its media. A store is a folder that anyone with write access
can edit, and a store downloaded from someone else is theirs, so nothing that decides a
reward or picks a sample's frames is taken from it on trust. :func:`check_samples` reads the
spec's data rows the way ``build-cache`` read them (:func:`spec_samples`) and compares every
ready sample of the store with its row:

* ``answer``, ``options`` and ``problem_type`` must equal the row's (the gold the reward
  compares with, and everything that picks and configures the verifier);
* every media cache key must name the frames row of the row's own file: the frames row's
  ``source_uri`` is the path the row resolves to, or, when two files with the same content
  share one frames row, the row's file hashes to the frames row's ``source_content_hash``
  (only such shared rows are hashed);
* the sample must still be a usable row of the spec's data.

Each difference is a :class:`SampleProblem` naming the task, the row and what differs.
:func:`refuse` turns them into one line with the repair: ``build-cache`` again rewrites
the samples table from the spec's rows. ``CachedSampleDataset`` (and through it the TRL
dataset and the OpenRLHF bundle) refuses such a store; ``cache verify`` lists every
problem. Not checked: the rendered prompt (it decides what the model reads, not how an
answer is scored).

Example:
    >>> import json, pathlib, tempfile
    >>> from videorl_kit.spec.models import TaskSpec
    >>> data = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
    >>> _ = data.write_text(json.dumps({"id": "q1", "problem": "2+2?", "answer": 4}))
    >>> spec = TaskSpec.model_validate({"id": "t", "version": 1, "problem_type": "numerical",
    ...     "data": {"path": str(data)}, "prompt": {"template": "{{ question }}"}})
    >>> row = {"task_id": "t", "sample_id": "q1", "problem_type": "numerical",
    ...        "answer": "99", "options": None, "video_keys": [], "image_keys": []}
    >>> [str(p) for p in check_samples([row], spec, FrameSources({}))]
    ["task t row 1 (id 'q1'): the store's answer '99' differs from the spec's data row ('4')"]
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from videorl_kit.core.errors import UserError
from videorl_kit.core.safe_text import quoted
from videorl_kit.media.frame_folder import FRAME_FOLDER_DECODER, frame_folder_hash
from videorl_kit.media.hashing import file_content_hash
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import data_file, iter_samples
from videorl_kit.store.errors import StoreMismatchError
from videorl_kit.store.provenance import pin_hub_data, spec_sha256
from videorl_kit.store.schema import SAMPLES_TABLE

if TYPE_CHECKING:
    import pyarrow as pa

    from videorl_kit.spec.data import Sample
    from videorl_kit.spec.models import TaskSpec
    from videorl_kit.store.tables import StoreTables

SAMPLE_COLUMNS: tuple[str, ...] = (
    "task_id", "sample_id", "problem_type", "answer", "options", "video_keys", "image_keys",
)  # fmt: skip
"""The ``samples`` columns :func:`check_samples` compares (plus ``data_revision``, if read)."""


@dataclass(frozen=True)
class SampleProblem:
    """One ready sample that disagrees with its spec's data row."""

    task_id: str
    sample_id: str
    row: str  # "row 7 (id 'q-7')", or "sample 'q-7'" when the spec has no such row
    field: str  # answer | options | problem_type | video_keys | image_keys | row
    detail: str

    def __str__(self) -> str:
        return f"task {self.task_id} {self.row}: {self.detail}"

    def as_dict(self) -> dict[str, str]:
        """JSON form (``cache verify --json``)."""
        return {"task_id": self.task_id, "sample_id": self.sample_id, "row": self.row,
                "field": self.field, "detail": self.detail}  # fmt: skip


@dataclass(frozen=True)
class FrameSource:
    """What a frames row says about the file it was decoded from."""

    source_uri: str
    content_hash: str
    decoder: str
    source_fps: float


class FrameSources:
    """``cache_key -> FrameSource`` of a frames table (metadata only, no frames read)."""

    def __init__(self, rows: dict[str, FrameSource]):
        self.rows = rows

    @classmethod
    def of(cls, metadata: pa.Table) -> FrameSources:
        """From ``FrameStore.metadata()`` (or any table with the four columns and the key).

        Example:
            >>> import pyarrow as pa
            >>> table = pa.table({"cache_key": ["k"], "source_uri": ["/v.mp4"],
            ...     "source_content_hash": ["h"], "decoder": ["pyav"], "source_fps": [25.0]})
            >>> FrameSources.of(table).rows["k"].source_uri
            '/v.mp4'
        """
        names = ("cache_key", "source_uri", "source_content_hash", "decoder", "source_fps")
        columns = [metadata.column(name).to_pylist() for name in names]
        return cls({key: FrameSource(*rest) for key, *rest in zip(*columns, strict=True)})


def _media_uri(path: Path) -> str:
    """The ``source_uri`` a build records for a row's media path (see ``MediaItem``)."""
    return os.path.abspath(os.fspath(path))


def spec_samples(spec: TaskSpec, data_revision: str | None = None) -> dict[str, Sample]:
    """The usable rows of ``spec``'s data by sample id, as ``build-cache`` reads them.

    Rows a build skips (malformed, another problem type, a second row with a used id) are
    left out. Hub data is read at ``data_revision`` (the commit the store recorded for the
    build) when given, else at the commit the spec's revision resolves to now.

    Example:
        >>> import json, pathlib, tempfile
        >>> from videorl_kit.spec.models import TaskSpec
        >>> data = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
        >>> rows = [{"id": "a", "problem": "?", "answer": 1}, {"id": "a", "problem": "?",
        ...         "answer": 2}, {"problem": "no answer"}]
        >>> _ = data.write_text("\\n".join(json.dumps(r) for r in rows))
        >>> spec = TaskSpec.model_validate({"id": "t", "version": 1, "problem_type":
        ...     "numerical", "data": {"path": str(data)}, "prompt": {"template": "x"}})
        >>> {k: s.answer for k, s in spec_samples(spec).items()}
        {'a': '1'}
    """
    hub = spec.data.hub
    if hub is not None and data_revision:
        pinned_hub = hub.model_copy(update={"revision": data_revision})
        pinned = spec.model_copy(update={"data": spec.data.model_copy(update={"hub": pinned_hub})})
    else:
        pinned, _ = pin_hub_data(spec)
    found: dict[str, Sample] = {}
    for sample in iter_samples(pinned, paths_by_name=True):  # the media are not opened
        if sample.skip_rule is None and sample.sample_id not in found:
            found[sample.sample_id] = sample
    return found


def _file_hash(path: str, source: FrameSource) -> str | None:
    """The content hash of ``path`` the way the build computed the frames row's (None when
    it is not a regular file or, for a frame folder, a folder: nothing else is opened)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if source.decoder == FRAME_FOLDER_DECODER:
        return frame_folder_hash(path, source.source_fps) if stat.S_ISDIR(mode) else None
    return file_content_hash(path) if stat.S_ISREG(mode) else None


def check_samples(
    rows: Iterable[dict[str, Any]],
    spec: TaskSpec,
    frames: FrameSources,
    *,
    expected: dict[str, Sample] | None = None,
    file_hash: Callable[[str, FrameSource], str | None] = _file_hash,
    media: bool = True,
) -> list[SampleProblem]:
    """Every disagreement between the ready ``samples`` rows of ``spec``'s task and the
    spec's data rows (see the module notes); ``[]`` when they agree.

    ``rows`` are ``samples`` rows with at least :data:`SAMPLE_COLUMNS` (rows of other tasks
    are ignored; without ``media``, the key columns are neither needed nor checked);
    ``frames`` is the store's frames metadata; ``expected`` the spec's rows when already
    read (:func:`spec_samples`).

    Example: see the module example.
    """
    mine = [row for row in rows if row["task_id"] == spec.id]
    if expected is None:
        revisions = {row.get("data_revision") for row in mine}
        expected = spec_samples(spec, revisions.pop() if len(revisions) == 1 else None)
    hashes: dict[tuple[str, str, float], str | None] = {}
    problems: list[SampleProblem] = []
    for row in mine:
        sample_id = row["sample_id"]
        sample = expected.get(sample_id)
        if sample is None:
            problems.append(SampleProblem(
                spec.id, sample_id, f"sample {quoted(sample_id)}", "row",
                "the spec's data has no usable row with this id (the store's row was added "
                "or the data changed since the build)",
            ))  # fmt: skip
            continue

        def problem(field: str, detail: str, sample: Sample = sample, sid: str = sample_id) -> None:
            problems.append(SampleProblem(spec.id, sid, sample.row_label, field, detail))

        wanted = {
            "answer": sample.answer,
            "options": sample.options,
            "problem_type": str(sample.problem_type or spec.problem_type),
        }
        for field, value in wanted.items():
            if row[field] != value:
                problem(field, f"the store's {field} {_shown(row[field])} differs from the "
                               f"spec's data row ({_shown(value)})")  # fmt: skip
        for kind, paths in (("video", sample.videos), ("image", sample.images)) if media else ():
            keys = list(row[f"{kind}_keys"] or [])
            if len(keys) != len(paths):
                problem(f"{kind}_keys", f"the store lists {len(keys)} {kind} key(s), the spec's "
                                        f"data row {len(paths)} {kind}(s)")  # fmt: skip
                continue
            for number, (key, path) in enumerate(zip(keys, paths, strict=True), start=1):
                uri = _media_uri(path)
                source = frames.rows.get(key)
                if source is None or source.source_uri == uri:
                    continue  # a lost frames row: every read names it (MissingKeyError)
                memo = (uri, source.decoder, source.source_fps)
                if memo not in hashes:
                    hashes[memo] = file_hash(uri, source)
                if hashes[memo] != source.content_hash:
                    problem(f"{kind}_keys",
                            f"{kind} {number} is {uri} in the spec's data row, but its cache key "
                            f"{key[:16]} is the frames row of {quoted(source.source_uri, 200)} "
                            "(another file's frames)")  # fmt: skip
    return problems


_AGREED: dict[tuple[Any, ...], None] = {}
"""Checks that found nothing, in this process (see :func:`check_dataset`); bounded."""

_AGREED_MAX = 256


def _agreement_key(
    tables: StoreTables, spec: TaskSpec, rows: Sequence[dict[str, Any]]
) -> tuple[Any, ...] | None:
    """What a passed check depends on: the checked columns of the rows, the store's table
    versions (the frames rows the keys name), the spec's content and its data file's
    identity (None for Hub data: never remembered)."""
    if spec.data.hub is not None:
        return None
    try:
        path = data_file(spec)
        info = os.stat(path)
    except (OSError, UserError):
        return None
    checked = [
        (r["sample_id"], r["answer"], r["options"], r["problem_type"], r["video_keys"],
         r["image_keys"])
        for r in rows if r["task_id"] == spec.id
    ]  # fmt: skip
    content = hashlib.blake2b(repr(checked).encode("utf-8", "surrogatepass")).hexdigest()
    versions = tuple(sorted(tables.latest_versions().items()))
    return (os.path.realpath(tables.root), versions, spec_sha256(spec), str(path),
            info.st_size, info.st_mtime_ns, info.st_ino, content)  # fmt: skip


def check_dataset(
    tables: StoreTables, rows: Sequence[dict[str, Any]], spec: TaskSpec, frames: FrameSources
) -> None:
    """:func:`check_samples` then :func:`refuse`, for a dataset opened over ``rows``.

    A check that found nothing is remembered for this process while the store's tables are
    at the same versions and the spec and its data file are unchanged, so the second open of
    the same dataset (a trainer's plan, then its dataset) does not read the rows again.

    Example:
        >>> import json, pathlib, tempfile
        >>> from videorl_kit.spec.models import TaskSpec
        >>> from videorl_kit.store.tables import StoreTables
        >>> data = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
        >>> _ = data.write_text(json.dumps({"id": "q1", "problem": "2+2?", "answer": 4}))
        >>> spec = TaskSpec.model_validate({"id": "t", "version": 1, "problem_type":
        ...     "numerical", "data": {"path": str(data)}, "prompt": {"template": "x"}})
        >>> tables = StoreTables.create(data.parent / "store")
        >>> row = {"task_id": "t", "sample_id": "q1", "problem_type": "numerical",
        ...        "answer": "4", "options": None, "video_keys": [], "image_keys": []}
        >>> check_dataset(tables, [row], spec, FrameSources({}))  # agrees: nothing happens
        >>> check_dataset(tables, [{**row, "answer": "5"}], spec, FrameSources({}))
        Traceback (most recent call last):
        ...
        videorl_kit.store.errors.StoreMismatchError: ...: task t row 1 (id 'q1'): the store's ...
    """
    key = _agreement_key(tables, spec, rows)
    if key is not None and key in _AGREED:
        return
    refuse(tables.root, check_samples(rows, spec, frames),
           [str(spec.source_file)] if spec.source_file else [])  # fmt: skip
    if key is not None:
        if len(_AGREED) >= _AGREED_MAX:
            _AGREED.pop(next(iter(_AGREED)))
        _AGREED[key] = None


def _shown(value: Any) -> str:
    return "null" if value is None else quoted(value)


def refuse(
    store: str | Path, problems: Sequence[SampleProblem], spec_files: Sequence[str] = ()
) -> None:
    """Raise :class:`StoreMismatchError` (one line: the first problem, how many more, the
    repair) when ``problems`` is not empty.

    Example:
        >>> refuse("/s", [])
        >>> refuse("/s", [SampleProblem("t", "q1", "row 1", "answer", "differs")])
        Traceback (most recent call last):
        ...
        videorl_kit.store.errors.StoreMismatchError: /s: task t row 1: differs; the samples ...
    """
    if not problems:
        return
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    specs = " ".join(shlex.quote(str(f)) for f in spec_files) or "SPEC..."
    raise StoreMismatchError(
        f"{store}: {problems[0]}{more}; the samples table disagrees with the task spec's data "
        f"(edited, or built from other data): build it again with `videorl-kit build-cache "
        f"{specs} --store {shlex.quote(str(store))}` (the gold always comes from the spec)"
    )


@dataclass
class StoreSampleCheck:
    """The ready samples of a whole store checked against their specs (``cache verify``)."""

    problems: list[SampleProblem]
    n_checked: int
    unchecked_tasks: dict[str, str]  # task -> why its samples could not be checked


def check_store_samples(
    tables: StoreTables, frames: FrameSources, specs: Sequence[TaskSpec] = ()
) -> StoreSampleCheck:
    """Check every ready sample of the store against its task's spec.

    A task's spec is the one in ``specs`` with its id, else the spec file the store recorded
    for it (``spec_file``), loaded now; a task whose spec cannot be had is listed in
    ``unchecked_tasks`` with the reason (pass its spec).

    Example:
        >>> import tempfile
        >>> from videorl_kit.store.tables import StoreTables
        >>> empty = StoreTables.create(tempfile.mkdtemp())
        >>> check_store_samples(empty, FrameSources({})).n_checked
        0
    """
    columns = [*SAMPLE_COLUMNS, "data_revision", "spec_file"]
    rows = tables.table(SAMPLES_TABLE).to_table(columns=columns, filter="status = 'ready'")
    by_task: dict[str, list[dict[str, Any]]] = {}
    for row in rows.to_pylist():
        by_task.setdefault(row["task_id"], []).append(row)
    given = {spec.id: spec for spec in specs}
    result = StoreSampleCheck([], 0, {})
    for task_id, task_rows in sorted(by_task.items()):
        spec = given.get(task_id)
        if spec is None:
            files = sorted({str(r["spec_file"]) for r in task_rows if r["spec_file"]})
            if len(files) != 1:
                why = "built from a spec in code" if not files else f"built from {len(files)} specs"
                result.unchecked_tasks[task_id] = f"{why}: pass its spec with --spec"
                continue
            try:
                spec = load_spec(files[0])
            except Exception as exc:  # any reason the recorded file cannot be loaded now
                result.unchecked_tasks[task_id] = (
                    f"its recorded spec {files[0]} cannot be loaded ({type(exc).__name__}: "
                    f"{exc}); pass its spec with --spec"
                )
                continue
            if spec.id != task_id:
                result.unchecked_tasks[task_id] = (
                    f"its recorded spec {files[0]} now declares id {quoted(spec.id)}; pass its "
                    "spec with --spec"
                )
                continue
        try:
            result.problems += check_samples(task_rows, spec, frames)
        except UserError as exc:  # the spec's data cannot be read now
            result.unchecked_tasks[task_id] = f"its spec's data cannot be read ({exc})"
            continue
        result.n_checked += len(task_rows)
    return result
