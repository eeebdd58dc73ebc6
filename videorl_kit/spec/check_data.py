"""``validate --data``: open a spec's data and report every problem, each where it is.

Checks, in order: the data file exists and parses as a whole; every column the spec maps
explicitly (``data.fields``) appears in some row; every kept row (after ``data.where``) is
usable (each skip rule of :func:`~videorl_kit.spec.data.iter_samples`: unreadable JSON,
missing fields, an unknown or missing problem type, a ``data_type`` contradicting the row's
media, ...); every media file of the usable rows exists under ``media_root`` (the missing
ones are counted, the first few named).

A row problem is reported as ``data-file:line: rule: message`` (JSONL) or
``data-file:row N: rule: message`` (JSON, Parquet); a problem of the spec itself as
``spec-file:line: field.path: message``, like every other spec error.

Example:
    >>> import json, pathlib, tempfile
    >>> from videorl_kit.spec.models import TaskSpec
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> rows = [{"problem": "Q", "answer": "1", "videos": ["a.mp4"]}, {"problem": "Q"}]
    >>> _ = (d / "d.jsonl").write_text("".join(json.dumps(r) + "\\n" for r in rows))
    >>> spec = TaskSpec.model_validate({"id": "t", "version": 1, "problem_type": "numerical",
    ...     "data": {"path": str(d / "d.jsonl")}, "prompt": {"template": "{{ question }}"}})
    >>> report = check_data(spec)
    >>> (report.n_samples, report.n_usable, report.n_media, report.n_missing_media)
    (2, 1, 1, 1)
    >>> [line.split(": ", 1)[1] for line in report.lines()]  # doctest: +ELLIPSIS
    ['media: a.mp4 not found under media_root ...', "malformed_row: missing field 'answer'"]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.spec.data import data_file, iter_samples, media_root_of
from videorl_kit.spec.models import TaskSpec
from videorl_kit.spec.yaml_source import SpecLoadError, load_yaml_with_includes

NAMED_MISSING_MEDIA = 5
"""Missing media files named one by one; the rest are counted."""


@dataclass(frozen=True)
class DataIssue:
    """One problem found in a spec's data: where (``file:line`` or ``file:row N``) and what."""

    location: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.field}: {self.message}"


@dataclass
class DataReport:
    """What ``validate --data`` found in one spec's data."""

    data_file: str
    n_samples: int = 0
    n_usable: int = 0
    n_media: int = 0
    n_missing_media: int = 0
    issues: list[DataIssue] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the data has no problem at all."""
        return not self.issues and not self.n_missing_media

    def lines(self) -> list[str]:
        """One line per problem, plus a count of missing media beyond the named ones."""
        shown = [str(issue) for issue in self.issues]
        hidden = self.n_missing_media - sum(i.field == "media" for i in self.issues)
        if hidden > 0:
            shown.append(
                f"{self.data_file}: media: {hidden} more media files not found "
                f"({self.n_missing_media} of {self.n_media} missing)"
            )
        return shown

    def as_dict(self) -> dict[str, Any]:
        """JSON form for ``validate --data --json``."""
        return {
            "data_file": self.data_file,
            "n_samples": self.n_samples,
            "n_usable": self.n_usable,
            "n_media": self.n_media,
            "n_missing_media": self.n_missing_media,
            "issues": self.lines(),
        }


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _spec_location(spec: TaskSpec, field_path: tuple[str, ...]) -> str:
    """``spec-file:line`` of a field (the spec file's first line when unknown)."""

    if spec.source_file is None:
        return "(spec in code):1"
    try:
        file, line = load_yaml_with_includes(spec.source_file).origin(field_path)
    except SpecLoadError:
        file, line = str(spec.source_file), 1
    return f"{file}:{line}"


def check_data(spec: TaskSpec) -> DataReport:
    """Open ``spec``'s data and collect every problem (see the module docstring).

    Never raises for bad data: an unreadable data file is one issue at the spec's
    ``data.path`` (or ``data.hub``) line.
    """
    try:
        path = data_file(spec)
        samples = list(iter_samples(spec))
    except UserError as exc:
        where = ("data", "path") if spec.data.path is not None else ("data", "hub")
        shown = str(exc)
        report = DataReport(data_file=spec.data.path or "")
        report.issues.append(DataIssue(_spec_location(spec, where), ".".join(where), shown))
        return report
    shown = _shown(path)
    report = DataReport(data_file=shown, n_samples=len(samples))
    fields = spec.data.fields
    seen_columns = {key for s in samples for key in s.raw}
    for name in sorted(fields.model_fields_set):
        column = getattr(fields, name)
        if column is not None and samples and column not in seen_columns:
            report.issues.append(
                DataIssue(
                    _spec_location(spec, ("data", "fields", name)),
                    f"data.fields.{name}",
                    f"column {column!r} is in no row of {shown}",
                )
            )
    media_root = media_root_of(spec, path)
    for sample in samples:
        if sample.skip_rule is not None:
            detail = (sample.skip_reason or "").removeprefix(f"row {sample.row_index}: ")
            report.issues.append(DataIssue(sample.location(shown), sample.skip_rule, detail))
            continue
        report.n_usable += 1
        for media in [*sample.videos, *sample.images]:
            report.n_media += 1
            if os.path.isfile(media):
                continue
            report.n_missing_media += 1
            if report.n_missing_media <= NAMED_MISSING_MEDIA:
                try:
                    relative = media.relative_to(media_root)
                except ValueError:
                    relative = media
                report.issues.append(
                    DataIssue(
                        sample.location(shown),
                        "media",
                        f"{relative} not found under media_root {_shown(media_root)}",
                    )
                )
    return report
