"""Reading a spec's data rows into :class:`Sample` objects.

Rows follow EasyVideoR1's layout (``problem``, ``answer``, ``videos``, ``images``,
``options``, ``problem_type``, ``data_type``, optional ``id``); the spec's field map
renames columns. A malformed row becomes a sample with ``skip_reason`` set, so a
consumer can count it as skipped instead of losing it.

Example:
    >>> import json, pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "rows.jsonl").write_text(json.dumps({"problem": "2+2?", "answer": 4}) + "\\n")
    >>> from videorl_kit.spec.models import TaskSpec
    >>> spec = TaskSpec.model_validate({"id": "t", "version": 1, "problem_type": "numerical",
    ...     "data": {"path": str(d / "rows.jsonl")}, "prompt": {"template": "{{ question }}"}})
    >>> [(s.sample_id, s.question, s.answer) for s in iter_samples(spec)]
    [('t-0', '2+2?', '4')]
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from videorl_kit.errors import UserError
from videorl_kit.problem_types import ProblemType, canonical_problem_type
from videorl_kit.safe_text import lone_surrogate_field
from videorl_kit.spec.models import TaskSpec
from videorl_kit.spec.paths import PathRoots


@dataclass(frozen=True)
class Sample:
    """One data row of a task, with media paths resolved."""

    sample_id: str
    task_id: str
    row_index: int
    question: str
    answer: str
    options: list[str] | None
    videos: list[Path]
    images: list[Path]
    problem_type: ProblemType
    skip_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)


def data_file(spec: TaskSpec) -> Path:
    """The local file holding ``spec``'s rows (downloaded at the pinned revision for Hub data)."""
    if spec.data.hub is not None:
        from videorl_kit.hub import resolve_hf_uri

        hub = spec.data.hub
        return Path(resolve_hf_uri(f"hf://{hub.repo}@{hub.revision}/{hub.file}").local_path)
    assert spec.data.path is not None
    return spec.resolve(spec.data.path, field="data.path")


def read_rows(path: Path) -> Iterator[dict[str, Any] | str]:
    """Yield the rows of a JSONL, JSON (list) or Parquet file; a bad JSON line yields its error.

    Raises :class:`UserError` if the file is missing or unreadable as a whole.
    """
    if not path.exists():
        raise UserError(f"{path}: data file not found")
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            yield from pq.read_table(path).to_pylist()
        elif suffix == ".json":
            rows = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(rows, list):
                raise UserError(f"{path}: a .json data file must hold a list of rows")
            yield from rows
        else:
            with path.open(encoding="utf-8") as handle:
                for number, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as exc:
                        yield f"line {number}: invalid JSON ({exc.msg})"
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, UserError):
            raise
        raise UserError(f"{path}: cannot read data file: {exc}") from None


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _path_list(value: Any, media: PathRoots, column: str) -> list[Path]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"field {column!r} must be a list of paths")
    return [media.resolve(v, base=media.folders[0], field=f"field {column!r}") for v in value]


def iter_samples(spec: TaskSpec) -> Iterator[Sample]:
    """Yield every row of ``spec`` as a :class:`Sample` (malformed rows carry ``skip_reason``)."""
    fields = spec.data.fields
    path = data_file(spec)
    media_root = (
        spec.resolve(spec.data.media_root, field="data.media_root")
        if spec.data.media_root
        else path.parent
    )
    media = PathRoots((media_root,), allow_absolute=spec.data.allow_absolute_paths)
    for index, row in enumerate(read_rows(path)):
        if spec.data.limit is not None and index >= spec.data.limit:
            return
        yield _sample(spec, index, row, media, fields)


def _sample(spec: TaskSpec, index: int, row: Any, media: PathRoots, fields: Any) -> Sample:
    def skipped(reason: str, raw: dict[str, Any]) -> Sample:
        return Sample(
            sample_id=f"{spec.id}-{index}", task_id=spec.id, row_index=index, question="",
            answer="", options=None, videos=[], images=[], problem_type=spec.problem_type,
            skip_reason=f"row {index}: {reason}", raw=raw,
        )  # fmt: skip

    if isinstance(row, str):
        return skipped(row, {})
    if not isinstance(row, dict):
        return skipped("row is not a JSON object", {})
    unencodable = lone_surrogate_field(row)
    if unencodable is not None:  # no UTF-8 form: it could be neither stored nor printed
        return skipped(f"field {unencodable!r} is not valid Unicode text (a lone surrogate)", {})
    missing = [name for name in (fields.question, fields.answer) if row.get(name) is None]
    if missing:
        return skipped(f"missing field {missing[0]!r}", row)
    try:
        videos = _path_list(row.get(fields.videos), media, fields.videos)
        images = _path_list(row.get(fields.images), media, fields.images)
        options = row.get(fields.options)
        if options is not None and (
            not isinstance(options, list) or not all(isinstance(o, str) for o in options)
        ):
            raise ValueError(f"field {fields.options!r} must be a list of strings or null")
        row_type = row.get(fields.problem_type)
        problem_type = canonical_problem_type(row_type) if row_type else spec.problem_type
    except ValueError as exc:
        return skipped(str(exc), row)
    sample_id = str(row[fields.id]) if row.get(fields.id) is not None else f"{spec.id}-{index}"
    return Sample(
        sample_id=sample_id,
        task_id=spec.id,
        row_index=index,
        question=_as_text(row[fields.question]),
        answer=_as_text(row[fields.answer]),
        options=options,
        videos=videos,
        images=images,
        problem_type=problem_type,
        raw=row,
    )
