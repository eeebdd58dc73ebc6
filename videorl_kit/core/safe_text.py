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
import unicodedata
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


_CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})

#: What an untrusted value becomes in Markdown: HTML's specials as entities, the characters
#: that open inline Markdown (code, emphasis, links, images, tables, strikethrough, maths)
#: behind a backslash.
_MARKDOWN_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}
_MARKDOWN_ESCAPED = frozenset("\\`*_[]|~$")
#: Block markers that act only at the start of a line (heading, list, quote, setext line).
_MARKDOWN_LEADING = frozenset("#-+=")
_ORDERED_LIST_START = re.compile(r"(\d{1,9})([.)])")
_CODE_BREAKERS = frozenset("`|\\")


def control_characters(text: str) -> list[str]:
    """The control, format and line-separator characters of ``text``, escaped, in order.

    These are what must never reach a generated script or a one-line message: a newline ends
    a shell comment, a bidirectional override repaints what a reader sees.

    Example:
        >>> control_characters("runs/a\\nb\\u202e"), control_characters("runs/a b")
        (['\\\\n', '\\\\u202e'], [])
    """
    return [_escape(ch) for ch in text if unicodedata.category(ch) in _CONTROL_CATEGORIES]


def _escape(ch: str) -> str:
    if ch.isascii():
        return repr(ch)[1:-1]
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"  # as Python spells it


def escape_controls(text: str) -> str:
    """``text`` with each control, format or line-separator character written as its escape.

    Example:
        >>> print(escape_controls("a\\nb\\u202ec d"))
        a\\nb\\u202ec d
    """
    return "".join(
        _escape(ch) if unicodedata.category(ch) in _CONTROL_CATEGORIES else ch for ch in text
    )


def terminal_text(text: str) -> str:
    """``text`` as a terminal shows it literally: line breaks and tabs kept, every other
    control, format or line-separator character written as its escape, so that no escape
    sequence of a value (a model response, a data row) reaches the terminal.

    Example:
        >>> print(terminal_text("a\\x1b[2J\\x07\\nb\\r"))
        a\\x1b[2J\\x07
        b\\r
    """
    return "".join(
        ch if ch in "\n\t" or unicodedata.category(ch) not in _CONTROL_CATEGORIES else _escape(ch)
        for ch in text
    )


def markdown_text(value: object) -> str:
    """``str(value)`` as literal text anywhere in Markdown: a paragraph, a heading, a list
    item, a table cell, a link's text. The one escaping function of every generated
    Markdown file (``report.md``, dataset cards).

    HTML specials become entities (no tag, comment or entity of the value survives), the
    characters that open inline Markdown (code, emphasis, links and images, table cells,
    strikethrough, maths) get a backslash, a block marker at the start is escaped, and
    control characters (a newline would start a new block: a forged heading or table row)
    are shown as their escapes; a leading space is an entity (no indented code block).

    Example:
        >>> markdown_text("<script>x</script>")
        '&lt;script&gt;x&lt;/script&gt;'
        >>> markdown_text("a|b\\n# c ![i](http://e/i.png)")
        'a\\\\|b\\\\\\\\n# c !\\\\[i\\\\](http://e/i.png)'
        >>> markdown_text("# 1. Qwen2.5-VL"), markdown_text("1. x")
        ('\\\\# 1. Qwen2.5-VL', '1\\\\. x')
    """
    text = str(value)
    out = []
    for ch in text:
        if ch in _MARKDOWN_ENTITIES:
            out.append(_MARKDOWN_ENTITIES[ch])
        elif ch in _MARKDOWN_ESCAPED:
            out.append("\\" + ch)
        elif unicodedata.category(ch) in _CONTROL_CATEGORIES:
            out.append(_escape(ch).replace("\\", "\\\\"))  # shown as its escape
        else:
            out.append(ch)
    escaped = "".join(out)
    if escaped[:1] == " ":  # four leading spaces would start an indented code block
        return "&#32;" + escaped[1:]
    if escaped[:1] in _MARKDOWN_LEADING:
        return "\\" + escaped
    numbered = _ORDERED_LIST_START.match(escaped)
    if numbered:
        return f"{numbered.group(1)}\\{numbered.group(2)}{escaped[numbered.end() :]}"
    return escaped


def markdown_code(value: object) -> str:
    """``str(value)`` shown as code in Markdown: a backtick code span when the value cannot
    end it or a table cell (no backtick, ``|``, backslash or control character), else
    :func:`markdown_text` inside ``<code>`` (escapes do not work inside a code span).

    Example:
        >>> markdown_code("video-mme"), markdown_code("`x` <b>")
        ('`video-mme`', '<code>\\\\`x\\\\` &lt;b&gt;</code>')
    """
    text = str(value)
    plain = text.strip() == text and not _CODE_BREAKERS & set(text)
    if text and plain and not control_characters(text):
        return f"`{text}`"
    return f"<code>{markdown_text(text)}</code>"
