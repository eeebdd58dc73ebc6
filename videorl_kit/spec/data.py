"""Reading a spec's data rows into :class:`Sample` objects.

Rows follow EasyVideoR1's layout (``problem``, ``answer``, ``videos``, ``images``,
``options``, ``problem_type``, ``data_type``, optional ``id``); the spec's field map
renames columns (a source set published in another layout, such as Charades-STA or
GoT-10k, is read by ``data.layout``: :mod:`videorl_kit.spec.source_layouts`). The public
video-RL sets (Video-R1-260k, OneThinker) read as they are with
``fields: {answer: solution, media: path, id: problem_id}``:

* a gold answer wrapped in one ``<answer>…</answer>`` block (their ``solution``) is
  unwrapped automatically; a gold with two answer blocks is ambiguous and skipped;
* the ``media`` column holds one path (or a list) whose modality is the row's
  ``data_type``: ``video`` rows decode as videos under the video budget, ``image`` rows as
  images under the image budget;
* with ``problem_type: from_row`` each row's ``problem_type`` (aliases accepted) picks its
  verifier; with a fixed problem type, a row that declares another type is skipped rather
  than scored by the wrong verifier.

``data.where`` keeps rows whose columns equal a value or one of a list of values (the
problem-type column compares canonically). Rows it drops are not samples at all (like
rows past ``data.limit``): they are neither counted nor skipped, and they keep the row
numbers of the rows after them unchanged. ``data.limit`` counts kept rows.

A row that cannot be used becomes a sample with ``skip_rule`` (a rule of
:mod:`videorl_kit.core.skip_rules`)
and ``skip_reason`` set, so a consumer counts it as skipped instead of losing it.

Example:
    >>> import json, pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> rows = [{"problem": "2+2?", "solution": "<answer>4</answer>", "problem_type": "numerical"},
    ...         {"problem": "Colour?", "solution": "<answer>B</answer>", "options": ["A. red",
    ...          "B. blue"], "problem_type": "multiple choice"},
    ...         {"problem": "Count?", "solution": "3", "problem_type": "numerical",
    ...          "data_type": "image"}]
    >>> _ = (d / "rows.jsonl").write_text("".join(json.dumps(r) + "\\n" for r in rows))
    >>> from videorl_kit.spec.models import TaskSpec
    >>> spec = TaskSpec.model_validate({"id": "t", "version": 1, "problem_type": "from_row",
    ...     "data": {"path": str(d / "rows.jsonl"), "fields": {"answer": "solution"}},
    ...     "prompt": {"template": "{{ question }}"}})
    >>> [(s.sample_id, s.answer, s.problem_type.value, s.skip_rule) for s in iter_samples(spec)]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('t-0', '4', 'numerical', None), ('t-1', 'B', 'multiple_choice', None),
     ('t-2', '', 'numerical', 'data_type_mismatch')]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError, VideoRLKitError
from videorl_kit.core.problem_types import (
    ProblemType,
    canonical_problem_type,
    unknown_problem_type_message,
)
from videorl_kit.core.safe_text import lone_surrogate_field, quoted
from videorl_kit.core.skip_rules import (
    RULE_DATA_TYPE_MISMATCH,
    RULE_MALFORMED_ROW,
    RULE_MISSING_PROBLEM_TYPE,
    RULE_PROBLEM_TYPE_MISMATCH,
    RULE_UNKNOWN_PROBLEM_TYPE,
)
from videorl_kit.hf.resolve import resolve_hf_uri
from videorl_kit.spec.annotations import apply_layout
from videorl_kit.spec.models import DATA_TYPES, FieldMap, TaskSpec
from videorl_kit.spec.paths import PathRoots
from videorl_kit.spec.source_layouts import read_layout_rows


@dataclass(frozen=True)
class Sample:
    """One data row of a task, with media paths resolved.

    ``problem_type`` is the row's own type (None only on a skipped row of a ``from_row``
    spec that has none); ``data_type`` is the row's declared ``video``/``image``/``text``
    (None if the row declares none). ``line`` is the row's line in a JSONL file (None for
    JSON and Parquet files, where :attr:`row_index` locates it). ``row_index`` counts from 0
    (sample ids and lmms-eval's ``doc_id`` use it); messages name a row from 1
    (:attr:`row_label`), the same way in every file format. ``row_id`` is the id the row
    gives itself (None when it gives none and ``sample_id`` is made up). ``skip_columns``
    names the columns whose absence from the row explains its skip (a column absent from
    every row is one root cause: ``validate --data`` reports it once, not once per row).
    """

    sample_id: str
    task_id: str
    row_index: int
    question: str
    answer: str
    options: list[str] | None
    videos: list[Path]
    images: list[Path]
    problem_type: ProblemType | None
    skip_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    skip_rule: str | None = None
    data_type: str | None = None
    line: int | None = None
    row_id: str | None = None
    skip_columns: tuple[str, ...] = ()

    @property
    def row_label(self) -> str:
        """The row as messages name it: ``row N`` (from 1), with its id when it has one.

        Example:
            >>> Sample("s", "t", 4, "", "", None, [], [], None).row_label
            'row 5'
            >>> Sample("106", "t", 5, "", "", None, [], [], None, row_id="106").row_label
            "row 6 (id '106')"
        """
        return row_label(self.row_index, self.row_id)

    def location(self, data_path: Path | str) -> str:
        """Where the row is: ``file:line`` for JSONL, ``file:row N`` (from 1) otherwise, with
        the row's id when it has one. A JSONL file without blank lines numbers each row as
        the same file in JSON would.

        Example:
            >>> Sample("s", "t", 4, "", "", None, [], [], None, line=5).location("d.jsonl")
            'd.jsonl:5'
            >>> Sample("7", "t", 4, "", "", None, [], [], None, row_id="7").location("d.json")
            "d.json:row 5 (id '7')"
        """
        where = f"{self.line}" if self.line is not None else f"row {self.row_index + 1}"
        return f"{data_path}:{where}{_id_suffix(self.row_id)}"


def _id_suffix(row_id: str | None) -> str:
    return f" (id {quoted(row_id)})" if row_id is not None else ""


def row_label(row_index: int, row_id: str | None = None) -> str:
    """How messages name the row at ``row_index`` (counted from 0): ``row N`` from 1, and the
    row's own id when it has one.

    Example:
        >>> row_label(0), row_label(2, "q-17")
        ('row 1', "row 3 (id 'q-17')")
    """
    return f"row {row_index + 1}{_id_suffix(row_id)}"


ROW_LABEL = re.compile(r"row \d+(?: \(id (?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\))?: ")
"""The :func:`row_label` prefix (and its ``": "``) that starts a skip reason."""


def duplicate_id_reason(sample: Sample, first_row_of: dict[str, int]) -> str:
    """Why ``sample`` is skipped when an earlier row (``first_row_of``: sample id -> row
    index) already used its id; rows named as :func:`row_label` names them.

    Example:
        >>> dup = Sample("q1", "t", 3, "", "", None, [], [], None, row_id="q1")
        >>> duplicate_id_reason(dup, {"q1": 0})
        "row 4 (id 'q1'): duplicate sample id 'q1' (first used by row 1)"
    """
    first = row_label(first_row_of[sample.sample_id])
    return f"{sample.row_label}: duplicate sample id {sample.sample_id!r} (first used by {first})"


def data_file(spec: TaskSpec) -> Path:
    """The local file holding ``spec``'s rows (downloaded at the pinned revision for Hub data)."""
    if spec.data.hub is not None:
        return Path(resolve_hf_uri(spec.data.hub.uri).local_path)
    assert spec.data.path is not None
    return spec.resolve(spec.data.path, field="data.path")


def read_rows(path: Path) -> Iterator[tuple[int | None, Any]]:
    """Yield ``(line, row)`` for each row of a JSONL, JSON (list) or Parquet file.

    ``line`` is the 1-based line of a JSONL row (None for JSON and Parquet). A line that is
    not valid JSON yields its error as a string (the line is given), so one bad line never
    stops a reader.
    Raises :class:`UserError` if the file is missing or unreadable as a whole.

    Example:
        >>> import pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
        >>> _ = p.write_text('{"a": 1}\\n\\n{oops\\n')
        >>> rows = list(read_rows(p))
        >>> rows[0], rows[1]
        ((1, {'a': 1}), (3, 'invalid JSON (Expecting property name enclosed in double quotes)'))
    """
    if not path.exists():
        raise UserError(f"{path}: data file not found")
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            yield from ((None, row) for row in pq.read_table(path).to_pylist())
        elif suffix == ".json":
            rows = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(rows, list):
                raise UserError(f"{path}: a .json data file must hold a list of rows")
            yield from ((None, row) for row in rows)
        else:
            with path.open(encoding="utf-8") as handle:
                for number, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    try:
                        yield number, json.loads(line)
                    except json.JSONDecodeError as exc:
                        yield number, f"invalid JSON ({exc.msg})"
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, UserError):
            raise
        raise UserError(f"{path}: cannot read data file: {exc}") from None


def spec_rows(spec: TaskSpec, path: Path) -> Iterator[tuple[int | None, Any]]:
    """``(line, row)`` of ``spec``'s data file ``path``: :func:`read_rows`, or the source set's
    own layout when the spec names one (``data.layout``, see
    :mod:`videorl_kit.spec.source_layouts`)."""
    if spec.data.layout is None:
        return read_rows(path)
    return read_layout_rows(
        spec.data.layout, path, spec.data.fields, frames_fps=spec.data.frames_fps
    )


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


_ANSWER_BLOCK = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)


def gold_text(value: Any) -> str:
    """The gold answer as text, unwrapped from its ``<answer>…</answer>`` block if it has one.

    Public video-RL sets store the gold as ``solution: "<answer>B</answer>"``. Text around
    a single block (a ``<think>`` rationale) is dropped; two blocks raise ``ValueError``.
    Structured answers (dicts, lists) become JSON text.

    Example:
        >>> gold_text("<answer> B </answer>"), gold_text("<think>3+1</think><answer>4</answer>")
        ('B', '4')
        >>> gold_text({"time": [1, 2]}), gold_text("plain")
        ('{"time": [1, 2]}', 'plain')
    """
    text = _as_text(value)
    blocks = _ANSWER_BLOCK.findall(text)
    if len(blocks) > 1:
        raise ValueError(f"gold answer holds {len(blocks)} <answer> blocks; which one is meant?")
    return blocks[0].strip() if blocks else text


def _path_list(value: Any, media: PathRoots, column: str) -> list[Path]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"field {column!r} must be a list of paths")
    return [media.resolve(v, base=media.folders[0], field=f"field {column!r}") for v in value]


def media_root_of(spec: TaskSpec, data_path: Path) -> Path:
    """The folder relative media paths of ``spec`` resolve against (default: the data's)."""
    if not spec.data.media_root:
        return data_path.parent
    return spec.resolve(spec.data.media_root, field="data.media_root")


def _same(a: Any, b: Any) -> bool:
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def _row_type(value: Any) -> ProblemType | None:
    try:
        return canonical_problem_type(str(value))
    except ValueError:
        return None


def row_is_kept(spec: TaskSpec, row: Any) -> bool:
    """Whether ``row`` passes ``spec.data.where`` (an unreadable row is kept, to be skipped).

    Example:
        >>> from videorl_kit.spec.models import TaskSpec
        >>> spec = TaskSpec.model_validate({"id": "t", "version": 1, "problem_type": "from_row",
        ...     "data": {"path": "d.jsonl", "where": {"data_type": "video",
        ...                                           "problem_type": ["mcq", "numerical"]}},
        ...     "prompt": {"template": "{{ question }}"}})
        >>> row_is_kept(spec, {"data_type": "video", "problem_type": "multiple choice"})
        True
        >>> row_is_kept(spec, {"data_type": "image", "problem_type": "numerical"})
        False
    """
    if not isinstance(row, dict):
        return True
    type_column = spec.data.fields.problem_type
    for column, wanted in spec.data.where.items():
        values = wanted if isinstance(wanted, list) else [wanted]
        value = row.get(column)
        if column == type_column:
            found = _row_type(value) if value is not None else None
            if found is None or found not in {_row_type(v) for v in values}:
                return False
        elif not any(_same(value, v) for v in values):
            return False
    return True


def iter_samples(spec: TaskSpec, *, paths_by_name: bool = False) -> Iterator[Sample]:
    """Yield every kept row of ``spec`` as a :class:`Sample` (unusable rows carry a skip rule).

    A spec with ``eval.annotations`` reads rows in the benchmark's own layout first
    (:func:`~videorl_kit.spec.annotations.apply_layout`); ``Sample.raw`` keeps the raw row.
    Raises :class:`UserError` if the data file is missing or unreadable as a whole.
    ``paths_by_name`` resolves media paths by their names only (no link followed, no file
    looked at: :class:`~videorl_kit.spec.paths.PathRoots`), for a reader that compares the
    rows with a built store and opens none of the media.
    """
    path = data_file(spec)
    media = PathRoots(
        (media_root_of(spec, path),),
        allow_absolute=spec.data.allow_absolute_paths,
        by_name_only=paths_by_name,
    )
    layout = spec.eval.annotations if spec.eval is not None else None
    kept = 0
    for index, (line, row) in enumerate(spec_rows(spec, path)):
        if spec.data.limit is not None and kept >= spec.data.limit:
            return
        read = (
            apply_layout(row, layout, spec.data.fields) if layout and isinstance(row, dict) else row
        )
        if spec.data.where and not row_is_kept(spec, read):
            continue
        kept += 1
        sample = _sample(spec, index, line, read, media)  # a str read is the skip reason
        yield replace(sample, raw=row) if read is not row and isinstance(row, dict) else sample


class _RowSkip(VideoRLKitError):
    def __init__(self, rule: str, reason: str, columns: tuple[str, ...] = ()) -> None:
        super().__init__(reason)
        self.rule = rule
        self.columns = columns


def _problem_type(spec: TaskSpec, row: dict[str, Any]) -> ProblemType:
    column = spec.data.fields.problem_type
    declared = row.get(column)
    if declared is None or declared == "":
        if spec.routes_per_row:
            raise _RowSkip(
                RULE_MISSING_PROBLEM_TYPE,
                f"no problem type in column {column!r} (the spec says problem_type: from_row)",
                (column,),
            )
        assert isinstance(spec.problem_type, ProblemType)
        return spec.problem_type
    found = _row_type(declared)
    if found is None:
        raise _RowSkip(RULE_UNKNOWN_PROBLEM_TYPE, unknown_problem_type_message(declared))
    if not spec.routes_per_row and found != spec.problem_type:
        raise _RowSkip(
            RULE_PROBLEM_TYPE_MISMATCH,
            f"problem type {declared!r} is not the spec's {spec.problem_type!s}; say "
            "problem_type: from_row to score each row by its own type, or keep only "
            "this type with data.where",
        )
    return found


def _media(
    row: dict[str, Any], fields: FieldMap, media: PathRoots
) -> tuple[list[Path], list[Path], str | None]:
    """(videos, images, data_type) of a row, checked against its declared ``data_type``."""
    videos = _path_list(row.get(fields.videos), media, fields.videos)
    images = _path_list(row.get(fields.images), media, fields.images)
    shared = _path_list(row.get(fields.media), media, fields.media) if fields.media else []
    declared = row.get(fields.data_type)
    if declared is None or declared == "":
        if shared:
            raise _RowSkip(
                RULE_DATA_TYPE_MISMATCH,
                f"column {fields.media!r} holds media but the row has no {fields.data_type!r} "
                "(video or image) to say which budget decodes it",
                (fields.data_type,),
            )
        return videos, images, None
    data_type = str(declared).strip().lower()
    if data_type not in DATA_TYPES:
        raise _RowSkip(
            RULE_DATA_TYPE_MISMATCH,
            f"unknown data_type {declared!r} (valid: {', '.join(DATA_TYPES)})",
        )
    if data_type == "video":
        videos = [*videos, *shared]
    elif data_type == "image":
        images = [*images, *shared]
    listed = {"video": videos, "image": images}
    contradiction, columns = None, ()
    if data_type == "image" and videos:
        contradiction = f"data_type is 'image' but column {fields.videos!r} lists videos"
    elif data_type == "text" and (videos or images or shared):
        contradiction = "data_type is 'text' but the row lists media"
    elif data_type in listed and not listed[data_type]:
        contradiction = f"data_type is {data_type!r} but the row has no {data_type}"
        own = fields.videos if data_type == "video" else fields.images
        columns = (*([fields.media] if fields.media else []), own)
    if contradiction:
        raise _RowSkip(RULE_DATA_TYPE_MISMATCH, contradiction, columns)
    return videos, images, data_type


def _sample(spec: TaskSpec, index: int, line: int | None, row: Any, media: PathRoots) -> Sample:
    fields = spec.data.fields

    def row_id(raw: dict[str, Any]) -> str | None:
        given = raw.get(fields.id)
        return str(given) if given is not None and given != "" else None

    def sample_id(raw: dict[str, Any]) -> str:
        given = row_id(raw)
        return given if given is not None else f"{spec.id}-{index}"

    def skipped(
        rule: str, reason: str, raw: dict[str, Any], ptype: Any = None,
        columns: tuple[str, ...] = (),
    ) -> Sample:  # fmt: skip
        given = row_id(raw)
        return Sample(
            sample_id=sample_id(raw), task_id=spec.id, row_index=index, question="",
            answer="", options=None, videos=[], images=[],
            problem_type=ptype if isinstance(ptype, ProblemType) else None,
            skip_reason=f"{row_label(index, given)}: {reason}", raw=raw, skip_rule=rule,
            line=line, row_id=given, skip_columns=columns,
        )  # fmt: skip

    if isinstance(row, str):  # a source layout's RowError knows the row's id
        given = getattr(row, "row_id", None)
        return skipped(RULE_MALFORMED_ROW, str(row), {fields.id: given} if given else {})
    if not isinstance(row, dict):
        return skipped(RULE_MALFORMED_ROW, "row is not a JSON object", {})
    unencodable = lone_surrogate_field(row)
    if unencodable is not None:  # no UTF-8 form: it could be neither stored nor printed
        reason = f"field {unencodable!r} is not valid Unicode text (a lone surrogate)"
        return skipped(RULE_MALFORMED_ROW, reason, {})
    missing = [name for name in (fields.question, fields.answer) if row.get(name) is None]
    if missing:
        return skipped(
            RULE_MALFORMED_ROW, f"missing field {missing[0]!r}", row, None, tuple(missing)
        )
    problem_type = None
    try:
        answer = gold_text(row[fields.answer])
        options = row.get(fields.options)
        if options is not None and (
            not isinstance(options, list) or not all(isinstance(o, str) for o in options)
        ):
            raise ValueError(f"field {fields.options!r} must be a list of strings or null")
        problem_type = _problem_type(spec, row)
        videos, images, data_type = _media(row, fields, media)
    except ValueError as exc:
        return skipped(RULE_MALFORMED_ROW, str(exc), row, problem_type)
    except _RowSkip as skip:
        return skipped(skip.rule, str(skip), row, problem_type, skip.columns)
    return Sample(
        sample_id=sample_id(row),
        task_id=spec.id,
        row_index=index,
        question=_as_text(row[fields.question]),
        answer=answer,
        options=options,
        videos=videos,
        images=images,
        problem_type=problem_type,
        raw=row,
        data_type=data_type,
        line=line,
        row_id=row_id(row),
    )
