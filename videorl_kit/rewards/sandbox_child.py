"""What runs inside the code sandbox: the child's main loop and the plain-data encoder.

The host starts a fresh interpreter that runs this file's source (``python -S -s -B -P -c
SOURCE``) inside the sandbox, where the kit is not installed, so the module is self-contained
and imports only what starts fast (no ``json``, ``re`` or ``typing``). The host imports it too,
to check that call arguments are plain data; it reads the child's values back with the strict
decoder in :mod:`videorl_kit.rewards.sandbox_wire`.

**Wire format.** A value crosses the process boundary as one line of JSON text in which only
plain data can be written: ``null``, ``true``/``false``, integers, finite floats (always with a
``.`` or an exponent, so ``1`` and ``1.0`` stay apart), strings and arrays (lists), plus
one-key objects for everything else: ``{"tuple": [...]}``, ``{"dict": [[key, value], ...]}``,
``{"set": [...]}``, ``{"frozenset": [...]}``, ``{"float": "nan" | "inf" | "-inf"}``,
``{"int": "0x..."}`` (integers too long for decimal text), ``{"bytes": "hex"}``,
``{"bytearray": "hex"}``, ``{"complex": [real, imag]}``, and ``{"iterator": [...]}`` for a
generator or other iterator, whose items are drawn in the child (within the size limit) and
arrive as a plain list iterator (so ``list(f(x)) == [...]`` holds as in Python, and
``f(x) == [...]`` does not). Subclasses of these types cross as their built-in base (a
``namedtuple`` as a tuple, an ``IntEnum`` as an int) and keep none of their methods: an object
that claims to equal everything cannot be sent at all. Nesting is limited to
:data:`MAX_DEPTH` levels.

**Child protocol.** The child reads one ``marshal``-ed request from stdin (written by the host:
the code, the entry point, the calls' arguments or the test statements, its limits), writes
``started`` to its result descriptor, applies its resource limits, runs the code, then either
calls the entry point with each call's arguments (``calls`` mode) or runs test statements after
the code (``script`` mode), and writes its report lines followed by ``end``. The host decides
every verdict from those lines (see :mod:`videorl_kit.rewards.sandbox`); nothing in the request
holds an expected value.

In ``serve`` mode the child writes ``status ran`` once the code has run and then answers, one
``reply`` line each, the messages the host writes to its inbox (``request["inbox_fd"]``): a
``call`` of one of the code's callables with plain-data arguments, or a ``lookup`` of one of its
names (:func:`serve`). The host relays those messages from a second process that runs the tests
(``role: tester``, :mod:`videorl_kit.rewards.sandbox_tester`); the child never sees a test.
Messages from the host are read with :func:`decode_trusted`, which only the host's own, already
checked, text reaches.

Example:
    >>> encode_value((1, 2.0, "x", [None, True], {"k": {3}}), max_bytes=1000)
    '{"tuple": [1, 2.0, "x", [null, true], {"dict": [["k", {"set": [3]}]]}]}'
    >>> encode_value([float("-inf"), b"\\x01", frozenset()], max_bytes=100)
    '[{"float": "-inf"}, {"bytes": "01"}, {"frozenset": []}]'
"""

from __future__ import annotations

import marshal
import math
import os
import resource
import sys

try:
    from _json import encode_basestring_ascii as _encode_string
except ImportError:  # pragma: no cover - an interpreter without the C accelerator
    from json.encoder import py_encode_basestring_ascii as _encode_string

try:  # the kit's root error on the host; inside the sandbox the kit is not there
    from videorl_kit.core.errors import VideoRLKitError as _KitError
except ImportError:  # pragma: no cover - only in the child

    class _KitError(Exception):  # type: ignore[no-redef]
        """Stands in for the kit's root error inside the sandbox."""


#: Deepest nesting of containers a value may have (either direction).
MAX_DEPTH = 64
#: Longest message (an exception's text) a report carries.
MAX_MESSAGE_CHARS = 500


class WireError(_KitError, ValueError):
    """A value cannot be written to, or read from, the wire format (the message says why)."""


# --------------------------------------------------------------------------------- encoding


def encode_value(value: object, *, max_bytes: int, max_depth: int = MAX_DEPTH) -> str:
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


def _encode(value: object, parts: list[str], budget: list[int], depth: int) -> None:
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


def _encode_container(value: object, kind: type, parts: list[str], budget: list[int], depth: int):
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
    elif hasattr(kind, "__next__") and hasattr(kind, "__iter__"):  # a generator, map, ...
        opening, closing, items = '{"iterator": [', "]}", value
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
    if opening in ("[", '{"tuple": ['):  # finite: read once, then maybe in one pass
        items = list(items)
        if _encode_flat(items, opening, closing, parts, budget):
            return
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


def _encode_flat(
    items: list, opening: str, closing: str, parts: list[str], budget: list[int]
) -> bool:
    """Encode a list or tuple of only ``int``, only ``str`` or only finite ``float`` items in
    one pass of C loops (the same text as item by item); False when it is not one of those."""
    kinds = set(map(type, items))
    try:
        if kinds == {int} or (kinds == {float} and all(map(math.isfinite, items))):
            text = list.__repr__(items)[1:-1]  # each item's repr: JSON for these two types
        elif kinds == {str}:
            text = ", ".join(map(_encode_string, items))
        else:
            return False
    except ValueError:  # an integer too long for decimal text: item by item
        return False
    budget[0] -= len(text) + len(opening) + len(closing)
    if budget[0] < 0:
        raise WireError("value too large to send")
    parts += (opening, text, closing)
    return True


def decode_trusted(text: str) -> object:
    """Read wire text that the host wrote or already checked (never the code's own output).

    The host reads what a child sends with the strict decoder
    (:func:`videorl_kit.rewards.sandbox_wire.decode_value`); this one only rebuilds the tagged
    types and trusts the rest. It uses the C scanner of ``_json`` directly: importing ``json``
    (and with it ``re``) would add about 10 ms to every child's start.

    Example:
        >>> decode_trusted('[{"tuple": [1, {"float": "inf"}]}, {"dict": [["k", {"set": [2]}]]}]')
        [(1, inf), {'k': {2}}]
    """
    global _scan
    if _scan is None:
        from _json import make_scanner

        _scan = make_scanner(_ScanContext())
    value, end = _scan(text, 0)
    if end != len(text):
        raise WireError("text after the value")
    return value


class _ScanContext:
    """What ``_json.make_scanner`` reads from a decoder: strict JSON, tagged objects rebuilt."""

    strict = True
    object_hook = None
    parse_float = float
    parse_int = int
    memo: dict = {}  # noqa: RUF012 - read once by the scanner

    @staticmethod
    def object_pairs_hook(pairs: list) -> object:
        return _untag(pairs)

    @staticmethod
    def parse_constant(name: str) -> object:
        raise WireError(f"{name} is not wire text")


_scan = None


def _untag(pairs: list) -> object:
    ((tag, body),) = pairs
    if tag in _UNTAG:
        return _UNTAG[tag](body)
    if tag == "float":
        return float(body)
    if tag == "int":
        return int(body, 16)
    if tag in ("bytes", "bytearray"):
        data = bytes.fromhex(body)
        return data if tag == "bytes" else bytearray(data)
    if tag == "complex":
        return complex(body[0], body[1])
    raise WireError(f"unknown type tag {tag!r}")


_UNTAG = {"tuple": tuple, "set": set, "frozenset": frozenset, "dict": dict, "iterator": iter}


def raisable_exceptions() -> frozenset[str]:
    """Built-in exception classes a call of the code may raise in the test process, by name.

    Every ``Exception`` subclass of ``builtins`` except ``StopIteration`` and
    ``StopAsyncIteration`` (which would end the test's own loop early: a call that raises one
    arrives as ``RuntimeError``, as it would inside a generator) and the exception groups.

    Example:
        >>> {"ValueError", "KeyError", "AssertionError"} <= raisable_exceptions()
        True
        >>> "StopIteration" in raisable_exceptions() or "SystemExit" in raisable_exceptions()
        False
    """
    import builtins

    banned = {"StopIteration", "StopAsyncIteration", "ExceptionGroup", "BaseExceptionGroup"}
    return frozenset(
        name
        for name, value in vars(builtins).items()
        if isinstance(value, type) and issubclass(value, Exception) and name not in banned
    )


def exception_name(exc: BaseException, allowed: frozenset[str]) -> str:
    """The nearest built-in class of ``exc`` in ``allowed`` (``Exception`` if none is).

    Example:
        >>> class Odd(KeyError):
        ...     pass
        >>> exception_name(Odd(), raisable_exceptions()), exception_name(StopIteration(), {"X"})
        ('KeyError', 'RuntimeError')
    """
    if isinstance(exc, StopIteration | StopAsyncIteration):
        return "RuntimeError"
    for klass in type(exc).__mro__:
        if klass.__module__ == "builtins" and klass.__name__ in allowed:
            return klass.__name__
    return "Exception"


# --------------------------------------------------------------------------------- child side


def _message(exc: BaseException) -> str:
    """``Type: text`` of an exception, never raising (its ``__str__`` is untrusted code)."""
    try:
        text = str(exc)
    except BaseException:
        text = "<unprintable>"
    name = type(exc).__name__
    return (f"{name}: {text}" if text else name)[:MAX_MESSAGE_CHARS]


def _apply_limits(limits: dict[str, int]) -> None:
    """Set each ``RLIMIT_*`` (soft = hard, so the code cannot raise them again)."""
    for name, value in limits.items():
        which = getattr(resource, name, None)
        if which is None:
            continue
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY and hard < value:
            value = hard
        resource.setrlimit(which, (value, value))


def child_main(request: dict[str, object]) -> None:  # pragma: no cover - runs in the child
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
    if request.get("role") == "tester":  # the tests' process: no model-written code in it
        scope = dict(globals())
        exec(request["tester_code"], scope)  # compiled on the host, sent marshalled
        scope["run_test_process"](request, send)
        exit_now(0)
    namespace: dict[str, object] = {
        "__name__": request["module_name"],
        "__builtins__": __builtins__,
    }
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
    if status == "ran" and request.get("serve"):
        send("status ran\n")
        serve(namespace, request["inbox_fd"], send, int(request["max_result_bytes"]))
        exit_now(0)
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


def _make_calls(function: object, calls: list[tuple], max_bytes: int) -> list[str]:
    """One ``result ...`` line per call, in order (every call is made, even after one raised)."""
    lines = []
    for args, kwargs in calls:
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


def _run_script(namespace: dict[str, object], tests: list[str], nonce: str) -> list[str]:
    """Run each test after the code; ``pass NONCE`` only when every one of them finished."""
    for index, test in enumerate(tests):
        try:
            exec(compile(test, f"<test {index}>", "exec", dont_inherit=True), namespace)
        except BaseException as exc:
            return [f"failed {index} " + _encode_string(_message(exc))]
    return ["pass " + nonce]


# --------------------------------------------------------------------------------- serving

#: Most characters of what the code prints during one call that reach the test process.
MAX_CALL_OUTPUT = 65536
#: Operations on an object of the code's class that the test process may ask for by name.
_OPERATIONS = {
    "__len__": len,
    "__bool__": bool,
    "__str__": str,
    "__iter__": iter,
    "__contains__": lambda obj, item: item in obj,
    "__getitem__": lambda obj, key: obj[key],
}


class _Output:
    """Stands in for ``sys.stdout`` during a call: keeps the first characters printed."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.left = MAX_CALL_OUTPUT

    def write(self, text: object) -> int:
        text = str.__str__(text) if isinstance(text, str) else ""
        if self.left > 0:
            self.parts.append(text[: self.left])
            self.left -= len(self.parts[-1])
        return len(text)

    def flush(self) -> None:
        pass


def serve(
    namespace: dict[str, object], inbox_fd: int, send: object, max_bytes: int
) -> None:  # pragma: no cover - runs in the child
    """Answer the host's messages until its end of the inbox closes: one ``reply`` line each.

    ``call [[handle, name], args, kwargs, changed]`` calls the code's ``name`` (a top-level
    callable when ``handle`` is null, else a method of the object the code made under that
    handle) and replies ``["ok", value, arguments, output]``: the value as plain data, the
    arguments listed in ``changed`` as they are after the call (the test process writes them
    back, so in-place changes are seen), what the call printed. A call of one of the code's
    classes replies ``["handle", number, null, output]`` instead. ``["raised", name, text,
    output]`` names the nearest built-in exception class; ``unencodable`` and ``exit`` (the
    call raised ``SystemExit`` or another ``BaseException``) end the run on the host.
    ``lookup [handle, name]`` replies ``["kind", kind, detail, ""]``. A call's optional fifth
    item, ``[[slot, [handle, name]], ...]``, puts the code's own objects (a function or module
    of its that the test passes on) into those argument slots.
    """
    allowed = raisable_exceptions()
    handles: list[object] = []
    chunks: list[bytes] = []
    while True:
        chunk = os.read(inbox_fd, 1 << 20)
        if not chunk:
            return
        chunks.append(chunk)
        if b"\n" not in chunk:  # the host sends one message at a time: it ends a chunk
            continue
        line = b"".join(chunks).decode("utf-8").rstrip("\n")
        chunks.clear()
        kind, _, body = line.partition(" ")
        message = decode_trusted(body)
        if kind == "call":
            reply = _serve_call(namespace, handles, message, max_bytes, allowed)
        else:
            reply = _serve_lookup(namespace, handles, message, max_bytes, allowed)
        send("reply " + reply + "\n")


def _target(namespace: dict[str, object], handles: list[object], base: object, name: str):
    if base is None:
        return namespace[name]
    return getattr(handles[base], name)


def _serve_call(namespace, handles, message, max_bytes, allowed) -> str:
    (base, name), args, kwargs, changed, *refs = message
    output = _Output()
    saved = sys.stdout
    sys.stdout = output
    try:
        for slot, (ref_base, ref_name) in refs[0] if refs else ():  # the code's own objects
            found = _target(namespace, handles, ref_base, ref_name)
            if type(slot) is int:
                args[slot] = found
            else:
                kwargs[slot] = found
        if base is not None and name in _OPERATIONS:
            function = _OPERATIONS[name]
            value = function(handles[base], *args)
        else:
            function = _target(namespace, handles, base, name)
            value = function(*args, **kwargs)
    except Exception as exc:
        return _replied("raised", exception_name(exc, allowed), _text(exc), output)
    except BaseException as exc:
        return _replied("exit", _message(exc), None, output)
    finally:
        sys.stdout = saved
    if isinstance(function, type) and type(value).__module__ != "builtins":
        handles.append(value)
        return _replied("handle", len(handles) - 1, None, output)
    try:
        text = encode_value(value, max_bytes=max_bytes)
    except BaseException as exc:  # WireError, RecursionError, MemoryError, a raising __iter__
        return _replied("unencodable", _message(exc), None, output)
    changed = changed if value is None else []  # only a procedure's changes are its result
    after = [args[key] if type(key) is int else kwargs[key] for key in changed]
    try:
        after_text = encode_value(after, max_bytes=max_bytes - len(text)) if changed else "null"
    except BaseException as exc:
        message = "an argument it changed is no longer plain data: " + _message(exc)
        return _replied("unencodable", message, None, output)
    printed = _encode_string("".join(output.parts))
    return '["ok", ' + text + ", " + after_text + ", " + printed + "]"


def _serve_lookup(namespace, handles, message, max_bytes, allowed) -> str:
    base, name = message
    try:
        if base is None and name not in namespace:
            return '["kind", "missing", null, ""]'
        found = _target(namespace, handles, base, name)
    except AttributeError:
        return '["kind", "missing", null, ""]'
    except Exception as exc:
        return _replied("raised", exception_name(exc, allowed), _text(exc), _Output())
    except BaseException as exc:
        return _replied("exit", _message(exc), None, _Output())
    if isinstance(found, type):
        return '["kind", "class", null, ""]'
    if type(found).__name__ == "module":
        return '["kind", "module", ' + _encode_string(str(found.__name__)) + ', ""]'
    if callable(found):
        return '["kind", "function", null, ""]'
    try:
        return '["kind", "value", ' + encode_value(found, max_bytes=max_bytes) + ', ""]'
    except BaseException:
        return '["kind", "other", ' + _encode_string(type(found).__name__) + ', ""]'


def _text(exc: BaseException) -> str:
    try:
        return str(exc)[:MAX_MESSAGE_CHARS]
    except BaseException:
        return "<unprintable>"


def _replied(kind: str, first: object, second: object, output: _Output) -> str:
    return encode_value([kind, first, second, "".join(output.parts)], max_bytes=1 << 20)


if __name__ == "__main__":  # pragma: no cover - the child's entry point
    child_main(marshal.loads(sys.stdin.buffer.read()))
