"""Grounding answers written in the forms vision-language models use besides JSON.

Boxes: Qwen's native ``<|box_start|>(x1,y1),(x2,y2)<|box_end|>`` (the special tokens are
removed by extraction, leaving two corner points), ``[[x1, y1], [x2, y2]]``, coordinates by
name (``x1=10, y1=20, x2=110, y2=220``, ``{"xmin": ..., "ymax": ...}``, ``left/top/right/
bottom``) and ``{"x": .., "y": .., "width": .., "height": ..}``. Times: ``Start time: 1.0
seconds`` / ``End time: 7.5 seconds`` lines (Charades-STA prompts), ``starts at 1.0 s and ends
at 7.5 s``, a bare pair ``12.3, 18.0`` as the whole answer, and subtitle times
``00:00:12,300 --> 00:00:18,000``.

The functions here only find the written values; :mod:`videorl_kit.rewards.grounding` checks
them (order, range, finiteness). A form that names one coordinate or time twice with different
values is a hedge.

Example:
    >>> box_by_name("x1=10, y1=20, x2=110, y2=220")
    [10.0, 20.0, 110.0, 220.0]
    >>> start_and_end("Start time: 1.0 seconds\\nEnd time: 7.5 seconds")
    ('1.0', '7.5')
    >>> bare_pairs("12.3, 18.0 seconds")
    [('12.3', '18.0')]
"""

from __future__ import annotations

import re
from typing import Any

from videorl_kit.core.errors import VideoRLKitError

_NUMBER = r"[-+]?\d{1,9}(?:\.\d{1,9})?"
#: The coordinate names a box may be written with, each mapped to its slot (x1, y1, x2, y2).
_SLOT_OF = {
    **dict.fromkeys(["x1", "xmin", "x_min", "left", "x0"], 0),
    **dict.fromkeys(["y1", "ymin", "y_min", "top", "y0"], 1),
    **dict.fromkeys(["x2", "xmax", "x_max", "right"], 2),
    **dict.fromkeys(["y2", "ymax", "y_max", "bottom"], 3),
}
_NAMED_RE = re.compile(
    rf"(?<![\w\"'])[\"']?(?P<name>{'|'.join(sorted(_SLOT_OF, key=len, reverse=True))})[\"']?"
    rf"\s{{0,3}}[=:]\s{{0,3}}(?P<value>{_NUMBER})(?![\d.])",
    re.IGNORECASE,
)
#: Longest text searched for written forms.
MAX_FORM_CHARS = 4096


class FormHedge(VideoRLKitError, ValueError):
    """A written form that gives one coordinate or time two different values."""


def box_by_name(text: str) -> list[float] | None:
    """``[x1, y1, x2, y2]`` from coordinates written by name (``x1=10, y1: 20, ...``), None
    when the text does not name all four; :class:`FormHedge` when one is named twice with
    different values.

    Example:
        >>> box_by_name("xmin: 5, ymin: 6, xmax: 7, ymax: 8"), box_by_name("x1=1, y1=2")
        ([5.0, 6.0, 7.0, 8.0], None)
    """
    if ("=" not in text and ":" not in text) or len(text) > MAX_FORM_CHARS:
        return None
    slots: list[set[float]] = [set(), set(), set(), set()]
    for m in _NAMED_RE.finditer(text):
        slots[_SLOT_OF[m.group("name").casefold()]].add(float(m.group("value")))
    if not all(slots):
        return None
    if any(len(values) > 1 for values in slots):
        raise FormHedge("a coordinate named twice with different values (hedge)")
    return [values.pop() for values in slots]


def box_from_keys(value: dict[str, Any]) -> list[Any] | None:
    """A box from a dict keyed by coordinate names (``{"x1": .., "y1": .., "x2": .., "y2": ..}``,
    ``xmin``/``ymin``/``xmax``/``ymax``, ``left``/``top``/``right``/``bottom``) or by corner
    and size (``{"x": .., "y": .., "width": .., "height": ..}``, also ``w``/``h``); else None.

    Example:
        >>> box_from_keys({"x": 1, "y": 2, "width": 10, "height": 20})
        [1, 2, 11, 22]
    """
    slots: list[Any] = [None] * 4
    for key, item in value.items():
        slot = _SLOT_OF.get(str(key).casefold())
        if slot is not None:
            if slots[slot] is not None:
                return None
            slots[slot] = item
    if all(item is not None for item in slots):
        return slots
    keys = {str(k).casefold(): k for k in value}
    top_left, bottom_right = keys.get("top_left"), keys.get("bottom_right")
    if top_left is not None and bottom_right is not None:  # {"top_left": [x, y], ...}
        corners = [value[top_left], value[bottom_right]]
        if all(type(c) is list and len(c) == 2 for c in corners):
            return [*corners[0], *corners[1]]
    corner = [keys.get("x"), keys.get("y")]
    size = [keys.get("width", keys.get("w")), keys.get("height", keys.get("h"))]
    if None in corner or None in size:
        return None
    x, y = value[corner[0]], value[corner[1]]
    width, height = value[size[0]], value[size[1]]
    numbers = (int, float)
    if not all(type(v) in numbers for v in (x, y, width, height)) or width < 0 or height < 0:
        return None
    return [x, y, x + width, y + height]


def corners_as_box(found: list[Any]) -> list[Any] | None:
    """Two corner points ``[x1, y1]``, ``[x2, y2]`` (Qwen's ``(x1,y1),(x2,y2)``) as one box.

    Example:
        >>> corners_as_box([[10, 20], [110, 220]]), corners_as_box([[1, 2, 3, 4]])
        ([10, 20, 110, 220], None)
    """
    if len(found) != 2:
        return None
    first, second = found
    if not (isinstance(first, list) and isinstance(second, list)):
        return None
    if len(first) != 2 or len(second) != 2:
        return None
    return [*first, *second]


_TIME = r"(?:\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,6})?|\d{1,3}:\d{2}(?:\.\d{1,6})?|\d{1,7}(?:\.\d{1,6})?)"
_SECONDS = r"(?:\s{0,2}(?:s|sec|secs|second|seconds|秒)\b)?"
_START_RE = re.compile(
    r"\b(?:start(?:ing)?(?:[\s_-]{0,3}(?:time|timestamp|point))?"
    r"|begin(?:ning)?(?:[\s_-]{0,3}time)?"
    r"|(?:starts|begins)\s{1,3}at|onset)[\"']?\s{0,3}(?:\(s\)\s{0,3})?(?:[:=]|\bis\b|\bat\b)?\s{0,3}"
    rf"(?P<t>{_TIME}){_SECONDS}",
    re.IGNORECASE,
)
_END_RE = re.compile(
    r"\b(?:end(?:ing)?(?:[\s_-]{0,3}(?:time|timestamp|point))?"
    r"|finish(?:ing)?(?:[\s_-]{0,3}time)?"
    r"|(?:ends|finishes|stops)\s{1,3}at)[\"']?\s{0,3}(?:\(s\)\s{0,3})?(?:[:=]|\bis\b|\bat\b)?\s{0,3}"
    rf"(?P<t>{_TIME}){_SECONDS}",
    re.IGNORECASE,
)
_PAIR_RE = re.compile(
    rf"(?<![\d.:])\s{{0,4}}(?P<a>{_TIME}){_SECONDS}\s{{0,3}},\s{{0,3}}(?P<b>{_TIME}){_SECONDS}",
    re.IGNORECASE,
)
#: What may follow a pair that opens the answer: its end, or a clause after punctuation.
_PAIR_END_RE = re.compile(r"[\s.]{0,4}$|\s{0,3}[,;]\s|\s{1,3}(?:or|and)\b", re.IGNORECASE)


def start_and_end(text: str) -> tuple[str, str] | None:
    """The start and end times a text names (``Start time: 1.0 seconds``, ``End: 7.5``,
    ``starts at 1.0 s and ends at 7.5 s``), as written; None without both;
    :class:`FormHedge` when either is named twice with different values.

    Example:
        >>> start_and_end("The action starts at 3.5 s and ends at 9 s.")
        ('3.5', '9')
    """
    if len(text) > MAX_FORM_CHARS:
        return None
    low = text.lower()
    if "end" not in low or ("start" not in low and "begin" not in low and "onset" not in low):
        return None
    starts = {m.group("t").replace(",", ".") for m in _START_RE.finditer(text)}
    ends = {m.group("t").replace(",", ".") for m in _END_RE.finditer(text)}
    if not starts or not ends:
        return None
    if len(starts) > 1 or len(ends) > 1:
        raise FormHedge("a start or end time named twice with different values (hedge)")
    return starts.pop(), ends.pop()


def bare_pairs(text: str) -> list[tuple[str, str]]:
    """Two times separated by a comma that open the answer (``12.3, 18.0``, ``12.3, 18.0, or
    ...``), and every other such pair in it (``12.3, 18.0 or 30, 40`` names two); ``[]`` when
    the answer does not open with one.

    Example:
        >>> bare_pairs("12.3, 18.0, or maybe later"), bare_pairs("at 12.3, 18.0")
        ([('12.3', '18.0')], [])
    """
    if len(text) > MAX_FORM_CHARS:
        return []
    m = _PAIR_RE.match(text)
    if m is None or not _PAIR_END_RE.match(text, m.end()):
        return []
    return [(p.group("a"), p.group("b")) for p in _PAIR_RE.finditer(text)]
