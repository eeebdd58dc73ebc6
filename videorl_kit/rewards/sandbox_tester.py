"""What runs in the test process: a ground truth's tests against a proxy of the answer's code.

Tests that are not plain calls (loops over cases, HumanEval's ``def check(candidate): ...;
check(f)``, unittest classes) run here, in a sandboxed interpreter of their own that holds no
model-written code. Every name the tests use and do not define themselves (the entry point,
the answer's other functions and classes) is a proxy: calling it sends the arguments, as plain
data, to the answer's own sandboxed process (through the host, which checks every message), and
what comes back is plain data again (``None``, booleans, numbers, strings, bytes and containers
of them, strictly checked on the host), an exception of a built-in class, or, for a call of one
of the answer's classes, a handle whose methods are proxies in turn. The tests' comparisons,
``abs``, ``all``, ``unittest`` and every other built-in are this process's own.

A test that needs more than that is *refused* (the verdict is ``refused``, never a pass or a
fail): passing a function or another object of its own to the code, reading an attribute of the
code's function, changing an attribute of one of its objects. A refusal that a test catches is
still recorded. What the code makes of a name (an object that is not data, a module this process
must not import, an object of its class passed back to it) is the code's choice, so it fails the
test instead: a wrong answer cannot turn its 0 into a refusal.

The host sends this file's source in the request; the sandbox runner execs it with its own
helpers (``encode_value``, ``decode_trusted``, ``_message``) already defined, and calls
:func:`run_test_process`. The report is ``done`` with one wire value, then ``end``:
``["pass", calls]``, ``["failed", index, message]`` or ``["refused", message]``.

Example:
    >>> encode_value(["failed", 2, "AssertionError"], max_bytes=100)
    '["failed", 2, "AssertionError"]'
"""

from __future__ import annotations

import builtins
import os
import sys

try:  # noqa: SIM105 - contextlib would cost the tests' process 3 ms of start-up
    from videorl_kit.rewards.sandbox_child import (
        MAX_MESSAGE_CHARS,
        WireError,
        _message,
        decode_trusted,
        encode_value,
    )
except ImportError:  # pragma: no cover - in the test process the runner defines these names
    pass

#: Types of arguments whose changes by the code are written back after a call.
_MUTABLE = (list, dict, set, bytearray)
#: Standard modules a test may use without importing them (it relied on the answer's import).
IMPLICIT_MODULES = frozenset(
    {
        "math", "cmath", "re", "collections", "itertools", "functools", "operator", "string",
        "heapq", "bisect", "random", "statistics", "fractions", "decimal", "datetime", "json",
        "copy", "typing", "array",
    }
)  # fmt: skip


#: Attributes of a function that show its insides: reading one is refused, not missing.
_INTERNALS = frozenset(
    {
        "__code__", "__defaults__", "__kwdefaults__", "__globals__", "__closure__", "__dict__",
        "__annotations__", "__self__", "__func__", "__wrapped__",
    }
)  # fmt: skip


class Refused(BaseException):
    """The test needs something that cannot cross between the two processes."""


class _Session:
    """The test process's side of the relay: one message out, one reply back, in turn."""

    def __init__(self, request: dict, send) -> None:
        self.send = send
        self.inbox = request["inbox_fd"]
        self.max_bytes = int(request["max_arg_bytes"])
        self.refused_modules = frozenset(request["refused_modules"])
        self.test_names = frozenset(request.get("test_names", ()))
        self.entry_point_objects = bool(request.get("entry_point_objects"))
        self.entry_point = request["entry_point"]
        self.calls = 0
        self.refusal: str | None = None
        self.code_modules: dict[int, list] = {}  # id of a module the code named -> [None, name]

    def refuse(self, reason: str) -> Refused:
        if self.refusal is None:
            self.refusal = reason[:MAX_MESSAGE_CHARS]
        return Refused(reason)

    def ask(self, kind: str, message: object) -> list:
        """Send one message (a value, or its wire text) and wait for the reply."""
        text = message if type(message) is str else encode_value(message, max_bytes=1 << 16)
        self.send(kind + " " + text + "\n")
        chunks: list[bytes] = []
        while not chunks or b"\n" not in chunks[-1]:  # one reply at a time: it ends a chunk
            chunk = os.read(self.inbox, 1 << 20)
            if not chunk:
                raise SystemExit("the host closed the relay")
            chunks.append(chunk)
        kind, _, body = b"".join(chunks).decode("utf-8").rstrip("\n").partition(" ")
        if kind != "reply":
            raise SystemExit("unexpected message from the host")
        return decode_trusted(body)

    def call(self, ref: list, label: str, args: tuple, kwargs: dict) -> object:
        changed = [i for i, a in enumerate(args) if type(a) in _MUTABLE]
        changed += [k for k, v in kwargs.items() if type(v) in _MUTABLE]
        sent, sent_kwargs, refs = list(args), dict(kwargs), []
        for slot, value in [*enumerate(args), *kwargs.items()]:  # the code's own names go back
            own = self._own(value)  # as names: only the code's process holds what they are
            if own is not None:
                refs.append([slot, own])
                if type(slot) is int:
                    sent[slot] = None
                else:
                    sent_kwargs[slot] = None
        message = [ref, sent, sent_kwargs, changed] + ([refs] if refs else [])
        other = _not_plain([*sent, *sent_kwargs.values()])
        if other == "handle":  # only the code's own classes make these: its choice, its failure
            raise TypeError(f"an object of the code's cannot be passed to {label}() here")
        if other is not None:
            raise self.refuse(
                f"a test passes something other than plain data to {label}() (a {other})"
            )
        try:
            text = encode_value(message, max_bytes=self.max_bytes)
        except WireError as exc:
            raise OverflowError(f"the arguments of {label}() cannot be sent: {exc}") from None
        self.calls += 1
        kind, first, second, printed = self.ask("call", text)
        if printed:
            sys.stdout.write(printed)
        if kind == "ok":
            if first is None:  # a procedure: its changes to the arguments are its result
                for key, value in zip(changed, second or (), strict=False):
                    _write_back(args[key] if type(key) is int else kwargs[key], value)
            return first
        if kind == "handle":
            if ref == [None, self.entry_point] and not self.entry_point_objects:
                # the function under test returns data (a class under test is declared)
                raise TypeError(f"{label}() returned an object of the code's class, not data")
            return _Handle(first, f"{label}()")
        raise _rebuilt(first, second)

    def _own(self, value: object) -> list | None:
        """``[handle, name]`` when ``value`` is one of the code's callables or a module the code
        named, which a call sends back by name; else ``None``."""
        if type(value) is _Remote:
            return value._ref
        if type(value) is type(sys):
            return self.code_modules.get(id(value))
        return None

    def lookup(self, base: int | None, name: str, label: str) -> object:
        tag, kind, detail, _ = self.ask("lookup", [base, name])
        if tag == "raised":
            raise _rebuilt(kind, detail)
        if kind == "missing":
            raise KeyError(name)
        if kind in ("function", "class"):
            return _Remote([base, name], label)
        if kind == "value":
            return detail
        # What the code made of the name is the code's choice: a failure, never a refusal
        # (that would let a wrong answer turn its 0 into an unverifiable result).
        if kind == "module" and detail.split(".")[0] not in self.refused_modules:
            try:
                module = __import__(detail, fromlist=["_"])
            except ImportError:
                raise KeyError(name) from None
            self.code_modules.setdefault(id(module), [base, name])
            return module
        what = f"module {detail}" if kind == "module" else f"object of type {detail}"
        raise TypeError(f"{label} is the code's {what}, which cannot cross to the tests")


_SESSION: _Session


def _rebuilt(name: str, text: str) -> BaseException:
    """A fresh instance of the built-in exception class ``name`` (its nearest constructible one)."""
    for klass in getattr(builtins, name).__mro__:
        try:
            return klass(text)
        except TypeError:
            continue
    return Exception(text)  # pragma: no cover - every chain ends at Exception


_ATOMIC = frozenset({type(None), bool, int, float, complex, str, bytes, bytearray})


def _named(items: list) -> bool:
    """Whether ``items`` hold a module that the tests took from the code's names."""
    return any(id(item) in _SESSION.code_modules for item in items if type(item) is type(sys))


def _not_plain(values: list) -> str | None:
    """The first value in ``values`` (nested) that is not exactly a plain type, as ``value of
    type X`` (a subclass such as a namedtuple counts: the code would get its base type), or
    ``None``. Iterators are drawn and sent as their items."""
    pending = [values]
    while pending:
        items = pending.pop()
        for kind in set(map(type, items)) - _ATOMIC:  # a C loop over the items
            if kind in (list, tuple, set, frozenset):
                pending.extend(item for item in items if type(item) is kind)
            elif kind is dict:
                for item in items:
                    if type(item) is dict:
                        pending += (list(item.keys()), list(item.values()))
            elif kind in (_Handle, _Remote) or (kind is type(sys) and _named(items)):
                return "handle"  # the code's own (inside a container): its choice, its failure
            elif not (hasattr(kind, "__next__") and hasattr(kind, "__iter__")):
                return f"value of type {kind.__name__}"
    return None


def _write_back(old: object, new: object) -> None:
    """Give ``old`` the contents of ``new`` in place, keeping the identity of inner containers
    whose type did not change (a test may hold one of them)."""
    if type(old) is list and type(new) is list:
        old[:] = [_kept(o, n) for o, n in zip(old, new, strict=False)] + new[len(old) :]
    elif type(old) is dict and type(new) is dict:
        merged = {k: _kept(old[k], v) if k in old else v for k, v in new.items()}
        old.clear()
        old.update(merged)
    elif type(old) is set and type(new) is set:
        old.clear()
        old.update(new)
    elif type(old) is bytearray and type(new) in (bytes, bytearray):
        old[:] = new


def _kept(old: object, new: object) -> object:
    if type(old) is type(new) and type(old) in _MUTABLE:
        _write_back(old, new)
        return old
    return new


class _Remote:
    """One of the code's callables: calling it is a call in the code's process."""

    __slots__ = ("_label", "_ref")

    def __init__(self, ref: list, label: str) -> None:
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_label", label)

    def __call__(self, *args: object, **kwargs: object) -> object:
        return _SESSION.call(self._ref, self._label, args, kwargs)

    def __getattr__(self, name: str) -> object:
        if name in ("__name__", "__qualname__"):  # read for messages (unittest's assertRaises)
            return self._label.rpartition(".")[2]
        if name.startswith("__") and name not in _INTERNALS:  # a protocol probe: not there
            raise AttributeError(name)
        raise _SESSION.refuse(f"a test reads {self._label}.{name}: only calls reach the code")

    def __setattr__(self, name: str, value: object) -> None:
        raise _SESSION.refuse(f"a test sets {self._label}.{name}: only calls reach the code")

    def __repr__(self) -> str:
        return f"<the code's {self._label}>"


class _Handle:
    """An object one of the code's classes made: its attributes are looked up in the code's
    process, its methods are proxies, and a few operations (``len``, ``bool``, ``str``,
    ``iter``, ``in``, ``[]``) are calls that return plain data."""

    __slots__ = ("_label", "_number")

    def __init__(self, number: int, label: str) -> None:
        object.__setattr__(self, "_number", number)
        object.__setattr__(self, "_label", label)

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return _SESSION.lookup(self._number, name, f"{self._label}.{name}")
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: object) -> None:
        raise _SESSION.refuse(f"a test sets {self._label}.{name}: only calls reach the code")

    def _operation(self, name: str, *args: object) -> object:
        return _SESSION.call([self._number, name], f"{self._label}.{name}", args, {})

    def __len__(self) -> int:
        return self._operation("__len__")

    def __bool__(self) -> bool:
        return self._operation("__bool__")

    def __str__(self) -> str:
        return self._operation("__str__")

    def __iter__(self):
        return iter(self._operation("__iter__"))

    def __contains__(self, item: object) -> bool:
        return self._operation("__contains__", item)

    def __getitem__(self, key: object) -> object:
        return self._operation("__getitem__", key)

    def __repr__(self) -> str:
        return f"<object made by the code's {self._label}>"

    def __eq__(self, other: object) -> bool:  # identity, never NotImplemented (truthy)
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    __hash__ = object.__hash__


class _Names(dict):
    """The tests' globals: a name they do not define is looked up in the code's process."""

    def __missing__(self, name: str) -> object:
        if name.startswith("__") or (hasattr(builtins, name) and name != _SESSION.entry_point):
            raise KeyError(name)
        if name in _SESSION.test_names:  # bound by another test string: never the code's
            raise _SESSION.refuse(
                f"a test uses {name}, which another test binds: bind it in the same test"
            )
        implicit = name in IMPLICIT_MODULES  # a module the tests relied on the code importing
        value = __import__(name) if implicit else _SESSION.lookup(None, name, name)
        self[name] = value
        return value


def run_test_process(request: dict, send) -> None:  # pragma: no cover - runs in the test process
    """Run the request's tests in order, then send ``done`` and ``end``."""
    global _SESSION
    _SESSION = _Session(request, send)
    entry_point = request["entry_point"]  # the code's, even where it shadows a built-in
    names = _Names(
        {k: v for k, v in vars(builtins).items() if not k.startswith("__") and k != entry_point}
    )
    names.update(__name__="__main__", __builtins__=builtins)  # builtins found without a miss
    verdict: list | None = None
    for index, source in enumerate(request["tests"]):
        try:
            exec(compile(source, f"<test {index}>", "exec", dont_inherit=True), names)
        except BaseException as exc:
            if _SESSION.refusal is None:
                verdict = ["failed", index, _message(exc)]
            break
        if _SESSION.refusal is not None:  # a test caught it: still refused
            break
    if _SESSION.refusal is not None:
        verdict = ["refused", _SESSION.refusal]
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - a test may have replaced the streams
            stream.flush()
        except BaseException:
            pass
    send("done " + encode_value(verdict or ["pass", _SESSION.calls], max_bytes=1 << 16) + "\n")
    send("end\n")
