"""Read a benchmark's rows in their own layout (the spec's ``eval.annotations``).

:func:`apply_layout` rewrites one raw row into the columns ``data.fields`` names: the media
path from a template over other columns, bare option texts lettered, the gold answer
rewritten from its benchmark form, the benchmark's type labels mapped to problem types (a
gold inside ``<answer>`` needs nothing here: the data reader unwraps it). It returns a new
dict (the raw row is kept for categories and hashes) or, for a row it cannot read, a string
saying why; the data reader turns that into a named skip.

Example:
    >>> from videorl_kit.spec.eval_section import AnnotationLayout
    >>> from videorl_kit.spec.models import FieldMap
    >>> layout = AnnotationLayout(video="data/{videoID}.mp4")
    >>> fields = FieldMap(question="question", answer="answer", videos="videos")
    >>> apply_layout({"videoID": "fFjv93ACGo8", "question": "Q?", "answer": "C"}, layout, fields)
    {'videoID': 'fFjv93ACGo8', 'question': 'Q?', 'answer': 'C', 'videos': ['data/fFjv93ACGo8.mp4']}
"""

from __future__ import annotations

import json
import re
from typing import Any

from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.spec.eval_section import AnnotationLayout, template_fields
from videorl_kit.spec.models import FieldMap

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SPAN_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(?:-|–|to)\s*([0-9]+(?:\.[0-9]+)?)\s*$")


class LayoutError(VideoRLKitError, ValueError):
    """A row that the declared layout cannot read (becomes the row's skip reason)."""


def time_span(value: Any, column: str) -> str:
    """``{"time": [s, e]}`` from ``"s-e"``, ``"s to e"`` or ``[s, e]`` seconds.

    Example:
        >>> time_span("13.4-28.1", "answer")
        '{"time": [13.4, 28.1]}'
        >>> time_span([0, 4.5], "timestamp")
        '{"time": [0.0, 4.5]}'
    """
    if isinstance(value, str):
        match = _SPAN_RE.match(value)
        if match is None:
            raise LayoutError(f"column {column!r}: {value!r} is not a 'start-end' time span")
        start, end = float(match.group(1)), float(match.group(2))
    elif isinstance(value, list | tuple) and len(value) == 2:
        try:
            start, end = float(value[0]), float(value[1])
        except (TypeError, ValueError):
            raise LayoutError(f"column {column!r}: {value!r} is not [start, end]") from None
    else:
        raise LayoutError(f"column {column!r}: {value!r} is not a time span")
    return json.dumps({"time": [start, end]})


def option_letter(index: Any, n_options: int | None, column: str) -> str:
    """The letter of a 0-based option index.

    Example:
        >>> option_letter(2, 4, "correct_choice")
        'C'
    """
    if isinstance(index, bool) or not isinstance(index, int):
        raise LayoutError(f"column {column!r} must be an integer option index, got {index!r}")
    limit = n_options if n_options is not None else len(_LETTERS)
    if not 0 <= index < limit:
        raise LayoutError(f"column {column!r}: option index {index} is out of range 0..{limit - 1}")
    return _LETTERS[index]


_LETTERED_LINE = re.compile(r"^([A-Z])\.\s+\S")


def options_in_question(question: Any, column: str) -> tuple[str, list[str]]:
    """Split a question ending with one ``"A. text"`` line per option (A, B, ... in order)
    into the question and its options.

    Example:
        >>> options_in_question("Which way?\\nA. left\\nB. right", "question")
        ('Which way?', ['A. left', 'B. right'])
    """
    if not isinstance(question, str):
        raise LayoutError(f"column {column!r} must be text with the options on its last lines")
    lines = question.rstrip().split("\n")
    start = len(lines)
    while start > 0 and _LETTERED_LINE.match(lines[start - 1].strip()):
        start -= 1
    options = [line.strip() for line in lines[start:]]
    letters = [option[0] for option in options]
    if len(options) < 2 or letters != list(_LETTERS[: len(options)]):
        raise LayoutError(
            f"column {column!r} does not end with option lines 'A. ...', 'B. ...' in order"
        )
    return "\n".join(lines[:start]).rstrip(), options


def apply_layout(
    row: dict[str, Any], layout: AnnotationLayout, fields: FieldMap
) -> dict[str, Any] | str:
    """The row rewritten into the spec's fields, or the reason it cannot be read.

    Example:
        >>> from videorl_kit.spec.eval_section import AnnotationLayout
        >>> layout = AnnotationLayout(options="unlettered", answer="option_index")
        >>> fields = FieldMap(options="candidates", answer="correct_choice")
        >>> out = apply_layout({"candidates": ["red", "blue"], "correct_choice": 1}, layout, fields)
        >>> out["candidates"], out["correct_choice"]
        (['A. red', 'B. blue'], 'B')
        >>> apply_layout({"candidates": ["red"], "correct_choice": 3}, layout, fields)
        "column 'correct_choice': option index 3 is out of range 0..0"
    """
    out = dict(row)
    try:
        options = row.get(fields.options)
        if layout.options == "unlettered" and isinstance(options, list):
            out[fields.options] = [f"{_LETTERS[i]}. {text}" for i, text in enumerate(options)]
        elif layout.options == "in_question":
            question, options = options_in_question(row.get(fields.question), fields.question)
            out[fields.question], out[fields.options] = question, options
        if layout.video is not None:
            missing = [c for c in template_fields(layout.video) if row.get(c) in (None, "")]
            if missing:
                raise LayoutError(f"video template {layout.video!r} needs column {missing[0]!r}")
            out[fields.videos] = [layout.video.format_map({k: str(v) for k, v in row.items()})]
        label = row.get(fields.problem_type)
        if isinstance(label, str) and label in layout.problem_types:
            out[fields.problem_type] = layout.problem_types[label].value
        gold = row.get(fields.answer)
        if gold is not None:
            form = layout.answer
            if form == "time_span":
                out[fields.answer] = time_span(gold, fields.answer)
            elif form == "option_index":
                n = len(options) if isinstance(options, list) else None
                out[fields.answer] = option_letter(gold, n, fields.answer)
    except LayoutError as exc:
        return str(exc)
    return out
