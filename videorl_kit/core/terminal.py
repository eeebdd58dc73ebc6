"""The one way the command line writes to a terminal: values shown, never obeyed.

Every value a command prints may come from a file someone else wrote: a store row (task id,
source uri, decode warnings), a data row (a media path), a results or predictions file, a
spec. A raw escape sequence in one of them would act on the reader's terminal: OSC 52 puts
the attacker's text on the clipboard, ``ESC [ 2 J`` clears the screen, a bidirectional
override repaints a line. :class:`TerminalConsole` is the Rich console of every command: it
prints markup literally (``markup=False``) and writes each control, format or line-separator
character of the text it renders as its escape (:func:`~videorl_kit.core.safe_text.terminal_text`),
keeping line breaks and tabs and the kit's own styling (colours are Rich styles, not text).
:func:`echo` does the same for plain ``typer.echo`` lines, :func:`echo_json` for JSON
printed to the terminal (there the characters become ``\\uXXXX``, so the JSON reads back
to the same values).

Example:
    >>> import io
    >>> buffer = io.StringIO()
    >>> console = TerminalConsole(file=buffer, width=80)
    >>> console.print("task x\\x1b]52;c;cHduZWQ=\\x07 [b]y[/b]")
    >>> buffer.getvalue()
    'task x\\\\x1b]52;c;cHduZWQ=\\\\x07 [b]y[/b]\\n'
    >>> json_for_terminal('{"a": "x\\u009b2J\\u202e"}')
    '{"a": "x\\\\u009b2J\\\\u202e"}'
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any

import typer
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

from videorl_kit.core.safe_text import terminal_text

#: What JSON leaves raw and a terminal could act on (``json.dumps(..., ensure_ascii=False)``
#: escapes only C0 controls): C1 controls (``\x9b`` is a one-byte CSI on some terminals),
#: format characters (bidirectional overrides), line and paragraph separators, surrogates.
_TERMINAL_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # outside the BMP: JSON spells it as a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


class TerminalConsole(Console):
    """A Rich console that shows every control character of the text it prints as its
    escape, and prints markup literally (``markup=False`` unless asked otherwise).

    Example:
        >>> import io
        >>> buffer = io.StringIO()
        >>> TerminalConsole(file=buffer).print("a\\x1b[2Jb\\nc")
        >>> buffer.getvalue()
        'a\\\\x1b[2Jb\\nc\\n'
    """

    def __init__(self, *args: Any, markup: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, markup=markup, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """A string as Rich text, its control characters escaped (so widths are measured
        on what is shown)."""
        return super().render_str(terminal_text(text), **kwargs)

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        """Rich's rendering, with the text of every segment that is not one of Rich's own
        control segments (cursor moves of a live display) shown literally."""
        for segment in super().render(renderable, options):
            text = segment.text
            if segment.control or text.isprintable() or not text:
                yield segment
            else:
                yield Segment(terminal_text(text), segment.style, segment.control)


def echo(message: object, *, err: bool = False) -> None:
    """``typer.echo`` of ``message`` with its control characters escaped (line breaks kept).

    Example:
        >>> echo("wrote runs/x\\x1b[2J")
        wrote runs/x\\x1b[2J
    """
    typer.echo(terminal_text(str(message)), err=err)


def json_for_terminal(text: str) -> str:
    """JSON text with the characters a terminal could act on (C1 controls, bidirectional and
    other format characters, line separators, lone surrogates) written as ``\\uXXXX``
    escapes; the JSON reads back to the same values. JSON already escapes C0 controls.

    Example:
        >>> import json
        >>> shown = json_for_terminal(json.dumps({"a": "\\u202eb\\u2028"}, ensure_ascii=False))
        >>> shown, json.loads(shown) == {"a": "\\u202eb\\u2028"}
        ('{"a": "\\\\u202eb\\\\u2028"}', True)
    """
    if text.isprintable():
        return text
    return "".join(
        _json_escape(ch)
        if ch not in "\n\r\t" and unicodedata.category(ch) in _TERMINAL_CATEGORIES
        else ch
        for ch in text
    )


def echo_json(text: str, *, err: bool = False) -> None:
    """``typer.echo`` of JSON text through :func:`json_for_terminal`.

    Example:
        >>> echo_json('{"a": "\\u009b"}')
        {"a": "\\u009b"}
    """
    typer.echo(json_for_terminal(text), err=err)
