"""``validate --data``: open a spec's data and report every problem, each where it is.

Checks, in order: the data file exists and parses as a whole; every column the spec maps
explicitly (``data.fields``) appears in some row; every kept row (after ``data.where``) is
usable (each skip rule of :func:`~videorl_kit.spec.data.iter_samples`: unreadable JSON,
missing fields, an unknown or missing problem type, a ``data_type`` contradicting the row's
media, ...); every media file of the usable rows exists under ``media_root`` (the missing
ones are counted, the first few named); a video may be a folder of numbered frames when
the spec declares ``data.frames_fps``.

A row problem is reported as ``data-file:line: rule: message`` (JSONL) or
``data-file:row N: rule: message`` (JSON, Parquet), rows counted from 1 in both and named
with their id when they have one (``data.jsonl:6 (id '106'): ...``); a problem of the spec
itself as ``spec-file:line: field.path: message``, like every other spec error, with "did
you mean" suggestions from the columns the rows do have.

One root cause is one message: rows skipped because a column is in no row at all (a
misspelt ``data.fields.media``) are counted in that column's message, not listed; the same
problem in many rows is named for the first :data:`NAMED_REPEATS` and counted after; media
of which not one exists under ``media_root`` are one message at ``data.media_root``.

Example:
    >>> import json, pathlib, tempfile
    >>> from videorl_kit.spec.models import FieldMap, TaskSpec
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
    >>> typo = TaskSpec.model_validate({**spec.model_dump(), "data": {"path": str(d / "d.jsonl"),
    ...     "fields": {"answer": "answr"}}})
    >>> [line.split(": ", 1)[1] for line in check_data(typo).lines()]  # doctest: +ELLIPSIS
    ["data.fields.answer: column 'answr' is in no row of ...; did you mean 'answer'? (2 rows..."]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.core.suggest import did_you_mean
from videorl_kit.spec.data import ROW_LABEL, Sample, data_file, iter_samples, media_root_of
from videorl_kit.spec.models import FieldMap, TaskSpec
from videorl_kit.spec.yaml_source import SpecLoadError, load_yaml_with_includes

NAMED_MISSING_MEDIA = 5
"""Missing media files named one by one; the rest are counted."""

NAMED_REPEATS = 3
"""Rows named for one problem (same rule, same message); the rest are counted in one line."""


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
        """One line per problem (counts of the problems not named one by one included)."""
        return [str(issue) for issue in self.issues]

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


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _field_of(fields: FieldMap) -> dict[str, str]:
    """Column -> the ``data.fields`` entry mapping it (an explicitly set entry first)."""
    names = [*sorted(fields.model_fields_set), *FieldMap.model_fields]
    found: dict[str, str] = {}
    for name in names:
        column = getattr(fields, name)
        if isinstance(column, str):
            found.setdefault(column, name)
    return found


def _column_issues(
    spec: TaskSpec, samples: list[Sample], shown: str
) -> tuple[list[DataIssue], set[int]]:
    """One issue per mapped column that is in no row, counting the rows it makes unusable.

    A column the spec maps explicitly is checked always; a default one (``videos``,
    ``problem``, ...) only when rows are skipped for its absence. Returns the issues and the
    indexes (in ``samples``) of the rows they account for.
    """
    fields = spec.data.fields
    seen = {key for s in samples for key in s.raw}
    if not samples or not seen:
        return [], set()
    field_of = _field_of(fields)
    caused: dict[str, list[int]] = {}
    for position, sample in enumerate(samples):
        columns = sample.skip_columns
        if sample.skip_rule is None or not columns or any(c in seen for c in columns):
            continue
        explicit = [c for c in columns if field_of.get(c) in fields.model_fields_set]
        caused.setdefault((explicit or list(columns))[0], []).append(position)
    checked = [getattr(fields, n) for n in sorted(fields.model_fields_set)]
    columns = [c for c in checked if isinstance(c, str) and c not in seen]
    columns += sorted(c for c in caused if c not in columns)
    issues = []
    for column in columns:
        name = field_of[column]
        default = "" if name in fields.model_fields_set else " (the default)"
        message = f"column {column!r}{default} is in no row of {shown}" + did_you_mean(
            column, sorted(seen)
        )
        rows = caused.get(column, [])
        if rows:
            rules = sorted({str(samples[i].skip_rule) for i in rows})
            message += f" ({_plural(len(rows), 'row')} skipped for it: {', '.join(rules)})"
        location = _spec_location(spec, ("data", "fields", name))
        issues.append(DataIssue(location, f"data.fields.{name}", message))
    return issues, {i for rows in caused.values() for i in rows}


def _relative(media: Path, media_root: Path) -> Path:
    try:
        return media.relative_to(media_root)
    except ValueError:
        return media


def _folder(media: Path, media_root: Path) -> str:
    return (
        f"{_relative(media, media_root)} is a folder; a video stored as numbered frame images "
        "needs data.frames_fps in the spec"
    )


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
    column_issues, accounted = _column_issues(spec, samples, shown)
    report.issues.extend(column_issues)
    media_root = media_root_of(spec, path)
    rows: list[DataIssue] = []
    repeats: dict[tuple[str, str], int] = {}
    missing: list[DataIssue] = []
    for position, sample in enumerate(samples):
        if sample.skip_rule is not None:
            if position in accounted:
                continue
            detail = ROW_LABEL.sub("", sample.skip_reason or "", count=1)
            seen = repeats.get((sample.skip_rule, detail), 0)
            repeats[(sample.skip_rule, detail)] = seen + 1
            if seen < NAMED_REPEATS:
                rows.append(DataIssue(sample.location(shown), sample.skip_rule, detail))
            continue
        report.n_usable += 1
        for media in [*sample.videos, *sample.images]:
            report.n_media += 1
            if os.path.isfile(media):
                continue
            if media in sample.videos and os.path.isdir(media):  # a video stored as frames
                if spec.data.frames_fps is None:
                    message = _folder(media, media_root)
                    rows.append(DataIssue(sample.location(shown), "media", message))
                continue
            report.n_missing_media += 1
            relative = _relative(media, media_root)
            message = f"{relative} not found under media_root {_shown(media_root)}"
            missing.append(DataIssue(sample.location(shown), "media", message))
            if len(missing) <= NAMED_MISSING_MEDIA:
                rows.append(missing[-1])
    if report.n_media > 1 and report.n_missing_media == report.n_media:
        rows = [issue for issue in rows if issue.field != "media"]
        example = missing[0].message.split(" not found under ", 1)[0]
        message = (
            f"none of the {report.n_media} media files of the usable rows is under "
            f"media_root {_shown(media_root)} (the first: {example}); check data.media_root, "
            "or fetch the media"
        )
        report.issues.append(
            DataIssue(_spec_location(spec, ("data", "media_root")), "data.media_root", message)
        )
    report.issues.extend(rows)
    for (rule, detail), count in repeats.items():
        if count > NAMED_REPEATS:
            more = _plural(count - NAMED_REPEATS, "more row")
            report.issues.append(DataIssue(shown, rule, f"{more} like the above: {detail}"))
    hidden = report.n_missing_media - NAMED_MISSING_MEDIA
    if hidden > 0 and report.n_missing_media < report.n_media:
        report.issues.append(
            DataIssue(
                shown,
                "media",
                f"{hidden} more media files not found "
                f"({report.n_missing_media} of {report.n_media} missing)",
            )
        )
    return report
