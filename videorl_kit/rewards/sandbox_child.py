"""What runs inside the code sandbox: the plain-data wire format and the child's main loop.

This module is self-contained (standard library only): the host starts a fresh interpreter that
runs this file's source (``python -S -s -B -P -c SOURCE``) inside the sandbox, where the kit is
not installed. The host imports the same module for the wire format, so both ends share one
definition of it.

**Wire format.** A value crosses the process boundary as one line of JSON text in which only
plain data can be written: ``null``, ``true``/``false``, integers, finite floats (always with a
``.`` or an exponent, so ``1`` and ``1.0`` stay apart), strings and arrays (lists), plus
one-key objects for everything else: ``{"tuple": [...]}``, ``{"dict": [[key, value], ...]}``,
``{"set": [...]}``, ``{"frozenset": [...]}``, ``{"float": "nan" | "inf" | "-inf"}``,
``{"int": "0x..."}`` (integers too long for decimal text), ``{"bytes": "hex"}``,
``{"bytearray": "hex"}``, ``{"complex": [real, imag]}``. Subclasses of these types cross as
their built-in base (a ``namedtuple`` as a tuple, an ``IntEnum`` as an int) and keep none of
their methods: an object that claims to equal everything cannot be sent at all.
:func:`decode_value` is strict: anything else (``NaN`` literals, numbers that overflow to
infinity, duplicate or unknown keys, nesting deeper than :data:`MAX_DEPTH`, unhashable keys) is a
:class:`WireError`.

**Child protocol.** The child reads one JSON request from stdin, writes ``started`` to its
result descriptor, applies its resource limits, runs the code, then either calls the entry point
with each call's arguments (``calls`` mode) or runs test statements after the code (``script``
mode), and writes its report lines followed by ``end``. The host decides every verdict from those
lines (see :mod:`videorl_kit.rewards.sandbox`); nothing in the request holds an expected value.

Example:
    >>> text = encode_value((1, 2.0, "x", [None, True], {"k": {3}}), max_bytes=1000)
    >>> text
    '{"tuple": [1, 2.0, "x", [null, true], {"dict": [["k", {"set": [3]}]]}]}'
    >>> decode_value(text)
    (1, 2.0, 'x', [None, True], {'k': {3}})
    >>> decode_value('{"float": "nan"}') != decode_value('{"float": "nan"}')
    True
    >>> decode_value("1e999")
    Traceback (most recent call last):
    ...
    videorl_kit.rewards.sandbox_child.WireError: a number overflows to infinity: 1e999
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from typing import Any

#: Deepest nesting of containers a value may have (either direction).
MAX_DEPTH = 64

_HEX_INT = re.compile(r"-?0x[0-9a-f]+")
_HEX_BYTES = re.compile(r"(?:[0-9a-f]{2})*")
_SPECIAL_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_encode_string = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]


class WireError(ValueError):
    """A value cannot be written to, or read from, the wire format (the message says why)."""


# --------------------------------------------------------------------------------- encoding


def encode_value(value: Any, *, max_bytes: int, max_depth: int = MAX_DEPTH) -> str:
    """``value`` as one line of wire text; raises :class:`WireError` if it is not plain data.

    Containers are read through their built-in base type's own methods, so a subclass that
    overrides ``__iter__`` or ``__eq__`` sends its stored items, never what the override says.

    Example:
        >>> encode_value({1: [float("inf")]}, max_bytes=100)
        '{"dict": [[1, [{"float": "inf"}]]]}'
        >>> encode_value(object(), max_bytes=100)
        Traceback (most recent call last):
        ...
        videorl_kit.rewards.sandbox_child.WireError: cannot send a value of type object
    """
    parts: list[str] = []
    _encode(value, parts, [max_bytes], max_depth)
    return "".join(parts)


def _encode(value: Any, parts: list[str], budget: list[int], depth: int) -> None:
    kind = type(value)
    if value is None:
        text = "null"
    elif kind is bool:
        text = "true" if value else "false"
    elif issubclass(kind, int):
        plain = int.__int__(value)
        try:
            text = int.__repr__(plain)
        except ValueError:  # more digits than int -> str allows: hexadecimal has no limit
            text = '{"int": ' + _encode_string(format(plain, "#x")) + "}"
    elif issubclass(kind, float):
        plain = float.__float__(value)
        if math.isfinite(plain):
            text = float.__repr__(plain)
        else:
            text = '{"float": "' + ("nan" if plain != plain else "inf" if plain > 0 else "-inf")
            text += '"}'
    elif issubclass(kind, str):
        text = _encode_string(str.__str__(value))
    elif issubclass(kind, bytes | bytearray):
        tag = "bytearray" if issubclass(kind, bytearray) else "bytes"
        text = '{"' + tag + '": "' + bytes(value).hex() + '"}'
    elif issubclass(kind, complex):
        plain_complex = complex.__complex__(value)
        parts.append('{"complex": [')
        _encode(plain_complex.real, parts, budget, depth)
        parts.append(", ")
        _encode(plain_complex.imag, parts, budget, depth)
        parts.append("]}")
        return
    else:
        _encode_container(value, kind, parts, budget, depth)
        return
    budget[0] -= len(text)
    if budget[0] < 0:
        raise WireError("value too large to send")
    parts.append(text)


def _encode_container(value: Any, kind: type, parts: list[str], budget: list[int], depth: int):
    if depth <= 0:
        raise WireError(f"value nested deeper than {MAX_DEPTH} levels")
    if issubclass(kind, list):
        opening, closing, items = "[", "]", list.__iter__(value)
    elif issubclass(kind, tuple):
        opening, closing, items = '{"tuple": [', "]}", tuple.__iter__(value)
    elif issubclass(kind, frozenset):
        opening, closing, items = '{"frozenset": [', "]}", frozenset.__iter__(value)
    elif issubclass(kind, set):
        opening, closing, items = '{"set": [', "]}", set.__iter__(value)
    elif issubclass(kind, dict):
        parts.append('{"dict": [')
        for index, (key, item) in enumerate(dict.items(value)):
            parts.append("[" if index == 0 else ", [")
            _encode(key, parts, budget, depth - 1)
            parts.append(", ")
            _encode(item, parts, budget, depth - 1)
            parts.append("]")
            budget[0] -= 6
        parts.append("]}")
        return
    else:
        raise WireError(f"cannot send a value of type {kind.__name__}")
    parts.append(opening)
    for index, item in enumerate(items):
        if index:
            parts.append(", ")
            budget[0] -= 2
        _encode(item, parts, budget, depth - 1)
    parts.append(closing)
    budget[0] -= len(opening) + len(closing)
    if budget[0] < 0:
        raise WireError("value too large to send")


# --------------------------------------------------------------------------------- decoding


def decode_value(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Read one value written by :func:`encode_value`; anything else raises :class:`WireError`.

    Example:
        >>> decode_value('{"dict": [[{"tuple": [1, 2]}, {"bytes": "ff"}]]}')
        {(1, 2): b'\\xff'}
        >>> decode_value('{"dict": [[[1], 2]]}')
        Traceback (most recent call last):
        ...
        videorl_kit.rewards.sandbox_child.WireError: bad {"dict"}: unhashable type: 'list'
    """
    try:
        value = json.loads(
            text,
            parse_float=_finite_float,
            parse_constant=_no_constant,
            object_pairs_hook=_tagged_value,
        )
    except WireError:
        raise
    except RecursionError:
        raise WireError("value nested too deeply") from None
    except (ValueError, TypeError) as exc:
        raise WireError(f"not wire text: {exc}"[:300]) from None
    _check_depth(value, max_depth)
    return value


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise WireError(f"a number overflows to infinity: {text[:40]}")
    return number


def _no_constant(text: str) -> None:
    raise WireError(f"{text} is not allowed (non-finite floats are tagged)")


def _tagged_value(pairs: list[tuple[str, Any]]) -> Any:
    if len(pairs) != 1:
        raise WireError("a JSON object must hold exactly one type tag")
    tag, body = pairs[0]
    try:
        if tag in ("tuple", "set", "frozenset") and type(body) is list:
            return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](body)
        if tag == "dict" and type(body) is list:
            result = {}
            for pair in body:
                if type(pair) is not list or len(pair) != 2:
                    raise WireError('bad {"dict"}: items must be [key, value] pairs')
                result[pair[0]] = pair[1]
            return result
        if tag == "float" and type(body) is str and body in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[body]
        if tag == "int" and type(body) is str and _HEX_INT.fullmatch(body):
            return int(body, 16)
        if tag in ("bytes", "bytearray") and type(body) is str and _HEX_BYTES.fullmatch(body):
            data = bytes.fromhex(body)
            return data if tag == "bytes" else bytearray(data)
        if (
            tag == "complex"
            and type(body) is list
            and len(body) == 2
            and all(type(part) is float for part in body)
        ):
            return complex(body[0], body[1])
    except TypeError as exc:
        raise WireError(f"bad {{{json.dumps(tag)}}}: {exc}") from None
    raise WireError(f"bad or unknown type tag {json.dumps(tag)[:40]}")


def _check_depth(value: Any, max_depth: int) -> None:
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        kind = type(item)
        if kind in (list, tuple, set, frozenset):
            children = list(item)
        elif kind is dict:
            children = [*item.keys(), *item.values()]
        else:
            continue
        if depth >= max_depth:
            raise WireError(f"value nested deeper than {max_depth} levels")
        pending.extend((child, depth + 1) for child in children)


# --------------------------------------------------------------------------------- child side


def _message(exc: BaseException) -> str:
    """``Type: text`` of an exception, never raising (its ``__str__`` is untrusted code)."""
    try:
        text = str(exc)
    except BaseException:
        text = "<unprintable>"
    name = type(exc).__name__
    return (f"{name}: {text}" if text else name)[:500]


def _apply_limits(limits: dict[str, int]) -> None:
    """Set each ``RLIMIT_*`` (soft = hard, so the code cannot raise them again)."""
    import resource

    for name, value in limits.items():
        which = getattr(resource, name, None)
        if which is None:
            continue
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY and hard < value:
            value = hard
        resource.setrlimit(which, (value, value))


def child_main(request: dict[str, Any]) -> None:  # pragma: no cover - runs in the child
    """Run one request and write the report to ``request["result_fd"]``; always ``_exit``s."""
    out_fd: int = request["result_fd"]
    exit_now = os._exit
    lines: list[str] = []

    def send(text: str) -> None:
        data = text.encode("ascii", "backslashreplace")
        while data:
            data = data[os.write(out_fd, data) :]

    send("started\n")
    _apply_limits(request["limits"])
    namespace: dict[str, Any] = {"__name__": request["module_name"], "__builtins__": __builtins__}
    status = "ran"
    try:
        code = compile(request["code"], "<solution>", "exec", dont_inherit=True)
    except BaseException as exc:  # SyntaxError, ValueError (NUL byte), MemoryError, ...
        status = "syntax_error " + _encode_string(_message(exc))
    if status == "ran":
        try:
            exec(code, namespace)
        except BaseException as exc:
            status = "error " + _encode_string(_message(exc))
    entry_point = request["entry_point"]
    function = namespace.get(entry_point) if entry_point else None
    if status == "ran" and entry_point and not callable(function):
        status = "missing_entry_point " + _encode_string(f"{entry_point} is not defined")
    lines.append("status " + status)
    if status == "ran" and request["calls"] is not None:
        lines.extend(_make_calls(function, request["calls"], int(request["max_result_bytes"])))
    elif status == "ran" and request["script"] is not None:
        lines.extend(_run_script(namespace, request["script"], request["nonce"]))
    lines.append("end")
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - the code may have replaced or closed the streams
            stream.flush()
        except BaseException:
            pass
    try:
        send("\n".join(lines) + "\n")
    except BaseException:
        exit_now(1)
    exit_now(0)


def _make_calls(function: Any, calls: list[list[str]], max_bytes: int) -> list[str]:
    """One ``result ...`` line per call, in order (every call is made, even after one raised)."""
    lines = []
    for args_text, kwargs_text in calls:
        args, kwargs = decode_value(args_text), decode_value(kwargs_text)
        try:
            value = function(*args, **kwargs)
        except BaseException as exc:
            lines.append("result raised " + _encode_string(_message(exc)))
            continue
        try:
            text = encode_value(value, max_bytes=max_bytes)
        except BaseException as exc:  # WireError, RecursionError, MemoryError, a raising __iter__
            lines.append("result unencodable " + _encode_string(_message(exc)))
            continue
        max_bytes -= len(text)
        lines.append("result ok " + text)
    return lines


def _run_script(namespace: dict[str, Any], tests: list[str], nonce: str) -> list[str]:
    """Run each test after the code; ``pass NONCE`` only when every one of them finished."""
    for index, test in enumerate(tests):
        try:
            exec(compile(test, f"<test {index}>", "exec", dont_inherit=True), namespace)
        except BaseException as exc:
            return [f"failed {index} " + _encode_string(_message(exc))]
    return ["pass " + nonce]


if __name__ == "__main__":  # pragma: no cover - the child's entry point
    child_main(json.loads(sys.stdin.buffer.read()))
