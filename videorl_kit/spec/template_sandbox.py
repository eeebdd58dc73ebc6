"""A Jinja sandbox with resource limits: prompt templates cannot hang or blow up memory.

Jinja's own sandbox blocks attribute tricks but not resource exhaustion: nested loops run
for hours and ``'x' * 10**9`` or a doubling loop allocates gigabytes. Like Liquid's render
limits, every render here has a budget (:class:`RenderLimits`), enforced without signals
(so it works in any thread):

* **steps**: each loop iteration, call (macro, method) and filter costs one step;
* **time**: the clock is checked at every step;
* **size**: no value may be longer than ``max_chars`` as text, the output neither, and the
  text produced over the whole render is bounded too; operations that would allocate more
  (``*``, ``**``, ``+``, ``%``, ``~``, ``join``, ``replace``, ``indent``, turning a list
  into text) are refused *before* they run.

To make loops and ``~`` countable, the template's syntax tree is rewritten before it is
compiled: each ``for`` iterates through :meth:`BoundedEnvironment.counted` and each
``~`` calls :meth:`BoundedEnvironment.bounded_concat`. Only the filters in
:data:`ALLOWED_FILTERS` and a short list of read-only ``str``/``dict`` methods are
available; templates cannot load other templates.

Example:
    >>> render_bounded("{% for o in options %}{{ o }};{% endfor %}", {"options": ["A", "B"]})
    'A;B;'
    >>> try:
    ...     render_bounded("{% for a in range(99999) %}{% for b in range(99999) %}"
    ...                    "{% endfor %}{% endfor %}")
    ... except TemplateLimitError as exc:
    ...     print(exc)
    more than 100000 steps (loop iterations, calls and filters)
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache, wraps
from itertools import islice
from typing import Any

from jinja2 import (
    ChainableUndefined,
    Environment,
    StrictUndefined,
    Template,
    TemplateSyntaxError,
    nodes,
)
from jinja2.filters import FILTERS, do_indent, do_tojson, make_attrgetter
from jinja2.nodes import EvalContext
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace, pass_environment, pass_eval_context
from jinja2.visitor import NodeTransformer

from videorl_kit.core.errors import VideoRLKitError


@dataclass(frozen=True)
class RenderLimits:
    """What one render may spend: characters per value and output, steps, seconds."""

    max_chars: int = 1_000_000
    max_steps: int = 100_000
    max_seconds: float = 2.0

    @property
    def max_total_chars(self) -> int:
        """Text produced over one render (values built along the way included)."""
        return 16 * self.max_chars


DEFAULT_LIMITS = RenderLimits()

#: Filters a prompt template may use (each costs one step; sizes are checked).
ALLOWED_FILTERS = frozenset({
    "abs", "attr", "capitalize", "count", "d", "default", "dictsort", "e", "escape",
    "first", "float", "indent", "int", "items", "join", "last", "length", "list", "lower",
    "map", "max", "min", "reject", "rejectattr", "replace", "reverse", "round", "select",
    "selectattr", "sort", "string", "striptags", "title", "tojson", "trim", "truncate",
    "unique", "upper", "wordcount",
})  # fmt: skip
#: Read-only methods a template may call; none can return more text than it was given.
ALLOWED_METHODS: dict[type, frozenset[str]] = {
    str: frozenset({
        "capitalize", "casefold", "count", "endswith", "find", "index", "isalnum",
        "isalpha", "isdigit", "islower", "isnumeric", "isspace", "istitle", "isupper",
        "lower", "lstrip", "partition", "removeprefix", "removesuffix", "replace", "rfind",
        "rindex", "rpartition", "rsplit", "rstrip", "split", "splitlines", "startswith",
        "strip", "swapcase", "title", "upper",
    }),
    dict: frozenset({"get", "items", "keys", "values"}),
    list: frozenset({"count", "index"}),
    tuple: frozenset({"count", "index"}),
    int: frozenset(),  # no (5).to_bytes(10**9)
    float: frozenset(),
}  # fmt: skip
#: Filters that take containers as they are (all others read their input as text).
_CONTAINER_FILTERS = frozenset({
    "attr", "count", "d", "default", "dictsort", "first", "items", "join", "last",
    "length", "list", "map", "max", "min", "reject", "rejectattr", "reverse", "select",
    "selectattr", "sort", "unique",
})  # fmt: skip
#: Longest template text, and most syntax nodes: compiling costs time in proportion.
MAX_TEMPLATE_CHARS = 100_000
MAX_TEMPLATE_NODES = 5_000
_MAX_INT_BITS = 4096
_FORMAT_SPEC = re.compile(r"%[#0 +-]*(\*|\d*)(?:\.(\*|\d*))?")


class TemplateLimitError(VideoRLKitError):
    """A render went over one of its :class:`RenderLimits`."""


class _Budget:
    def __init__(self, limits: RenderLimits) -> None:
        self.limits = limits
        self.steps = limits.max_steps
        self.chars = limits.max_total_chars
        self.deadline = time.monotonic() + limits.max_seconds


_BUDGET: ContextVar[_Budget | None] = ContextVar("videorl_kit_template_budget", default=None)


def _limits() -> RenderLimits:
    budget = _BUDGET.get()
    return budget.limits if budget is not None else DEFAULT_LIMITS


def _step() -> None:
    budget = _BUDGET.get()
    if budget is None:  # constant folding while compiling: sizes are still checked
        return
    budget.steps -= 1
    if budget.steps < 0:
        limit = budget.limits.max_steps
        raise TemplateLimitError(f"more than {limit} steps (loop iterations, calls and filters)")
    if time.monotonic() > budget.deadline:
        raise TemplateLimitError(f"took longer than {budget.limits.max_seconds:g} s")


def _refuse_longer(size: int, what: str = "a value") -> None:
    limit = _limits().max_chars
    if size > limit:
        raise TemplateLimitError(f"{what} would be longer than {limit} characters")


def text_size(value: Any, cap: int | None = None) -> int:
    """An upper estimate of ``len(str(value))``, computed without building the text.

    Stops counting once past ``cap`` (default: the current ``max_chars``), so a list of a
    thousand references to one long string costs nothing to measure.

    Example:
        >>> text_size("abc"), text_size(["ab", 1]) >= len(str(["ab", 1]))
        (3, True)
    """
    if isinstance(value, str):
        return len(value)
    cap = _limits().max_chars if cap is None else cap
    total, pending = 0, [value]
    while pending and total <= cap:
        item = pending.pop()
        if isinstance(item, str):  # as repr() shows it inside a container
            escapes = item.count("\\") + item.count("'") if item.isprintable() else 9 * len(item)
            total += len(item) + escapes + 2
        elif isinstance(item, dict):
            total += 2 + 4 * len(item)
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            total += 2 + 2 * len(item)
            pending.extend(item)
        elif isinstance(item, Namespace):  # its text shows everything assigned to it
            total += 16
            pending.append(dict(object.__getattribute__(item, "_Namespace__attrs")))
        elif isinstance(item, int) and not isinstance(item, bool):
            total += item.bit_length() // 3 + 2
        else:
            total += 64
    return total


def _checked(value: Any) -> Any:
    """Charge ``value``'s size to the render and refuse it if it is too long."""
    if isinstance(value, str | list | tuple | dict):
        size = len(value)
        _refuse_longer(size)
        budget = _BUDGET.get()
        if budget is not None:
            budget.chars -= size
            if budget.chars < 0:
                total = budget.limits.max_total_chars
                raise TemplateLimitError(f"built more than {total} characters of text in total")
    return value


def _check_binop(operator: str, left: Any, right: Any) -> None:
    if operator == "**" and isinstance(left, int) and isinstance(right, int):
        if max(abs(left), 2).bit_length() * abs(right) > _MAX_INT_BITS:  # floats overflow fast
            raise TemplateLimitError(f"a number would have more than {_MAX_INT_BITS} bits")
    elif operator == "*":
        sequence, count = (left, right) if isinstance(right, int) else (right, left)
        if isinstance(sequence, str | list | tuple) and isinstance(count, int):
            _refuse_longer(len(sequence) * max(count, 0))
        elif (
            isinstance(left, int)
            and isinstance(right, int)
            and left.bit_length() + right.bit_length() > _MAX_INT_BITS
        ):
            raise TemplateLimitError(f"a number would have more than {_MAX_INT_BITS} bits")
    elif operator == "+" and isinstance(left, str | list | tuple):
        if isinstance(right, str | list | tuple):
            _refuse_longer(len(left) + len(right))
    elif operator == "%" and isinstance(left, str):
        for match in _FORMAT_SPEC.finditer(left):
            for number in match.groups():
                if number == "*" or (number and int(number) > _limits().max_chars):
                    raise TemplateLimitError("a '%' format width is too large")
        _refuse_longer(len(left) + text_size(right))


def _guard_filter(name: str, function: Any) -> Any:
    """``function`` counting one step, checking its input text and its result."""
    reads_text = name not in _CONTAINER_FILTERS

    @wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        _step()
        if reads_text:
            value = next((a for a in args if not _is_jinja_state(a)), None)
            _refuse_longer(text_size(value), f"the input of '{name}'")
        return _checked(function(*args, **kwargs))

    return guarded


def _is_jinja_state(value: Any) -> bool:
    return isinstance(value, EvalContext | Context | Environment)


@pass_environment
def _join(environment: Any, value: Iterable[Any], d: str = "", attribute: Any = None) -> str:
    """``join`` that stops as soon as the joined text would be too long."""
    if attribute is not None:
        value = map(make_attrgetter(environment, attribute), value)
    separator, parts, size = str(d), [], 0
    for item in value:
        _refuse_longer(text_size(item), "a joined item")
        text = str(item)
        size += len(text) + len(separator)
        _refuse_longer(size, "the joined text")
        parts.append(text)
    return separator.join(parts)


def _replace(s: Any, old: Any, new: Any, count: int | None = None) -> str:
    """``replace`` whose result size is computed before it is built."""
    s, old, new = str(s), str(old), str(new)
    hits = s.count(old) if old else len(s) + 1
    if count is not None and count >= 0:
        hits = min(hits, count)
    _refuse_longer(len(s) + hits * (len(new) - len(old)), "the replaced text")
    return s.replace(old, new, -1 if count is None else count)


def _indent(s: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    text = str(s)
    indention = len(width) if isinstance(width, str) else max(int(width), 0)
    _refuse_longer(len(text) + (text.count("\n") + 1) * indention, "the indented text")
    return do_indent(text, width, first, blank)


@pass_eval_context
def _tojson(eval_ctx: Any, value: Any, indent: int | None = None) -> Any:
    if indent is not None and not 0 <= indent <= 8:
        raise TemplateLimitError("tojson indent must be between 0 and 8")
    return do_tojson(eval_ctx, value, indent)


_OWN_FILTERS = {"join": _join, "replace": _replace, "indent": _indent, "tojson": _tojson}


class _CountLoopsAndConcat(NodeTransformer):
    """Route every ``for`` iterable and every ``~`` through the environment's counters."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = _environment_call("counted", [node.iter], node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _environment_call("bounded_concat", list(node.nodes), node.lineno)


def _environment_call(name: str, args: list[nodes.Expr], lineno: int) -> nodes.Call:
    function = nodes.EnvironmentAttribute(name, lineno=lineno)
    return nodes.Call(function, args, [], None, None, lineno=lineno)


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox plus the budgets described in the module docstring."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, *, strict: bool = True) -> None:
        super().__init__(
            undefined=StrictUndefined if strict else ChainableUndefined,
            keep_trailing_newline=True,
            autoescape=False,
            finalize=self._finalize,
        )
        self.filters = {
            name: _guard_filter(name, _OWN_FILTERS.get(name, FILTERS[name]))
            for name in ALLOWED_FILTERS
        }
        self.globals.pop("lipsum", None)

    @staticmethod
    def _finalize(value: Any) -> Any:
        _refuse_longer(text_size(value), "an output value")
        return value

    def concat(self, parts: Iterable[str]) -> str:  # type: ignore[override]
        """Join rendered pieces (macro bodies, ``set`` blocks), refusing too long a result."""
        return _join(self, parts)

    def counted(self, iterable: Iterable[Any]) -> Iterator[Any]:
        """Iterate ``iterable`` at one step per item (every ``for`` loop goes through here)."""
        for item in iterable:
            _step()
            yield item

    def bounded_concat(self, *parts: Any) -> str:
        """The ``~`` operator with its result size checked before it is built."""
        return _checked(_join(self, parts))

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _step()
        _check_binop(operator, left, right)
        return _checked(super().call_binop(context, operator, left, right))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _step()
        if getattr(__obj, "__name__", None) == "replace" and isinstance(
            getattr(__obj, "__self__", None), str
        ):
            return _checked(_replace(__obj.__self__, *args, **kwargs))
        return _checked(super().call(__context, __obj, *args, **kwargs))

    def wrap_str_format(self, value: Any) -> None:
        """``str.format`` is not offered at all (a width such as ``{:>999999999}`` allocates
        before anything can check it); Jinja's sandbox would otherwise hand out a wrapper."""
        return None

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if not super().is_safe_attribute(obj, attr, value):
            return False
        allowed = next((m for t, m in ALLOWED_METHODS.items() if isinstance(obj, t)), None)
        return allowed is None or attr in allowed or not callable(value)


class TemplateProblem(VideoRLKitError):
    """A template that cannot be used; ``summary`` never quotes the template's text."""

    def __init__(self, summary: str, detail: str = "") -> None:
        self.summary = summary
        self.detail = detail
        super().__init__(f"{summary}: {detail}" if detail else summary)


def _check_nodes(tree: nodes.Template) -> None:
    if next(islice(tree.find_all(nodes.Node), MAX_TEMPLATE_NODES, None), None) is not None:
        raise TemplateProblem(f"template has more than {MAX_TEMPLATE_NODES} expressions and tags")
    for node in tree.find_all((nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)):
        raise TemplateProblem(f"templates cannot load other templates (line {node.lineno})")
    for loop in tree.find_all(nodes.For):
        if loop.recursive:
            raise TemplateProblem(f"recursive loops are not allowed (line {loop.lineno})")
    for used in tree.find_all(nodes.Filter):
        if used.name not in ALLOWED_FILTERS:
            raise TemplateProblem(
                f"filter not allowed on template line {used.lineno}",
                f"{used.name!r} (allowed: {', '.join(sorted(ALLOWED_FILTERS))})",
            )


@lru_cache(maxsize=2)
def _environment(strict: bool) -> BoundedEnvironment:
    return BoundedEnvironment(strict=strict)


@lru_cache(maxsize=256)
def compile_template(text: str, strict: bool = True) -> Template:
    """Parse, check and compile ``text``; raises :class:`TemplateProblem`.

    Example:
        >>> compile_template("{{ question|upper }}").render(question="why?")
        'WHY?'
        >>> try:
        ...     compile_template("{% include 'x' %}")
        ... except TemplateProblem as exc:
        ...     print(exc)
        templates cannot load other templates (line 1)
    """
    if len(text) > MAX_TEMPLATE_CHARS:
        raise TemplateProblem(f"template longer than {MAX_TEMPLATE_CHARS} characters")
    environment = _environment(strict)
    try:
        tree = environment.parse(text)
        _check_nodes(tree)
        return environment.from_string(_CountLoopsAndConcat().visit(tree))
    except TemplateSyntaxError as exc:
        raise TemplateProblem(
            f"template syntax error on template line {exc.lineno}", exc.message or ""
        ) from None
    except RecursionError:
        raise TemplateProblem("template nests too deeply") from None


def render_bounded(
    text: str,
    variables: dict[str, Any] | None = None,
    limits: RenderLimits = DEFAULT_LIMITS,
    *,
    strict: bool = True,
) -> str:
    """Render ``text`` with ``variables`` within ``limits``.

    Raises :class:`TemplateProblem` (the template does not compile), :class:`TemplateLimitError`
    (a limit was reached) or whatever the template itself raised (an undefined variable,
    a sandbox violation, a type error). ``strict=False`` renders undefined names as empty.

    Example:
        >>> try:
        ...     render_bounded("{{ 'ab' * 10**8 }}")
        ... except TemplateLimitError as exc:
        ...     print(exc)
        a value would be longer than 1000000 characters
    """
    template = compile_template(text, strict)
    token = _BUDGET.set(_Budget(limits))
    try:
        pieces, size = [], 0
        for piece in template.generate(variables or {}):
            size += len(piece)
            if size > limits.max_chars:
                raise TemplateLimitError(f"output longer than {limits.max_chars} characters")
            pieces.append(piece)
        return "".join(pieces)
    except RecursionError:
        raise TemplateLimitError("calls nest too deeply (a macro calling itself?)") from None
    finally:
        _BUDGET.reset(token)
