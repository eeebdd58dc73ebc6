"""Text that is always safe to write: JSON that survives lone surrogates, one-line names.

A lone surrogate (``"\\ud800"`` in a model response, or a file name with undecodable bytes)
cannot be encoded as UTF-8, so writing it raw crashes the writer and loses every later
line. :func:`to_json` escapes exactly those code points (``\\ud800`` is valid JSON and reads
back to the same string), keeping every other character readable. :func:`one_line` shows
a name from untrusted input on one line: control characters, bidirectional overrides and
surrogates are escaped, so a key or file name cannot break "one line per error" or
repaint the terminal.

Example:
    >>> to_json({"response": "caf\\u00e9 \\ud800"})
    '{"response": "café \\\\ud800"}'
    >>> import json; json.loads(to_json("\\ud800")) == "\\ud800"
    True
    >>> one_line("a\\nb\\x1b[2J\\u202e"), one_line("fps")
    ("'a\\\\nb\\\\x1b[2J\\\\u202e'", 'fps')
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def to_json(value: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """``json.dumps`` with non-ASCII text kept readable and lone surrogates escaped.

    Example:
        >>> to_json(["é", "\\udcff"])
        '["é", "\\\\udcff"]'
    """
    text = json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=sort_keys)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (it then has no UTF-8 form).

    Example:
        >>> has_lone_surrogate("caf\\u00e9"), has_lone_surrogate("a\\udcff")
        (False, True)
    """
    return _SURROGATE.search(text) is not None


def lone_surrogate_field(row: dict[str, Any]) -> str | None:
    """The first field of ``row`` whose text (at any depth) holds a lone surrogate, or None.

    Example:
        >>> lone_surrogate_field({"problem": "ok", "videos": ["\\ud800.mp4"]})
        'videos'
    """
    for key, value in row.items():
        pending = [key, value]
        while pending:
            item = pending.pop()
            if isinstance(item, str):
                if has_lone_surrogate(item):
                    return str(key)
            elif isinstance(item, dict):
                pending.extend(item.keys())
                pending.extend(item.values())
            elif isinstance(item, list | tuple):
                pending.extend(item)
    return None


def quoted(value: object, limit: int = 80) -> str:
    """``repr`` of ``str(value)`` cut to ``limit`` characters: input named in a message.

    Example:
        >>> quoted("fsp"), quoted("k" * 100, limit=5)
        ("'fsp'", "'kkkk…'")
    """
    text = str(value)
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def one_line(text: str) -> str:
    """``text`` unchanged if every character is printable, else its escaped ``repr``.

    Example:
        >>> one_line("budget"), one_line("x\\ty")
        ('budget', "'x\\\\ty'")
    """
    return text if text.isprintable() else repr(text)
