"""Grounding: ``temporal_iou``, ``box_iou``, ``spatiotemporal_iou`` and ``tracking_iou``.

Answers are JSON (``{"time": [s, e]}``, ``{"boxes": [x1, y1, x2, y2]}``,
``{"time": [s, e], "boxes": {"<sec>": [x1, y1, x2, y2]}}``, ``{"boxes": {"<sec>": [...]}}``),
read from the answer text directly, from a markdown code fence, or from the last top-level
``{...}`` in it; a bare ``[s, e]``/``[x1, y1, x2, y2]`` list is accepted too. Two different JSON
answers in one text are a hedge (0). In prose, a bare list (``at [0, 0, 10, 10]``) or a tuple
(``(0, 0, 10, 10)``) is read too, and a box may be a string of four numbers. Where JSON fails,
a Python literal is read (``{'boxes': {1: (0, 0, 10, 10)}}``: single quotes, integer keys,
tuples, ``None``, trailing commas) with :func:`ast.literal_eval`, which never runs code; ground
truths are read the same way.

Temporal answers may also be written out: ``from 10 to 20 seconds``, ``10-20s``,
``between 1:05 and 1:10``, ``00:01:05 - 00:01:10``; times may be seconds, ``mm:ss`` or
``hh:mm:ss`` (also as JSON strings). Words containing "to" (``tomato``) never split a range.

Decisions (documented, tested):

* A **reversed** interval (start > end) or box (x2 < x1 or y2 < y1), a negative time, a
  non-finite number or a wrong arity is **invalid**: the prediction scores 0 with a reason; in
  the ground truth it makes the sample unverifiable.
* **Zero-length** intervals and zero-area boxes: in a prediction they are valid and score 0
  (no overlap has positive measure); in the ground truth IoU is undefined, so the sample is
  unverifiable. (The IoU functions themselves give 1 for identical inputs, degenerate or not.)
* Seconds are numbers: keys ``"9"``, ``"9.0"`` and ``9`` name the same second (``mm:ss``
  keys are read too). A prediction that
  gives one second two different boxes scores 0 on that second.
* Answers longer than :data:`MAX_GROUNDING_CHARS` characters are not graded (0); written
  ranges are read from answers up to :data:`MAX_RANGE_TEXT_CHARS` characters.
* Spatio-temporal = 0.5·tIoU + 0.5·(mean box IoU over the **ground-truth** seconds), tracking =
  mean box IoU over the ground-truth seconds; a missing second counts 0 and extra predicted
  seconds are ignored, so omitting seconds never raises the reward.

Example:
    >>> TemporalIouVerifier(NoParams()).score('{"time": [10, 20]}', '{"time": [15, 25]}').accuracy
    0.3333333333333333
    >>> TemporalIouVerifier(NoParams()).score("from 0:10 to 0:20", '{"time": [10, 20]}').accuracy
    1.0
"""

from __future__ import annotations

import ast
import bisect
import itertools
import json
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple

import orjson

from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.core.verifiers import NoParams, register_verifier
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.extract import matching_braces
from videorl_kit.rewards.grounding_forms import (
    FormHedge,
    bare_pairs,
    box_by_name,
    box_from_keys,
    corners_as_box,
    start_and_end,
)
from videorl_kit.rewards.text import clean_gold, refine_answer

#: Longest answer text parsed as grounding JSON (longer answers score 0).
MAX_GROUNDING_CHARS = 100_000
#: Longest answer text searched for a written range ("from 10 to 20 seconds").
MAX_RANGE_TEXT_CHARS = 4096
#: At most this many ``{`` positions are tried when looking for JSON objects in text.
MAX_JSON_STARTS = 64
#: Characters of one answer read as Python literals, all attempts together.
MAX_LITERAL_CHARS = 20_000
#: What only a Python literal has (a text JSON rejected without any is not tried as one):
#: quotes, tuples, None/True/False (looked for first), unquoted number keys, trailing commas.
_PYTHON_ONLY_WORDS = ("'", "(", "None", "True", "False")
_PYTHON_ONLY_RE = re.compile(r"[{,]\s{0,8}-?\d[\d.]{0,30}\s{0,8}:|,\s{0,8}[}\]]")

_FENCE_RE = re.compile(r"```(?:json|JSON)?[ \t]{0,8}\n?(.{0,200000}?)```", re.DOTALL)
_TIME = (
    r"\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,6})?"  # "00:00:12,300": a subtitle's decimal comma
    r"|\d{1,3}:\d{2}(?:\.\d{1,6})?|\d{1,7}(?:\.\d{1,6})?"
)
_UNIT = (
    r"(?:\s{0,2}(?:(?:s|sec|secs|second|seconds|segundos?|secondes?|sekunden?|секунд[аы]?)\b"
    r"|秒|초))?"
)
_RANGE_RE = re.compile(
    rf"(?<![A-Za-z0-9_.:])(?P<a>{_TIME}){_UNIT}\s{{0,3}}"
    rf"(?:-{{1,2}}>|=>|-|–|—|~|\bto\b|\buntil\b|\btill\b|\band\b|→|到|至"
    # "de 10 a 20 segundos", "de 10 à 20", "von 10 bis 20", "с 10 до 20", "10秒から20秒",
    # "10초부터 20초까지"
    rf"|\ba\b|\bà\b|\bbis\b|\bдо\b|から|부터)\s{{0,3}}第?\s{{0,2}}"
    rf"(?P<b>{_TIME}){_UNIT}(?![A-Za-z0-9_:]|\.\d)",
    re.IGNORECASE,
)
#: A pair in brackets with units or clock times, which JSON does not read: "[10s, 20s]",
#: "[00:10, 00:20]".
_BRACKET_PAIR_RE = re.compile(
    rf"[\[(]\s{{0,3}}(?P<a>{_TIME}){_UNIT}\s{{0,3}},\s{{0,3}}(?P<b>{_TIME}){_UNIT}\s{{0,3}}[\])]",
    re.IGNORECASE,
)
_TUPLE_RE = re.compile(
    r"\(\s{0,4}(-?\d{1,9}(?:\.\d{1,9})?)\s{0,4},\s{0,4}(-?\d{1,9}(?:\.\d{1,9})?)\s{0,4}"
    r"(?:,\s{0,4}(-?\d{1,9}(?:\.\d{1,9})?)\s{0,4},\s{0,4}(-?\d{1,9}(?:\.\d{1,9})?)\s{0,4})?\)"
)
#: A bracketed pair of times written with a unit or as clock times (round 4): ``[12.3s,
#: 18.0s]``, ``(12.3 s, 18.0 s)``, ``[00:12, 00:18]`` (JSON reads neither).
_BRACKET_TIMES_RE = re.compile(
    rf"[\[(]\s{{0,3}}(?P<a>{_TIME}){_UNIT}\s{{0,3}},\s{{0,3}}(?P<b>{_TIME}){_UNIT}\s{{0,3}}[\])]",
    re.IGNORECASE,
)
_JSON_NUMBERS = frozenset({int, float})
_BOX_STRING_NUMBER_RE = re.compile(r"-?\d{1,9}(?:\.\d{1,9})?")
_TIME_STR_RE = re.compile(rf"\s{{0,4}}(?:{_TIME})\s{{0,4}}(?:s|sec|secs|seconds)?\s{{0,4}}", re.I)

_SECONDS_SUFFIX_RE = re.compile(r"\s{0,4}(?:s|sec|secs|seconds)$", re.IGNORECASE)

Box = tuple[float, float, float, float]
Interval = tuple[float, float]


class GroundingError(VideoRLKitError, ValueError):
    """A grounding answer or ground truth that cannot be used (message says why)."""


# ---------------------------------------------------------------- parsing helpers


def parse_time(value: Any) -> float:
    """Seconds from a number or a ``ss``/``mm:ss``/``hh:mm:ss`` string (``12s`` accepted).

    Example:
        >>> parse_time("1:02:03"), parse_time("01:05"), parse_time(7), parse_time("3.5s")
        (3723.0, 65.0, 7.0, 3.5)
    """
    if type(value) is float or type(value) is int:  # JSON numbers (bool is neither)
        seconds = float(value)
    elif isinstance(value, bool):
        raise GroundingError(f"not a time: {value!r}")
    elif isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and _TIME_STR_RE.fullmatch(value):
        text = _SECONDS_SUFFIX_RE.sub("", value.strip())
        if "," in text:  # "00:00:12,300" (subtitles): the comma is the decimal mark
            text = text.replace(",", ".")
        parts = text.split(":")
        seconds = 0.0
        for part in parts:
            seconds = seconds * 60 + float(part)
        if len(parts) > 1 and any(float(p) >= 60 for p in parts[1:]):
            raise GroundingError(f"not a time: {value!r} (minutes/seconds must be < 60)")
    else:
        raise GroundingError(f"not a time: {value!r}")
    if not math.isfinite(seconds) or seconds < 0:
        raise GroundingError(f"invalid time {value!r}")
    return seconds


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise GroundingError(f"not a number: {value!r}")
    try:
        number = float(value)
    except (ValueError, OverflowError):  # OverflowError: an int beyond the float range
        raise GroundingError(f"not a number: {_short(value)}") from None
    if not math.isfinite(number):
        raise GroundingError(f"non-finite number {value!r}")
    return number


def to_interval(value: Any) -> Interval:
    """A valid ``(start, end)`` from a 2-element list; reversed intervals are rejected.

    Example:
        >>> to_interval(["0:10", 20])
        (10.0, 20.0)
        >>> to_interval([20, 10])
        Traceback (most recent call last):
        ...
        videorl_kit.rewards.grounding.GroundingError: reversed interval [20.0, 10.0]
    """
    if type(value) is list and len(value) == 2:  # fast path: two JSON numbers, a valid interval
        start, end = value
        if (type(start) is float or type(start) is int) and (
            type(end) is float or type(end) is int
        ):
            start, end = float(start), float(end)
            if 0 <= start <= end and end - end == 0:  # end finite (so start is too)
                return start, end
    if not (type(value) is list or isinstance(value, list | tuple)) or len(value) != 2:
        raise GroundingError(f"a time interval must be [start, end], got {_short(value)}")
    start, end = parse_time(value[0]), parse_time(value[1])
    if start > end:
        raise GroundingError(f"reversed interval [{start}, {end}]")
    return start, end


def to_box(value: Any) -> Box:
    """A valid ``(x1, y1, x2, y2)`` box; ``[[x1, y1, x2, y2]]`` is unwrapped.

    Example:
        >>> to_box([[0, 0, 10, 10]])
        (0.0, 0.0, 10.0, 10.0)
        >>> to_box([0, 0, 10, 10])  # JSON numbers are kept as they are
        (0, 0, 10, 10)
    """
    if type(value) is list and len(value) == 4:  # fast path: four JSON numbers
        x1, y1, x2, y2 = value
        if (
            type(x1) in _JSON_NUMBERS
            and type(y1) in _JSON_NUMBERS
            and type(x2) in _JSON_NUMBERS
            and type(y2) in _JSON_NUMBERS
        ):
            try:
                total = x1 + y1 + x2 + y2
            except OverflowError:  # a huge int with a float: the general path decides
                total = math.inf
            # All finite; else inf or nan, or finite numbers whose sum overflows (1e308 twice):
            # the general path below tells these apart.
            if total - total == 0:
                if x2 < x1 or y2 < y1:
                    raise GroundingError(f"reversed box [{x1}, {y1}, {x2}, {y2}]")
                return x1, y1, x2, y2
    if isinstance(value, list | tuple) and len(value) == 1 and isinstance(value[0], list | tuple):
        value = value[0]
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, list | tuple) and len(v) == 2 for v in value)
    ):
        value = [*value[0], *value[1]]  # two corners: [[x1, y1], [x2, y2]]
    if isinstance(value, str) and len(value) <= 200:  # "0, 0, 10, 10"
        value = _BOX_STRING_NUMBER_RE.findall(value)
    if not isinstance(value, list | tuple) or len(value) != 4:
        raise GroundingError(f"a box must be [x1, y1, x2, y2], got {_short(value)}")
    x1, y1, x2, y2 = (_number(v) for v in value)
    if x2 < x1 or y2 < y1:
        raise GroundingError(f"reversed box [{x1}, {y1}, {x2}, {y2}]")
    return x1, y1, x2, y2


def second_key(key: Any) -> float:
    """The second a ``boxes`` key names: ``"9"``, ``"9.0"`` and ``9`` are all 9.0.

    A string key is a number as ``float()`` reads it, else a time (``"0:03"``, ``"3s"``).

    Example:
        >>> second_key("9.0") == second_key(9) == 9.0
        True
    """
    if type(key) is str:
        try:
            second = float(key)  # a number as float() reads it: "9", "9.0", ".5"
        except ValueError:
            return parse_time(key.strip())
        if math.isfinite(second) and second >= 0:
            return second
        raise GroundingError(f"invalid second {key!r}")
    return parse_time(key)


class _BoxTable(NamedTuple):
    """Plainly valid ``{"<sec>": [x1, y1, x2, y2]}`` entries (see :func:`_box_table`)."""

    boxes: dict[float, list[Any]]  # second -> the JSON list itself (never modified)
    zero_area: bool  # some box has x1 == x2 or y1 == y2


#: ``float(key)`` of ``boxes`` keys seen before ("1", "2.5", ...), for valid seconds only:
#: the same few keys come back in every answer, and float() parsing is slow. Bounded.
_SECOND_OF_KEY: dict[str, float] = {}
_SECOND_OF_KEY_MAX = 65_536


def _box_table(value: Any) -> _BoxTable | None:
    """The boxes of a ``boxes`` dict whose every entry is plainly valid, else None.

    Plainly valid: string keys that ``float()`` reads as distinct finite seconds >= 0, and
    values that are lists of four JSON numbers (int/float) with x1 <= x2, y1 <= y2 and a finite
    sum: exactly the entries :func:`second_key` and :func:`to_box` accept on their fast paths,
    with the same values, so :func:`parse_boxes_by_second` would return these seconds with
    these boxes (as tuples; filtered to ``wanted``). Anything else (a bad or duplicate entry,
    ``mm:ss`` keys, nested or string boxes) returns None and takes that general path.
    One tight loop, without the per-entry calls of the general path.
    """
    if type(value) is not dict or not value:
        return None
    out: dict[float, list[Any]] = {}
    zero_area = False
    known = _SECOND_OF_KEY.get
    for key, box in value.items():  # JSON object keys are always strings
        second = known(key)
        if second is None:
            if type(key) is not str:
                return None
            try:
                second = float(key)
            except ValueError:
                return None
            if not (math.isfinite(second) and second >= 0):
                return None
            if len(_SECOND_OF_KEY) < _SECOND_OF_KEY_MAX:
                _SECOND_OF_KEY[key] = second
        if type(box) is not list:
            return None
        try:
            x1, y1, x2, y2 = box
        except ValueError:  # not four items
            return None
        if not (type(x1) is int and type(y1) is int and type(x2) is int and type(y2) is int):
            if not (
                type(x1) in _JSON_NUMBERS
                and type(y1) in _JSON_NUMBERS
                and type(x2) in _JSON_NUMBERS
                and type(y2) in _JSON_NUMBERS
            ):
                return None
            try:
                total = x1 + y1 + x2 + y2
            except OverflowError:  # a huge int with a float: the general path decides
                return None
            if total - total != 0:  # inf or nan
                return None
        if x2 < x1 or y2 < y1:
            return None
        if x1 == x2 or y1 == y2:
            zero_area = True
        out[second] = box
    if len(out) != len(value):  # two keys name the same second
        return None
    return _BoxTable(out, zero_area)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"


#: One shared decoder (stateless between calls, like the one json.loads uses).
_DECODER = json.JSONDecoder()
_scan_json = _DECODER.scan_once


def _loads_stripped(text: str) -> Any:
    """``json.loads(text)`` for a ``str.strip()``-ed text, faster.

    orjson reads strict JSON about twice as fast, to the same values except that an integer
    beyond 64 bits becomes a float (no coordinate or second is that large); what it refuses
    (NaN, Infinity, out-of-range floats, lone surrogates, deep nesting, extra data) goes to the
    json scanner, which decides as json.loads would (no value or extra data: ValueError).
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:
        value, end = _scan_json(text, 0)
    except StopIteration:
        raise ValueError("Expecting value") from None
    if end != len(text):
        raise ValueError("Extra data")
    return value


#: A JSON object key; a text where one repeats may give one key two values in one object.
_KEY_RE = re.compile(r'"((?:[^"\\\n]|\\.){0,200})"\s{0,8}:')


def _first_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in pairs:
        out.setdefault(key, item)
    return out


#: Reads JSON keeping the first value of a key given twice in one object (json keeps the last).
_FIRST_WINS_DECODER = json.JSONDecoder(object_pairs_hook=_first_wins)


def _with_first_values(text: str, start: int, value: Any) -> list[Any]:
    """``[value]``, and the same JSON read with the first value of each repeated key when that
    differs: ``{"time": [10, 20], "time": [30, 40]}`` states two intervals (a hedge), where
    JSON readers silently keep the last one."""
    if type(value) not in (dict, list) or '"' not in text:
        return [value]
    keys = _KEY_RE.findall(text, start)
    if len(keys) == len(set(keys)):
        return [value]
    try:
        first, _ = _FIRST_WINS_DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return [value]
    return [value] if first == value else [value, first]


def python_literal(text: str) -> Any:
    """The value of a Python literal written where JSON was expected, as JSON-like data
    (tuples become lists; keys stay as written): :func:`ast.literal_eval` parses literals only
    and never runs code. ``ValueError`` for anything else (calls, names, sets, huge input).

    Example:
        >>> python_literal("{'boxes': {1: (0, 0, 10, 10)}, 'label': None}")
        {'boxes': {1: [0, 0, 10, 10]}, 'label': None}
        >>> python_literal("__import__('os').getcwd()")
        Traceback (most recent call last):
        ...
        ValueError: not a Python literal
    """
    if len(text) > MAX_LITERAL_CHARS:
        raise ValueError("too long for a Python literal")
    if not any(word in text for word in _PYTHON_ONLY_WORDS) and not _PYTHON_ONLY_RE.search(text):
        raise ValueError("not a Python literal")  # JSON already refused it
    try:
        tree = ast.parse(text.strip(), mode="eval")
        for node in ast.walk(tree):  # {'time': [1, 2], 'time': [3, 4]}: two values, a hedge
            if isinstance(node, ast.Dict) and len(node.keys) > 1:
                keys = [ast.dump(k) for k in node.keys if k is not None]
                if len(keys) != len(set(keys)):
                    raise ValueError("a key given twice")
        return _json_like(ast.literal_eval(tree))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError("not a Python literal") from None


def _json_like(value: Any) -> Any:
    """``value`` with tuples as lists, recursively; sets, bytes and complex numbers refused."""
    if isinstance(value, list | tuple):
        return [_json_like(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_like(v) for k, v in value.items()}
    if value is None or isinstance(value, str | int | float):
        return value
    raise ValueError(f"not JSON-like: {type(value).__name__}")


def _json_candidates(text: str, *, every_form: bool = False) -> list[Any]:
    """Top-level JSON values found in ``text`` (whole text, code fences, ``{...}`` objects);
    where JSON fails, Python literals (:func:`python_literal`). Bare lists are looked for only
    without objects, and tuples only without either, unless ``every_form`` (a box or interval
    answer: ``[0, 0, 5, 5] or (1, 1, 9, 9)`` states two); then two 2-tuples alone are one
    box's corners (``(10,20),(110,220)``)."""
    stripped = text.strip()
    if stripped[:1] in "{[":
        try:
            return _with_first_values(stripped, 0, _loads_stripped(stripped))
        except ValueError as exc:  # "Extra data": a JSON value and more text, no literal either
            json_prefix = str(exc) == "Extra data"
        except RecursionError:
            json_prefix = True
        if not json_prefix:
            try:
                return [python_literal(stripped)]
            except ValueError:
                pass
    found: list[Any] = []
    if "```" in stripped:
        for m in _FENCE_RE.finditer(stripped):
            try:
                found.append(json.loads(m.group(1)))
            except (ValueError, RecursionError):
                continue
        if found:
            return found
    decoder = _DECODER
    pos, tries = 0, 0
    spans: list[tuple[int, int]] = []  # where the values found so far are
    braces: dict[int, int] | None = None
    literal_budget = MAX_LITERAL_CHARS
    while tries < MAX_JSON_STARTS:
        start = stripped.find("{", pos)
        if start < 0:
            break
        tries += 1
        try:
            value, end = decoder.raw_decode(stripped, start)
        except (ValueError, RecursionError):
            pos = start + 1
            if braces is None:
                braces = matching_braces(stripped)
            close = braces.get(start)
            if close is None or close - start >= literal_budget:
                continue
            literal_budget -= close - start
            try:
                value = python_literal(stripped[start : close + 1])
            except ValueError:
                continue
            end = close + 1
        if isinstance(value, dict):
            found.extend(_with_first_values(stripped[:end], start, value))
            spans.append((start, end))
        pos = end
    if not found or every_form:  # bare number lists in prose: "The object is at [0, 0, 10, 10]."
        pos, tries = 0, 0
        while tries < MAX_JSON_STARTS:
            start = stripped.find("[", pos)
            if start < 0:
                break
            tries += 1
            if _inside(start, spans):
                pos = start + 1
                continue
            try:
                value, end = decoder.raw_decode(stripped, start)
            except (ValueError, RecursionError):
                pos = start + 1
                continue
            if isinstance(value, list) and value:
                found.append(value)
                spans.append((start, end))
            pos = end
    if (not found or every_form) and "(" in stripped and len(stripped) <= MAX_RANGE_TEXT_CHARS:
        tuples = [  # tuple notation: (x1, y1, x2, y2)
            [float(g) for g in m.groups() if g is not None]
            for m in _TUPLE_RE.finditer(stripped)
            if not _inside(m.start(), spans)
        ]
        if every_form and tuples and len(tuples) % 2 == 0 and all(len(t) == 2 for t in tuples):
            # corner pairs, Qwen's "(x1,y1),(x2,y2)", once or several times (then each
            # pair is one box: the same box twice agrees, two different boxes are a hedge)
            paired = [corners_as_box(tuples[i : i + 2]) for i in range(0, len(tuples), 2)]
            tuples = [box for box in paired if box is not None]
        found.extend(tuples)
    return found


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    """Whether ``position`` lies inside one of ``spans``."""
    return any(start <= position < end for start, end in spans)


def _single_json(
    text: str, *, reading: Callable[[Any], Any] | None = None
) -> tuple[Any, str | None]:
    """The one JSON answer in ``text``: ``(value, None)``, or ``(None, reason)``.

    With ``reading`` (what a value means: its box or interval), values of every form are
    looked for (:func:`_json_candidates` with ``every_form``) and compared by what they mean;
    values that mean nothing (a point, a second list of words) are left out, and two that mean
    different things are a hedge.
    """
    if len(text) > MAX_GROUNDING_CHARS:
        return None, f"answer too long ({len(text)} chars)"
    found = _json_candidates(text, every_form=reading is not None)
    if len(found) == 1:
        return found[0], None
    if not found:
        return None, "no JSON answer found"
    if reading is not None:
        meant: dict[Any, Any] = {}
        for value in found:
            try:
                meant.setdefault(reading(value), value)
            except (GroundingError, TypeError, ValueError):
                continue
        if len(meant) == 1:
            return next(iter(meant.values())), None
        if len(meant) > 1:
            return None, f"{len(meant)} different answers (hedge)"
    first = found[0]
    if any(other != first for other in found[1:]):
        return None, f"{len(found)} different JSON answers (hedge)"
    return first, None


def _get(obj: Any, *keys: str) -> Any:
    if isinstance(obj, dict):
        for key in keys:
            if key in obj:
                return obj[key]
    return None


def parse_interval_answer(text: str) -> Interval:
    """A predicted interval from JSON, a bare list or a written range.

    A final statement inside the text (``... so the answer is 10-20s``) is tried first.

    Example:
        >>> parse_interval_answer("The event happens from 10 to 20 seconds.")
        (10.0, 20.0)
        >>> parse_interval_answer("[1.5, 3]")
        (1.5, 3.0)
    """
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        return _parse_interval_text(stripped)  # plain JSON: no statement to look for
    refined = refine_answer(text) if len(text) <= MAX_GROUNDING_CHARS else text
    if refined != stripped:
        try:
            return _parse_interval_text(refined)
        except GroundingError:
            pass
    return _parse_interval_text(text)


def _start_end(value: dict[str, Any]) -> list[Any] | None:
    """``[start, end]`` of ``{"start": s, "end": e}`` (or ``start_time``/``end_time``)."""
    for start_key, end_key in (("start", "end"), ("start_time", "end_time")):
        if start_key in value and end_key in value:
            return [value[start_key], value[end_key]]
    return None


def _interval_value(value: Any) -> Any:
    """The ``[start, end]`` a JSON answer gives (under ``time`` or as ``start``/``end``)."""
    if isinstance(value, dict):
        found = _get(value, "time", "timestamps", "segment", "interval")
        if found is None:
            found = _start_end(value)
        if found is None:
            raise GroundingError("JSON answer has no 'time' key (nor 'start' and 'end')")
        return found
    return value


def _interval_reading(value: Any) -> Interval:
    """The interval a candidate value means (for comparing candidates)."""
    return to_interval(_interval_value(value))


#: Most parts of one JSON answer looked at for a second interval or box.
MAX_ANSWER_PARTS = 256


def _parts(value: Any) -> list[Any]:
    """The values nested in a JSON answer (inside dicts and lists), at most
    :data:`MAX_ANSWER_PARTS` of them."""
    parts: list[Any] = []
    stack = [value]
    while stack and len(parts) < MAX_ANSWER_PARTS:
        item = stack.pop()
        parts.append(item)
        if type(item) is dict:
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
        elif type(item) is str and "[" in item:  # "note": "or [300, 300, 400, 400]"
            stack.extend(_lists_in_string(item))
    return parts


_LIST_IN_STRING_RE = re.compile(r"\[[-+0-9.,\s]{1,120}\]")


def _lists_in_string(text: str) -> list[list[Any]]:
    """The lists of numbers written inside a JSON string value (a second answer hidden in a
    label or note: ``"label": "dog, or maybe [300, 300, 400, 400]"``), at most 8."""
    found: list[list[Any]] = []
    for m in _LIST_IN_STRING_RE.finditer(text[:4096]):
        try:
            value = json.loads(m.group())
        except ValueError:
            continue
        if type(value) is list:
            found.append(value)
            if len(found) >= 8:
                break
    return found


def _plain(value: Any) -> bool:
    """A dict with one key whose value holds no dict or list: it has no second answer."""
    if type(value) is not dict or len(value) != 1:
        return False
    (only,) = value.values()
    return type(only) is not list or not any(type(v) in (list, dict) for v in only)


def _interval_part(part: Any) -> Interval | None:
    """The valid interval one part of an answer states (``[s, e]``, ``{"start", "end"}``)."""
    if type(part) is dict:
        part = _start_end(part)
    if type(part) is not list or len(part) != 2:
        return None
    if not all(type(v) in (int, float, str) for v in part):
        return None
    try:
        return to_interval(part)
    except GroundingError:
        return None


def _box_part(part: Any) -> Box | None:
    """The valid box one part of an answer states (four numbers, coordinates by name)."""
    if type(part) is dict:
        part = box_from_keys(part)
    if type(part) is not list or len(part) != 4:
        return None
    if not all(type(v) in (int, float) for v in part):
        return None
    try:
        return tuple(float(v) for v in to_box(part))  # type: ignore[return-value]
    except GroundingError:
        return None


def _second_answer(value: Any, main: Any, part_reading: Callable[[Any], Any]) -> str | None:
    """Why ``value`` is a hedge when another of its parts states a different interval or box
    than ``main`` (``{"time": [10, 20], "time2": [30, 40]}``), else None."""
    if _plain(value) or type(value) not in (dict, list):
        return None
    meant = {main}
    for part in _parts(value):
        reading = part_reading(part)
        if reading is not None:
            meant.add(reading)
    if len(meant) > 1:
        return f"{len(meant)} different answers under different keys (hedge)"
    return None


def _written_ranges(text: str) -> set[tuple[str, str]]:
    """The intervals ``text`` writes in words or with units (not bare pairs of numbers)."""
    ranges = {(m.group("a"), m.group("b")) for m in _RANGE_RE.finditer(text)}
    for m in _BRACKET_TIMES_RE.finditer(text):
        if not _plain_pair(m.group(0)):
            ranges.add((m.group("a"), m.group("b")))
    return ranges


def _plain_pair(text: str) -> bool:
    """Whether a bracketed pair is two plain numbers (JSON's to read)."""
    return ":" not in text and not re.search(r"\d\s{0,2}[A-Za-z秒]", text)


def _parse_interval_text(text: str) -> Interval:
    value, reason = _single_json(text, reading=_interval_reading)
    if value is not None:
        interval = to_interval(_interval_value(value))
        second = _second_answer(value, interval, _interval_part)
        if second:
            raise GroundingError(second)
        if len(text) <= MAX_RANGE_TEXT_CHARS:  # "[10, 20] (from 10 to 30 s)": a restatement
            for written in _written_ranges(text):  # that disagrees is a second answer
                try:
                    other = to_interval(list(written))
                except GroundingError:
                    continue
                if other != interval:
                    raise GroundingError("an interval restated in words disagrees (hedge)")
        return interval
    if reason and "hedge" in reason:
        raise GroundingError(reason)
    if len(text) > MAX_RANGE_TEXT_CHARS:
        raise GroundingError(reason or "no JSON answer, and too long for a written range")
    try:  # "Start time: 1.0 seconds / End time: 7.5 seconds"
        written = start_and_end(text)
    except FormHedge as exc:
        raise GroundingError(str(exc)) from None
    ranges = _written_ranges(text)  # "10-20 s", "[12.3s, 18.0s]"
    ranges.update((m.group("a"), m.group("b")) for m in _BRACKET_PAIR_RE.finditer(text))
    ranges.update(bare_pairs(text))  # "12.3, 18.0"
    if written is not None:
        ranges.add(written)
    if not ranges:
        raise GroundingError("no time interval found")
    intervals = {to_interval(list(r)) for r in ranges}
    if len(intervals) > 1:
        raise GroundingError(f"{len(intervals)} different intervals (hedge)")
    return intervals.pop()


def parse_box_answer(text: str) -> Box:
    """A predicted box from ``{"boxes": [...]}``, ``{"bbox_2d": [...]}`` or a bare list.

    Example:
        >>> parse_box_answer('[{"bbox_2d": [1, 2, 3, 4], "label": "dog"}]')
        (1, 2, 3, 4)
    """
    value, reason = _single_json(text, reading=_box_reading)
    if value is None:
        if reason and "hedge" in reason:
            raise GroundingError(reason)
        try:
            named = box_by_name(text)  # "x1=10, y1=20, x2=110, y2=220"
        except FormHedge as exc:
            raise GroundingError(str(exc)) from None
        if named is None:
            bare = _BARE_BOX_RE.fullmatch(text)  # the whole answer: "100, 100, 200, 200"
            if bare is None:
                raise GroundingError(reason or "no box found")
            named = [float(v) for v in bare.groups()]
        return to_box(named)
    box = to_box(_box_value(value))
    second = _second_answer(value, tuple(float(v) for v in box), _box_part)
    if second:
        raise GroundingError(second)
    if "=" in text or ":" in text:  # "[10, 20, 110, 220] (x1=10, ..., y2=300)": a restatement
        try:  # by name that disagrees is a second answer
            named = box_by_name(text)
        except FormHedge as exc:
            raise GroundingError(str(exc)) from None
        if named is not None and tuple(float(v) for v in named) != tuple(float(v) for v in box):
            raise GroundingError("a box restated by coordinate names disagrees (hedge)")
    return box


_NUM = r"(-?\d{1,9}(?:\.\d{1,9})?)"
#: A whole answer of four numbers with no JSON brackets or commas between them: "100, 100,
#: 200, 200", "[100 100 200 200]" (never four numbers inside prose).
_BARE_BOX_RE = re.compile(
    rf"\s{{0,4}}[\[(]?\s{{0,4}}{_NUM}(?:\s{{0,4}},\s{{0,4}}|\s{{1,4}}){_NUM}(?:\s{{0,4}},\s{{0,4}}|\s{{1,4}})"
    rf"{_NUM}(?:\s{{0,4}},\s{{0,4}}|\s{{1,4}}){_NUM}\s{{0,4}}[\])]?\s{{0,4}}[.]?\s{{0,4}}"
)
_BOX_KEYS = ("boxes", "box", "bbox", "bbox_2d", "bounding_box", "boundingbox", "coordinates")


def _box_reading(value: Any) -> Box:
    """The box a candidate value means (for comparing candidates)."""
    return tuple(float(v) for v in to_box(_box_value(value)))  # type: ignore[return-value]


def _box_value(value: Any) -> Any:
    """The box a JSON answer or ground truth gives: the value under a box key, a list of such
    objects that all give one box (``[{"bbox_2d": [...], "label": "dog"}]``), coordinates
    by name or corner and size (:func:`box_from_keys`), or the value itself."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        boxes = [_box_value(v) for v in value]
        if any(b != boxes[0] for b in boxes[1:]):
            raise GroundingError(f"{len(boxes)} different boxes (hedge)")
        return boxes[0]
    if isinstance(value, dict):
        found = _get(value, *_BOX_KEYS)
        if found is None:
            found = box_from_keys(value)
        if found is None:
            raise GroundingError("JSON answer has no 'boxes' key")
        if isinstance(found, dict):  # {"box": {"x1": .., "y1": .., "x2": .., "y2": ..}}
            found = box_from_keys(found) or found
        return found
    return value


def parse_boxes_by_second(
    value: Any, *, strict: bool, wanted: frozenset[float] | None = None
) -> dict[float, Box | None]:
    """``{second: box}`` from a ``{"<sec>": box}`` dict; ``None`` marks a conflicting second.

    With ``strict`` (ground truth) any bad key or box raises; otherwise bad entries are
    dropped (they score 0 as missing seconds). With ``wanted``, other seconds are skipped.

    Example:
        >>> parse_boxes_by_second({"9": [0, 0, 1, 1], "9.0": [0, 0, 2, 2]}, strict=False)
        {9.0: None}
    """
    if not isinstance(value, dict):
        raise GroundingError(f"'boxes' must map seconds to boxes, got {_short(value)}")
    out: dict[float, Box | None] = {}
    for key, raw_box in value.items():
        try:
            second = second_key(key)
            if wanted is not None and second not in wanted:
                continue
            if isinstance(raw_box, dict):  # {"0": {"x1": .., "y1": .., "x2": .., "y2": ..}}
                raw_box = box_from_keys(raw_box) or raw_box
            box = to_box(raw_box)
        except GroundingError:
            if strict:
                raise
            continue
        if second in out and out[second] != box:
            if strict:
                raise GroundingError(f"second {second} has two different boxes")
            out[second] = None
        else:
            out[second] = box
    return out


# ---------------------------------------------------------------- IoU


def interval_iou(a: Interval, b: Interval) -> float:
    """Temporal IoU of two valid intervals; identical (even zero-length) intervals give 1.

    Example:
        >>> interval_iou((0, 10), (5, 15))
        0.3333333333333333
        >>> interval_iou((3, 3), (3, 3)), interval_iou((3, 3), (0, 9))
        (1.0, 0.0)
    """
    if a == b:
        return 1.0
    inter = min(a[1], b[1]) - max(a[0], b[0])
    union = max(a[1], b[1]) - min(a[0], b[0])
    if inter <= 0 or union <= 0:
        return 0.0
    return min(1.0, inter / union)


def box_iou(a: Box, b: Box) -> float:
    """IoU of two valid boxes; identical (even zero-area) boxes give 1.

    Example:
        >>> round(box_iou((0, 0, 10, 10), (5, 5, 15, 15)), 3)
        0.143
    """
    ax1, ay1, ax2, ay2 = a
    bx1, by1, bx2, by2 = b
    if ax1 == bx1 and ay1 == by1 and ax2 == bx2 and ay2 == by2:
        return 1.0
    # min()/max() written as the comparisons they make: this runs once per box per second
    iw = (bx2 if bx2 < ax2 else ax2) - (bx1 if bx1 > ax1 else ax1)
    ih = (by2 if by2 < ay2 else ay2) - (by1 if by1 > ay1 else ay1)
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    if union <= 0:
        return 0.0
    iou = inter / union
    return iou if iou < 1.0 else 1.0


def mean_iou_over_gold(pred: dict[float, Box | None], gold: dict[float, Box | None]) -> float:
    """Mean box IoU over the ground-truth seconds; a missing or conflicting second counts 0.

    Example:
        >>> mean_iou_over_gold({1.0: (0, 0, 1, 1)}, {1.0: (0, 0, 1, 1), 2.0: (0, 0, 1, 1)})
        0.5
    """
    return _iou_over_gold(pred, gold)[0]


# ---------------------------------------------------------------- ground truth (cached)


def _gold_json(gold: str, *, reading: Callable[[Any], Any] | None = None) -> Any:
    text = clean_gold(gold)
    if not text:
        raise GroundingError("empty ground truth")
    value, reason = _single_json(text, reading=reading)
    if value is None:
        raise GroundingError(f"ground truth: {reason}")
    return value


@lru_cache(maxsize=8192)
def _gold_interval(gold: str) -> Interval | str:
    try:
        value = _gold_json(gold)
        if isinstance(value, dict):
            found = _get(value, "time", "timestamps", "segment", "interval")
            value = _start_end(value) if found is None else found
        interval = to_interval(value)
    except GroundingError as exc:
        return f"ground truth: {exc}"
    if interval[0] == interval[1]:
        return "ground truth: zero-length interval (IoU undefined)"
    return interval


@lru_cache(maxsize=8192)
def _gold_box(gold: str) -> Box | str:
    try:
        box = to_box(_box_value(_gold_json(gold, reading=_box_reading)))
    except GroundingError as exc:
        return f"ground truth: {exc}"
    if box[0] == box[2] or box[1] == box[3]:
        return "ground truth: zero-area box (IoU undefined)"
    return box


class _GoldTrack(NamedTuple):
    """A valid spatio-temporal/tracking ground truth."""

    interval: Interval | None
    boxes: dict[float, Any]  # Box, or the JSON list of one (read by _box_table)
    seconds: frozenset[float]
    by_key: dict[str, Any] | None = None  # its own JSON keys -> boxes, when read in bulk
    grid: tuple[float, ...] = ()  # the gold seconds, sorted (see extra_seconds)
    step: float = 1.0  # the gold's sampling step: its smallest gap between seconds (else 1 s)


def _grid(seconds: frozenset[float]) -> tuple[tuple[float, ...], float]:
    """The sorted gold seconds and their sampling step (the smallest gap, 1 s for one second)."""
    grid = tuple(sorted(seconds))
    gaps = [b - a for a, b in itertools.pairwise(grid) if b > a]
    return grid, (min(gaps) if gaps else 1.0)


def extra_seconds(pred_seconds: Any, grid: tuple[float, ...], step: float) -> int:
    """How many seconds outside the gold track a prediction claims, on the gold's own grid.

    The gold samples the track every ``step`` seconds (its smallest gap). A predicted second
    within half a step of a gold second is that second's neighbourhood: a finer-grained answer
    (a box every 0.5 s against a gold every 1 s) adds nothing there, neither credit nor
    penalty. Every other predicted second falls in the cell of the nearest point of the grid
    ``grid[0] + k * step`` and each distinct cell counts once, so keys moved off the grid, or
    many keys in one cell, claim exactly as many extra seconds as the grid points they cover.

    Example:
        >>> extra_seconds([1.0, 1.5, 2.0, 2.5, 3.0], (1.0, 2.0, 3.0), 1.0)
        0
        >>> extra_seconds([0.0, 4.0, 4.2, 4.7, 9.9], (1.0, 2.0, 3.0), 1.0)
        4
    """
    if not grid:
        return 0
    half = step * 0.5 * (1 + 1e-9)
    first, last = grid[0], grid[-1]
    cells: set[int] = set()
    for second in pred_seconds:
        if first - half <= second <= last + half:
            at = bisect.bisect_left(grid, second)
            if (at < len(grid) and grid[at] - second <= half) or (
                at and second - grid[at - 1] <= half
            ):
                continue  # a gold second's own neighbourhood
        cells.add(math.floor((second - first) / step + 0.5))
    return len(cells)


@lru_cache(maxsize=8192)
def _gold_track(gold: str, with_time: bool) -> _GoldTrack | str:
    try:
        value = _gold_json(gold)
        if not isinstance(value, dict):
            raise GroundingError("must be a JSON object")
        interval = to_interval(value.get("time")) if with_time else None
        if interval is not None and interval[0] == interval[1]:
            raise GroundingError("zero-length interval (IoU undefined)")
        table = _box_table(value.get("boxes"))
        if table is not None:  # every entry plainly valid: read in bulk
            if table.zero_area:
                raise GroundingError("a zero-area box (IoU undefined)")
            by_key = value["boxes"]
            seconds = frozenset(table.boxes)
            return _GoldTrack(interval, table.boxes, seconds, by_key, *_grid(seconds))
        boxes = parse_boxes_by_second(value.get("boxes"), strict=True)
        if not boxes:
            raise GroundingError("'boxes' is empty")
        if any(b is not None and (b[0] == b[2] or b[1] == b[3]) for b in boxes.values()):
            raise GroundingError("a zero-area box (IoU undefined)")
        seconds = frozenset(boxes)
        return _GoldTrack(interval, boxes, seconds, None, *_grid(seconds))
    except GroundingError as exc:
        return f"ground truth: {exc}"


def _iou_over_gold(pred: dict[float, Any], gold: dict[float, Any]) -> tuple[float, int]:
    """``(mean box IoU over the gold seconds, number of gold seconds with a predicted box)``.

    A missing second counts 0; so does a conflicting one (gold box ``None``). Boxes may be
    tuples or (JSON) lists.
    """
    if not gold:
        return 0.0, 0
    total = 0.0
    matched = 0
    get = pred.get
    for second, gold_box in gold.items():
        pred_box = get(second)
        if pred_box is None:
            continue
        matched += 1
        if gold_box is not None:
            total += box_iou(pred_box, gold_box)
    return total / len(gold), matched


# ---------------------------------------------------------------- verifiers


@register_verifier(
    name="temporal_iou", version=2, problem_types=("temporal_grounding",), params_model=NoParams
)
class TemporalIouVerifier:
    """Temporal IoU of the predicted [start, end] with the ground truth (seconds)."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """IoU of the answer's interval with the gold ``{"time": [s, e]}``."""
        gold_iv = _gold_interval(gold)
        if isinstance(gold_iv, str):
            return VerifyOutcome.unverifiable(gold_iv)
        try:
            pred = parse_interval_answer(answer_text)
        except GroundingError as exc:
            return VerifyOutcome.wrong(str(exc), gold=list(gold_iv))
        return VerifyOutcome.ok(interval_iou(pred, gold_iv), pred=list(pred), gold=list(gold_iv))


@register_verifier(
    name="box_iou", version=2, problem_types=("spatial_grounding",), params_model=NoParams
)
class BoxIouVerifier:
    """IoU of the predicted box [x1, y1, x2, y2] with the ground-truth box."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """IoU of the answer's box with the gold ``{"boxes": [x1, y1, x2, y2]}``."""
        gold_box = _gold_box(gold)
        if isinstance(gold_box, str):
            return VerifyOutcome.unverifiable(gold_box)
        try:
            pred = parse_box_answer(answer_text)
        except GroundingError as exc:
            return VerifyOutcome.wrong(str(exc), gold=list(gold_box))
        return VerifyOutcome.ok(box_iou(pred, gold_box), pred=list(pred), gold=list(gold_box))


def _iou_by_gold_keys(pred: Any, gold: _GoldTrack) -> tuple[float, int] | None:
    """:func:`_iou_over_gold` when every predicted entry is a plain integer box under one of
    the gold's own keys (the common case), else None (the general path decides).

    Such keys name distinct gold seconds, so each entry matches exactly its gold box and no
    second-by-second lookup is needed.
    """
    by_key = gold.by_key
    if by_key is None or type(pred) is not dict:
        return None
    total = 0.0
    get = by_key.get
    for key, box in pred.items():
        gold_box = get(key)
        if gold_box is None or type(box) is not list or len(box) != 4:
            return None
        ax1, ay1, ax2, ay2 = box
        if not (type(ax1) is int and type(ay1) is int and type(ax2) is int and type(ay2) is int):
            return None
        if ax2 < ax1 or ay2 < ay1:
            return None
        total += box_iou(box, gold_box)
    return total / len(gold.boxes), len(pred)


def _pred_track(
    answer_text: str, with_time: bool, gold: _GoldTrack
) -> tuple[Interval | None, tuple[float, int, int], str | None]:
    """Predicted interval, ``(box part, matched seconds, extra seconds)`` and the reason for a
    0 time part.

    The box part is the mean box IoU over the gold seconds for tracking; with ``with_time``
    (spatio-temporal) it is the vIoU: the same sum over the union of the gold seconds and
    the predicted seconds outside them (:func:`extra_seconds`), so each counts 0 there."""
    value, reason = _single_json(answer_text)
    if not isinstance(value, dict) and len(answer_text) <= MAX_GROUNDING_CHARS:
        refined = refine_answer(answer_text)  # "... so the answer is {...}"
        if refined != answer_text.strip():
            value, _ = _single_json(refined)
    if not isinstance(value, dict):
        raise GroundingError(reason or "the answer must be a JSON object")
    boxes = _get(value, "boxes", "bboxes")
    second = _second_track(value, boxes, with_time)
    if second:
        raise GroundingError(second)
    box_iou = _iou_by_gold_keys(boxes, gold)  # only the gold's own keys: no extra second
    extra = 0
    if box_iou is None:
        table = _box_table(boxes)
        if table is not None:  # all plainly valid
            pred_boxes: dict = table.boxes
        elif boxes is not None:  # seconds outside the gold's count only as extra seconds
            pred_boxes = parse_boxes_by_second(
                boxes, strict=False, wanted=None if with_time else gold.seconds
            )
        else:
            pred_boxes = {}
        box_iou = _iou_over_gold(pred_boxes, gold.boxes)
        if with_time:
            outside = [second for second in pred_boxes if second not in gold.seconds]
            extra = extra_seconds(outside, gold.grid, gold.step) if outside else 0
    if not with_time:
        return None, (*box_iou, 0), None
    if extra:  # vIoU: the box IoU summed over the gold seconds, over gold ∪ predicted seconds
        gold_n = len(gold.boxes)
        box_iou = (box_iou[0] * gold_n / (gold_n + extra), box_iou[1])
    try:
        time = value.get("time")
        if time is None and "time" not in value:  # {"start": 1, "end": 3, "boxes": ...}
            time = _start_end(value)
        return to_interval(time), (*box_iou, extra), None
    except GroundingError as exc:
        return None, (*box_iou, extra), str(exc)


def _second_track(value: dict[str, Any], boxes: Any, with_time: bool) -> str | None:
    """Why a track answer is a hedge when another top-level key holds a second interval (with
    ``with_time``) or a second table of boxes that differs from the one read, else None."""
    if len(value) <= 2 and (len(value) == 1 or "time" in value):
        return None  # {"boxes": ...} or {"time": ..., "boxes": ...}: nothing else
    interval = _interval_part(value.get("time")) if with_time else None
    named = _start_end(value) if with_time and "time" in value else None
    if named is not None and _interval_part(named) != interval:
        return "start/end beside a different 'time' (hedge)"
    for key, item in value.items():
        if key == "time" or item is boxes:
            continue
        if with_time and interval is not None:
            for candidate in _lists_in_string(item) if type(item) is str else [item]:
                other = _interval_part(candidate)
                if other is not None and other != interval:
                    return f"a second interval under {_short(key)} (hedge)"
        if type(item) is dict and item and item != boxes:
            table = parse_boxes_by_second(item, strict=False)
            if table and (
                type(boxes) is not dict or table != parse_boxes_by_second(boxes, strict=False)
            ):
                return f"a second table of boxes under {_short(key)} (hedge)"
    return None


@register_verifier(
    name="spatiotemporal_iou",
    version=2,
    problem_types=("spatiotemporal_grounding",),
    params_model=NoParams,
)
class SpatioTemporalIouVerifier:
    """0.5·temporal IoU + 0.5·vIoU: box IoU summed over the gold seconds, divided by the
    union of the gold seconds and the predicted ones (a missing or an extra second counts 0)."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """Combined temporal and per-second box IoU against the gold track."""
        parsed_gold = _gold_track(gold, True)
        if isinstance(parsed_gold, str):
            return VerifyOutcome.unverifiable(parsed_gold)
        try:
            pred_iv, (m_iou, matched, extra), time_reason = _pred_track(
                answer_text, True, parsed_gold
            )
        except GroundingError as exc:
            return VerifyOutcome.wrong(str(exc))
        gold_iv = parsed_gold.interval
        t_iou = interval_iou(pred_iv, gold_iv) if pred_iv and gold_iv else 0.0
        details: dict[str, Any] = {
            "t_iou": t_iou,
            "mean_box_iou": m_iou,
            "gold_seconds": len(parsed_gold.boxes),
            "matched_seconds": matched,
            "extra_seconds": extra,
        }
        if time_reason:
            details["time_reason"] = time_reason
        return VerifyOutcome.ok(0.5 * t_iou + 0.5 * m_iou, **details)


@register_verifier(
    name="tracking_iou", version=2, problem_types=("tracking",), params_model=NoParams
)
class TrackingIouVerifier:
    """Mean box IoU over the ground-truth seconds (a missing second counts 0)."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """Per-second box IoU averaged over the gold seconds."""
        parsed_gold = _gold_track(gold, False)
        if isinstance(parsed_gold, str):
            return VerifyOutcome.unverifiable(parsed_gold)
        try:
            _, (m_iou, matched, _extra), _ = _pred_track(answer_text, False, parsed_gold)
        except GroundingError as exc:
            return VerifyOutcome.wrong(str(exc))
        return VerifyOutcome.ok(m_iou, gold_seconds=len(parsed_gold.boxes), matched_seconds=matched)
