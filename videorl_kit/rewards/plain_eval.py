"""Evaluate a test's assertions on plain data, in the trusted process, with bounded work.

A code test such as ``assert abs(f(2) - 1.5) < 1e-6`` is decided here, after the sandbox has
sent back what ``f(2)`` returned as plain data (numbers, strings, lists, tuples, dicts, sets,
bytes, booleans, None). This module is a small interpreter for the part of Python that tests
are written in: literals, names bound earlier in the test, arithmetic, comparisons (chained),
``and``/``or``/``not``, conditional expressions, subscripts and slices, f-strings,
comprehensions, a fixed set of built-in functions (``abs``, ``len``, ``sorted``, ``round``,
``isinstance``, ...), ``math`` functions, and methods of the plain types (``str.lower``,
``dict.items``, ...). Every operation is Python's own on real built-in values, so the verdict
is exactly what Python would say; nothing the model wrote runs here.

Work is bounded because the values come from an adversary: repetition (``s * n``), powers,
shifts, padding widths, ``replace`` growth and ``range`` lengths are checked before they
allocate; multiplying or dividing two huge integers, and sets or dicts built from many distinct
values with one hash (each insertion would compare with all of them), are refused before they
run; ``sum`` with a non-numeric start and ``%``-formatting of strings are not evaluated; and a
step budget plus a deadline stop comprehensions that would run for too long. A test that
hits a bound fails (:class:`EvalLimit`). Python outside this subset (``str.format``, lambdas,
loops, other modules) is :class:`NotEvaluable`: such a test runs some other way.

Example:
    >>> import ast
    >>> tree = ast.parse("assert sorted(r) == [1, 2] and abs(x - 0.5) < 1e-9")
    >>> Evaluator().run(tree.body, {"r": [2, 1], "x": 0.5})
    >>> Evaluator().run(ast.parse("assert 'a' * 10 ** 12").body, {})
    Traceback (most recent call last):
    ...
    videorl_kit.rewards.plain_eval.EvalLimit: a sequence of 1000000000000 items is too large
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
import time
import types
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from videorl_kit.core.errors import VideoRLKitError

#: Largest sequence (items or characters) an operation may build.
MAX_ITEMS = 10_000_000
#: Largest integer (in bits) a power or shift may build.
MAX_BITS = 1 << 20
#: Largest product of two integers' sizes (bits) that ``*``, ``//``, ``%``, ``divmod`` and
#: ``math.gcd`` may combine (their cost grows with the product: about 0.1 s at this bound).
MAX_BITS_PRODUCT = 1 << 34
#: Most distinct values with one hash that a set or dict may be built from.
MAX_EQUAL_HASHES = 8
#: Expression nodes one test may evaluate, and the wall-clock budget of one evaluation.
MAX_STEPS = 200_000
MAX_SECONDS = 2.0
_CLOCK_EVERY = 16  # steps between deadline checks (one step can be a C loop over 1 MB of data)

PLAIN_TYPES: tuple[type, ...] = (
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    bytearray,
    list,
    tuple,
    dict,
    set,
    frozenset,
    type(None),
)

#: Built-in functions and types a test may use by name.
BUILTINS: dict[str, Any] = {
    name: getattr(builtins, name)
    for name in [
        "abs", "all", "any", "bin", "bool", "bytearray", "bytes", "chr", "complex", "dict",
        "divmod", "enumerate", "float", "frozenset", "hex", "int", "isinstance", "len", "list",
        "max", "min", "oct", "ord", "range", "repr", "reversed", "round", "set", "sorted", "str",
        "sum", "tuple", "type", "zip",
    ]
}  # fmt: skip
#: ``math`` functions and constants a test may use.
MATH: dict[str, Any] = {
    name: getattr(math, name)
    for name in [
        "isclose", "isnan", "isinf", "isfinite", "sqrt", "floor", "ceil", "fabs", "trunc", "log",
        "log2", "log10", "exp", "fsum", "gcd", "hypot", "copysign", "pi", "e", "tau", "inf", "nan",
    ]
}  # fmt: skip
#: Methods of the plain types a test may call (the receiver's exact type must have them).
METHODS = frozenset([
    "lower", "upper", "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith",
    "endswith", "count", "find", "rfind", "index", "rindex", "isdigit", "isalpha", "isalnum",
    "isspace", "islower", "isupper", "isnumeric", "isdecimal", "istitle", "casefold", "title",
    "capitalize", "swapcase", "partition", "rpartition", "replace", "join", "encode", "decode",
    "hex", "removeprefix", "removesuffix", "zfill", "ljust", "rjust", "center", "keys", "values",
    "items", "get", "issubset", "issuperset", "isdisjoint", "union", "intersection",
    "difference", "symmetric_difference", "copy",
])  # fmt: skip
_WIDTH_METHODS = frozenset(("zfill", "ljust", "rjust", "center"))

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.Not: operator.not_,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}

#: Expression and statement nodes the evaluator understands (anything else: not evaluable).
SUPPORTED_NODES: frozenset[type[ast.AST]] = frozenset(
    {
        ast.Module,
        ast.Assert,
        ast.Assign,
        ast.Expr,
        ast.Pass,
        ast.Import,
        ast.ImportFrom,
        ast.alias,
        ast.Constant,
        ast.Name,
        ast.Load,
        ast.Store,
        ast.Tuple,
        ast.List,
        ast.Set,
        ast.Dict,
        ast.UnaryOp,
        ast.BinOp,
        ast.BoolOp,
        ast.And,
        ast.Or,
        ast.Compare,
        ast.IfExp,
        ast.Subscript,
        ast.Slice,
        ast.Attribute,
        ast.Call,
        ast.keyword,
        ast.JoinedStr,
        ast.FormattedValue,
        ast.GeneratorExp,
        ast.ListComp,
        ast.SetComp,
        ast.DictComp,
        ast.comprehension,
        *_BINARY,
        *_UNARY,
        *_COMPARE,
    }
)


class EvalLimit(VideoRLKitError):
    """The test needs more work or memory than the evaluator allows (the test fails)."""


class NotEvaluable(VideoRLKitError):
    """The test uses Python the evaluator does not handle (it must run some other way)."""


class _Step:
    """The step budget and deadline of one evaluation."""

    __slots__ = ("deadline", "left")

    def __init__(self, steps: int, deadline: float) -> None:
        self.left = steps
        self.deadline = deadline

    def take(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise EvalLimit("the test needs too many evaluation steps")
        if self.left % _CLOCK_EVERY == 0 and time.monotonic() > self.deadline:
            raise EvalLimit("the test takes too long to evaluate")


class Evaluator:
    """Runs test statements on plain values; entry-point calls go to ``entry_call``.

    ``entry_call(node)`` returns the value of one call of the entry point (``node`` is its
    ``ast.Call``) or raises what the call raised. Statements: ``assert``, ``NAME = ...``
    (also tuple targets), bare expressions, ``pass`` and ``import math`` /
    ``from math import ...``. A failed ``assert`` raises ``AssertionError``; any other exception
    is what Python would have raised (either way, the test fails). ``deadline`` (a
    ``time.monotonic()`` value) can be shared by several evaluators; by default it is
    :data:`MAX_SECONDS` from now.

    Example:
        >>> import ast
        >>> env = {}
        >>> Evaluator().run(ast.parse("x = [1, 2]\\ny = {k: k * 2 for k in x}").body, env)
        >>> env["y"]
        {1: 2, 2: 4}
    """

    def __init__(
        self,
        entry_point: str | None = None,
        entry_call: Callable[[ast.Call], Any] | None = None,
        *,
        max_steps: int = MAX_STEPS,
        deadline: float | None = None,
    ) -> None:
        self.entry_point = entry_point
        self.entry_call = entry_call
        self._budget = _Step(max_steps, deadline or time.monotonic() + MAX_SECONDS)

    # ------------------------------------------------------------------ statements

    def run(self, statements: list[ast.stmt], env: dict[str, Any]) -> None:
        """Run ``statements`` in order, binding names in ``env``."""
        for statement in statements:
            self.run_statement(statement, env)

    def run_statement(self, statement: ast.stmt, env: dict[str, Any]) -> None:
        """Run one statement (see the class docstring for which ones)."""
        if isinstance(statement, ast.Assert):
            if not self.eval(statement.test, env):
                raise AssertionError("assertion failed")
        elif isinstance(statement, ast.Assign):
            value = self.eval(statement.value, env)
            for target in statement.targets:
                bind(target, value, env)
        elif isinstance(statement, ast.Expr):
            self.eval(statement.value, env)
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            env.update(math_imports(statement))
        elif not isinstance(statement, ast.Pass):
            raise NotEvaluable(f"{type(statement).__name__} statements are not evaluated")

    # ------------------------------------------------------------------ expressions

    def eval(self, node: ast.expr, env: Mapping[str, Any]) -> Any:
        """The value of expression ``node`` with names from ``env``."""
        self._budget.take()
        if type(node) not in SUPPORTED_NODES:
            raise NotEvaluable(f"{type(node).__name__} expressions are not evaluated")
        return getattr(self, "_" + type(node).__name__)(node, env)

    def _Constant(self, node: ast.Constant, env: Mapping[str, Any]) -> Any:
        return node.value

    def _Name(self, node: ast.Name, env: Mapping[str, Any]) -> Any:
        if node.id in env:
            return env[node.id]
        if node.id in BUILTINS:
            return BUILTINS[node.id]
        if node.id == "math":  # tests often rely on the answer having imported it
            return _MATH_MODULE
        raise NotEvaluable(f"name {node.id!r} is not defined in the test")

    def _Tuple(self, node: ast.Tuple, env: Mapping[str, Any]) -> Any:
        return tuple(self._items(node.elts, env))

    def _List(self, node: ast.List, env: Mapping[str, Any]) -> Any:
        return self._items(node.elts, env)

    def _Set(self, node: ast.Set, env: Mapping[str, Any]) -> Any:
        return set(self._items(node.elts, env))

    def _Dict(self, node: ast.Dict, env: Mapping[str, Any]) -> Any:
        result = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                raise NotEvaluable("** in a dict display is not evaluated")
            result[self.eval(key, env)] = self.eval(value, env)
        return result

    def _items(self, nodes: list[ast.expr], env: Mapping[str, Any]) -> list[Any]:
        return [self.eval(item, env) for item in nodes]

    def _UnaryOp(self, node: ast.UnaryOp, env: Mapping[str, Any]) -> Any:
        return _UNARY[type(node.op)](self.eval(node.operand, env))

    def _BinOp(self, node: ast.BinOp, env: Mapping[str, Any]) -> Any:
        left, right = self.eval(node.left, env), self.eval(node.right, env)
        check_binary(type(node.op), left, right)
        return _BINARY[type(node.op)](left, right)

    def _BoolOp(self, node: ast.BoolOp, env: Mapping[str, Any]) -> Any:
        value: Any = None
        for operand in node.values:
            value = self.eval(operand, env)
            if isinstance(node.op, ast.And) != bool(value):  # and: stop at falsy; or: truthy
                return value
        return value

    def _Compare(self, node: ast.Compare, env: Mapping[str, Any]) -> Any:
        left = self.eval(node.left, env)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.eval(comparator, env)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def _IfExp(self, node: ast.IfExp, env: Mapping[str, Any]) -> Any:
        return self.eval(node.body if self.eval(node.test, env) else node.orelse, env)

    def _Subscript(self, node: ast.Subscript, env: Mapping[str, Any]) -> Any:
        return self.eval(node.value, env)[self.eval(node.slice, env)]

    def _Slice(self, node: ast.Slice, env: Mapping[str, Any]) -> Any:
        parts = (node.lower, node.upper, node.step)
        return slice(*(None if part is None else self.eval(part, env) for part in parts))

    def _JoinedStr(self, node: ast.JoinedStr, env: Mapping[str, Any]) -> Any:
        return "".join(str(self.eval(value, env)) for value in node.values)

    def _FormattedValue(self, node: ast.FormattedValue, env: Mapping[str, Any]) -> Any:
        value = self.eval(node.value, env)
        convert = {115: str, 114: repr, 97: ascii}.get(node.conversion)
        value = value if convert is None else convert(value)
        spec = "" if node.format_spec is None else self.eval(node.format_spec, env)
        check_format_spec(spec)
        return format(value, spec)

    def _Attribute(self, node: ast.Attribute, env: Mapping[str, Any]) -> Any:
        owner = self.eval(node.value, env)
        if isinstance(owner, _MathModule):
            return getattr(owner, node.attr)
        if node.attr in METHODS and any(  # a value's method, or a type's: key=str.lower
            type(owner) is kind or owner is kind for kind in PLAIN_TYPES
        ):
            return getattr(owner, node.attr)
        raise NotEvaluable(f"attribute {node.attr!r} is not evaluated")

    def _Call(self, node: ast.Call, env: Mapping[str, Any]) -> Any:
        func = node.func
        if isinstance(func, ast.Name) and func.id == self.entry_point and func.id not in env:
            if self.entry_call is None:
                raise NotEvaluable("the entry point cannot be called here")
            return self.entry_call(node)
        if any(isinstance(arg, ast.Starred) for arg in node.args) or any(
            keyword.arg is None for keyword in node.keywords
        ):
            raise NotEvaluable("*args and **kwargs are not evaluated")
        function = self.eval(func, env)
        args = self._items(node.args, env)
        kwargs = {keyword.arg: self.eval(keyword.value, env) for keyword in node.keywords}
        return function(*check_call(function, args, kwargs), **kwargs)

    def _GeneratorExp(self, node: ast.GeneratorExp, env: Mapping[str, Any]) -> Any:
        return (self.eval(node.elt, scope) for scope in self._scopes(node.generators, env))

    def _ListComp(self, node: ast.ListComp, env: Mapping[str, Any]) -> Any:
        return [self.eval(node.elt, scope) for scope in self._scopes(node.generators, env)]

    def _SetComp(self, node: ast.SetComp, env: Mapping[str, Any]) -> Any:
        return {self.eval(node.elt, scope) for scope in self._scopes(node.generators, env)}

    def _DictComp(self, node: ast.DictComp, env: Mapping[str, Any]) -> Any:
        return {
            self.eval(node.key, scope): self.eval(node.value, scope)
            for scope in self._scopes(node.generators, env)
        }

    def _scopes(
        self, generators: list[ast.comprehension], env: Mapping[str, Any]
    ) -> Iterator[dict[str, Any]]:
        """One name scope per iteration of the nested ``for`` clauses (with their ``if``s)."""
        first, rest = generators[0], generators[1:]
        if first.is_async:
            raise NotEvaluable("async comprehensions are not evaluated")
        for item in self.eval(first.iter, env):
            self._budget.take()
            scope = dict(env)
            bind(first.target, item, scope)
            if all(self.eval(condition, scope) for condition in first.ifs):
                if rest:
                    yield from self._scopes(rest, scope)
                else:
                    yield scope


def bind(target: ast.expr, value: Any, env: dict[str, Any]) -> None:
    """Assign ``value`` to a name or a (nested) tuple/list of names, as ``=`` does.

    Example:
        >>> import ast
        >>> env = {}
        >>> bind(ast.parse("a, (b, c) = x").body[0].targets[0], (1, [2, 3]), env)
        >>> env
        {'a': 1, 'b': 2, 'c': 3}
    """
    if isinstance(target, ast.Name):
        env[target.id] = value
    elif isinstance(target, ast.Tuple | ast.List):
        values = list(value)
        if len(values) != len(target.elts):
            raise ValueError(f"expected {len(target.elts)} values to unpack, got {len(values)}")
        for element, item in zip(target.elts, values, strict=True):
            bind(element, item, env)
    else:
        raise NotEvaluable(f"cannot assign to {type(target).__name__}")


def math_imports(statement: ast.Import | ast.ImportFrom) -> dict[str, Any]:
    """Names bound by ``import math`` or ``from math import ...`` (other modules: refused).

    Example:
        >>> import ast
        >>> sorted(math_imports(ast.parse("from math import isclose, pi as p").body[0]))
        ['isclose', 'p']
    """
    if isinstance(statement, ast.Import):
        names = [alias for alias in statement.names if alias.name == "math"]
        if len(names) != len(statement.names):
            raise NotEvaluable("only 'import math' is evaluated")
        return {alias.asname or "math": _MATH_MODULE for alias in names}
    if statement.module != "math" or statement.level:
        raise NotEvaluable("only 'from math import ...' is evaluated")
    bound = {}
    for alias in statement.names:
        if alias.name not in MATH:
            raise NotEvaluable(f"math.{alias.name} is not evaluated")
        bound[alias.asname or alias.name] = MATH[alias.name]
    return bound


class _MathModule(types.SimpleNamespace):
    """What ``math`` is in a test: only the evaluated functions and constants."""


_MATH_MODULE = _MathModule(**MATH)


# ------------------------------------------------------------------------------ size checks


def _too_big(count: int, what: str = "a sequence") -> EvalLimit:
    return EvalLimit(f"{what} of {count} items is too large")


def check_binary(op: type[ast.operator], left: Any, right: Any) -> None:
    """Refuse, before computing it, an operation whose result would be too large.

    Example:
        >>> check_binary(ast.Pow, 10, 10 ** 9)
        Traceback (most recent call last):
        ...
        videorl_kit.rewards.plain_eval.EvalLimit: an integer of about 4000000000 bits is too large
    """
    sequence = (str, bytes, bytearray, list, tuple)
    if op is ast.Mult:
        for seq, count in ((left, right), (right, left)):
            if (
                isinstance(seq, sequence)
                and isinstance(count, int)
                and len(seq) * max(count, 0) > MAX_ITEMS
            ):
                raise _too_big(len(seq) * count)
    elif op is ast.Pow and isinstance(left, int) and isinstance(right, int):
        if right > 0 and abs(left) > 1 and right * abs(left).bit_length() > MAX_BITS:
            raise EvalLimit(
                f"an integer of about {right * abs(left).bit_length()} bits is too large"
            )
    elif op is ast.LShift and isinstance(left, int) and isinstance(right, int):
        if left and right + abs(left).bit_length() > MAX_BITS:
            raise EvalLimit(f"an integer of about {right} bits is too large")
    elif op is ast.Mod and isinstance(left, str | bytes | bytearray):
        raise EvalLimit("%-formatting of strings is not evaluated")
    if op in (ast.Mult, ast.FloorDiv, ast.Mod):
        check_int_product(left, right)


def check_int_product(left: Any, right: Any) -> None:
    """Refuse multiplying, dividing or taking the gcd of two integers that are both huge.

    Example:
        >>> check_int_product(10 ** 9, 7)
        >>> check_int_product(1 << 500_000, 1 << 500_000)
        Traceback (most recent call last):
        ...
        videorl_kit.rewards.plain_eval.EvalLimit: integers of 500001 and 500001 bits: too costly
    """
    if isinstance(left, int) and isinstance(right, int):
        sizes = abs(left).bit_length(), abs(right).bit_length()
        if sizes[0] * sizes[1] > MAX_BITS_PRODUCT:
            raise EvalLimit(f"integers of {sizes[0]} and {sizes[1]} bits: too costly")


def check_hash_spread(items: Iterable[Any], what: str = "a set") -> None:
    """Refuse ``items`` when more than :data:`MAX_EQUAL_HASHES` distinct ones share a hash.

    Building a set or dict compares each new item with every earlier one of the same hash, so
    distinct values with one hash (integers that differ by a multiple of ``2**61 - 1``) cost
    quadratic time: 20,000 of them take seconds. Equal items (duplicates) cost nothing extra and
    are allowed; unhashable items are left to the constructor, which raises.

    Example:
        >>> check_hash_spread([1, 1, 1, 2, 3] * 100)
        >>> check_hash_spread([k * (2 ** 61 - 1) for k in range(1, 20)])
        Traceback (most recent call last):
        ...
        videorl_kit.rewards.plain_eval.EvalLimit: a set: more than 8 distinct values share a hash
    """
    items = items if isinstance(items, list | tuple) else list(items)
    try:
        counts = Counter(map(hash, items))  # a C loop: the common case costs little
    except TypeError:
        return
    crowded = {value for value, count in counts.items() if count > MAX_EQUAL_HASHES}
    distinct: dict[int, list[Any]] = {value: [] for value in crowded}
    for item in items if crowded else ():
        same_hash = distinct.get(hash(item))
        if same_hash is None or item in same_hash:  # ``in``: identity, then ==
            continue
        if len(same_hash) == MAX_EQUAL_HASHES:
            raise EvalLimit(f"{what}: more than {len(same_hash)} distinct values share a hash")
        same_hash.append(item)


def check_format_spec(spec: Any) -> None:
    """Refuse format specifications with a width or precision beyond :data:`MAX_ITEMS`."""
    digits = "".join(ch if ch.isdigit() else " " for ch in str(spec)).split()
    if any(len(number) > 7 or int(number) > MAX_ITEMS for number in digits):
        raise EvalLimit("a format width or precision is too large")


def check_call(function: Any, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    """Refuse calls whose cost the arguments control; return the arguments to call with.

    Huge ranges, padding and ``replace`` growth, sums of lists, products of huge integers, and
    sets or dicts built from many distinct values with one hash are refused. The argument of
    ``set``, ``frozenset``, ``dict`` (and of the set methods that build a set from it) is
    checked by :func:`check_hash_spread`; an iterator there is read into a list first, which
    the call then receives instead (the same items, so the same result).

    Example:
        >>> check_call(set, [iter([3, 1, 3])], {})
        [[3, 1, 3]]
    """
    if function is range:
        length = len(range(*args))  # OverflowError for absurd ranges: the test fails
        if length > MAX_ITEMS:
            raise _too_big(length, "a range")
    elif function is sum and (len(args) > 1 or "start" in kwargs):
        start = args[1] if len(args) > 1 else kwargs["start"]
        if not isinstance(start, int | float | complex):
            raise EvalLimit("sum() with a non-numeric start is not evaluated")
    elif (function is bytes or function is bytearray) and args and isinstance(args[0], int):
        if args[0] > MAX_ITEMS:
            raise _too_big(args[0], "a bytes object")
    elif (function is divmod or function is math.gcd) and len(args) == 2:
        check_int_product(*args)
    elif _builds_hashed(function):
        return [_hash_checked(arg, is_dict=function is dict) for arg in args]
    else:
        _check_method(function, args)
    return args


_SET_BUILDING_METHODS = frozenset(("union", "symmetric_difference", "issubset"))
_UNCHECKED_CONTAINERS = (str, bytes, bytearray, set, frozenset, dict)  # built or hash-randomized


def _builds_hashed(function: Any) -> bool:
    """Whether ``function`` builds a set or dict from its arguments' items."""
    if function is set or function is frozenset or function is dict:
        return True
    owner = getattr(function, "__self__", None)
    return isinstance(owner, set | frozenset) and function.__name__ in _SET_BUILDING_METHODS


def _hash_checked(argument: Any, *, is_dict: bool) -> Any:
    """``argument`` (an iterator read into a list) once its items' hashes are spread out."""
    if isinstance(argument, _UNCHECKED_CONTAINERS):
        return argument
    items = argument if isinstance(argument, list | tuple) else list(argument)
    if is_dict:
        keys = [pair[0] for pair in items if isinstance(pair, list | tuple) and pair]
        check_hash_spread(keys, "a dict")
    else:
        check_hash_spread(items)
    return items


def _check_method(function: Any, args: list[Any]) -> None:
    """Padding widths and ``replace`` growth of a string method (bound or called on its type)."""
    name = getattr(function, "__name__", None)
    if name not in _WIDTH_METHODS and name != "replace":
        return
    if hasattr(function, "__objclass__"):  # str.center(s, 10): the owner is the first argument
        owner, args = (args[0], args[1:]) if args else (None, args)
    else:
        owner = getattr(function, "__self__", None)
    if not isinstance(owner, str | bytes | bytearray) or not args:
        return
    if name in _WIDTH_METHODS:
        if isinstance(args[0], int) and args[0] > MAX_ITEMS:
            raise _too_big(args[0], "a padded string")
    elif len(args) >= 2 and isinstance(args[0], str | bytes) and isinstance(args[1], str | bytes):
        old, new = args[0], args[1]
        count = owner.count(old) if old else len(owner) + 1
        size = len(owner) + count * max(len(new) - len(old), 0)
        if size > MAX_ITEMS:
            raise _too_big(size, "a string")
