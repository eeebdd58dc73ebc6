"""Split a code ground truth's tests into calls to make and assertions the host decides.

A test of *callable form* — ``assert f(2) == 4``, ``assert abs(f(x) - 1.5) < 1e-6`` after
``x = 0.5``, ``assert f(3) in (1, 2)``, ``assert not f(0)``, ``assert f(1) is None``,
``r = f("ab")`` then ``assert r.upper() == "AB"`` — is parsed here, in the trusted process, into
the calls of the entry point it makes (with argument values computed here) and the statements
that check their results. The sandbox only receives the calls; :func:`judge_call_tests` then
runs the statements on the values that came back (:mod:`videorl_kit.rewards.plain_eval`).

A test is of callable form when it is made only of ``assert``, assignments to names, bare
expressions, ``pass`` and ``math`` imports; uses only names it binds itself, built-ins the
evaluator knows and ``math``; calls the entry point only with arguments that do not depend on
another call's result (and not inside a comprehension's loop); and never passes a mutable value
it uses again (``x = [3, 1]; f(x); assert x == [1, 3]`` observes mutation, which plain data
cannot carry back). Every other test (loops, ``try``, helpers from the answer, lambdas) is a
*script test*, run in a process of its own against a proxy of the code
(:mod:`videorl_kit.rewards.sandbox_proxy`, :mod:`videorl_kit.rewards.code_forms`), where its
comparisons are that process's own on the plain data the calls return.

Every call a test writes is made, in the order written, even where Python would skip it (the
untaken side of ``x if c else y``, the rest of a test after a call raised); this matters only to
code with side effects between calls.

Example:
    >>> plan = plan_tests("f", ["assert f(2) == 4", "x = [1, 2]\\nassert f(*x) == 3"])
    >>> [(call.args, call.kwargs) for call in plan.calls], plan.script_tests
    ([((2,), {})], (1,))
    >>> from videorl_kit.rewards.sandbox import CallResult
    >>> [v.passed for v in judge_call_tests(plan, [CallResult("ok", 4)])]
    [True]
"""

from __future__ import annotations

import ast
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.rewards.plain_eval import (
    BUILTINS,
    MATH,
    METHODS,
    SUPPORTED_NODES,
    Evaluator,
    NotEvaluable,
    math_imports,
)
from videorl_kit.rewards.sandbox import CallResult
from videorl_kit.rewards.sandbox_child import WireError, encode_value

JudgedBy = Literal["returned_values", "test_process", "shared_interpreter"]
#: Wall-clock budget for judging all the tests of one answer on the host.
JUDGE_SECONDS = 5.0


class PlanError(VideoRLKitError, ValueError):
    """A test fails whatever the answer is (its own arguments raise, or are too large)."""


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """One call of the entry point: the test it belongs to and its argument values."""

    test_index: int
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CallTest:
    """A test of callable form: its statements and which planned call each call node is."""

    index: int
    source: str
    statements: tuple[ast.stmt, ...]
    call_numbers: dict[int, int] = field(default_factory=dict)  # id(ast.Call) -> call number


@dataclass(frozen=True, slots=True)
class CodeTestPlan:
    """How a ground truth's tests are judged (see the module docstring).

    Example:
        >>> plan = plan_tests("f", ["assert f(1) == 1", "for i in range(3):\\n    assert f(i)"])
        >>> len(plan.calls), [t.index for t in plan.call_tests], plan.script_tests
        (1, [0], (1,))
    """

    entry_point: str
    calls: tuple[PlannedCall, ...]
    call_tests: tuple[CallTest, ...]
    script_tests: tuple[int, ...]
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CodeTestVerdict:
    """Whether one test passed, how it was judged, and a one-line reason when it failed."""

    index: int
    passed: bool
    judged_by: JudgedBy
    message: str = ""


# ------------------------------------------------------------------------------ planning


def plan_tests(entry_point: str, tests: Sequence[str]) -> CodeTestPlan:
    """Plan every test; raises :class:`PlanError` for a test no answer can pass.

    Example:
        >>> try:
        ...     plan_tests("f", ["assert f(1 / 0) == 1"])
        ... except PlanError as exc:
        ...     print(exc)
        test 0 fails for every answer: ZeroDivisionError: division by zero
    """
    calls: list[PlannedCall] = []
    call_tests: list[CallTest] = []
    script_tests: list[int] = []
    for index, source in enumerate(tests):
        try:
            test, test_calls = _plan_one(index, source, entry_point, first_call=len(calls))
        except NotEvaluable:
            script_tests.append(index)
            continue
        calls.extend(test_calls)
        call_tests.append(test)
    return CodeTestPlan(
        entry_point, tuple(calls), tuple(call_tests), tuple(script_tests), tuple(tests)
    )


def _plan_one(
    index: int, source: str, entry_point: str, *, first_call: int
) -> tuple[CallTest, list[PlannedCall]]:
    """Plan one test, or raise NotEvaluable when it is not of callable form."""
    tree = ast.parse(source, f"<test {index}>")
    _check_shape(tree, entry_point)
    loads = _name_loads(tree)
    static: dict[str, Any] = {}
    numbers: dict[int, int] = {}
    calls: list[PlannedCall] = []
    for statement in tree.body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            static.update(math_imports(statement))
            continue
        for node in _entry_calls(statement, entry_point):
            args, kwargs = _static_arguments(index, node, static, loads)
            numbers[id(node)] = first_call + len(calls)
            calls.append(PlannedCall(index, args, kwargs))
        if isinstance(statement, ast.Assign):
            _bind_static(index, statement, static, entry_point)
    return CallTest(index, source, tuple(tree.body), numbers), calls


def bound_names(sources: Sequence[str], entry_point: str) -> frozenset[str]:
    """The names any of the tests binds (assigns, defines, imports), the entry point aside: a
    script test never looks one of them up in the answer's module, where the answer could set
    it (``EXPECTED = 4`` judged on the host, then ``assert f(2) == EXPECTED`` in the tests'
    process).

    Example:
        >>> sorted(bound_names(["EXPECTED = 4", "def check(c):\\n    assert c(2) == 4"], "f"))
        ['EXPECTED', 'c', 'check']
    """
    names: set[str] = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                names.add(node.id)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                names.add(node.name)
    names.discard(entry_point)
    return frozenset(names)


def _check_shape(tree: ast.Module, entry_point: str) -> None:
    """Only evaluable nodes; the entry point only ever called; names the test can resolve."""
    bound = {entry_point, "math"}
    for node in ast.walk(tree):
        if type(node) not in SUPPORTED_NODES:
            raise NotEvaluable(f"{type(node).__name__} is not evaluated")
        if isinstance(getattr(node, "ctx", None), ast.Store) and not isinstance(
            node, ast.Name | ast.Tuple | ast.List
        ):
            raise NotEvaluable(f"assignment to a {type(node).__name__} is not evaluated")
        if (isinstance(node, ast.Dict) and None in node.keys) or (
            isinstance(node, ast.keyword) and node.arg is None
        ):
            raise NotEvaluable("** unpacking is not evaluated")
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name)
        elif isinstance(node, ast.Attribute) and not (
            node.attr in METHODS
            or (isinstance(node.value, ast.Name) and node.value.id == "math" and node.attr in MATH)
        ):
            raise NotEvaluable(f"attribute {node.attr!r} is not evaluated")
    for statement in tree.body:
        if isinstance(statement, ast.Assert) and statement.msg is not None:
            statement.msg = None  # only evaluated when the test fails anyway: never needed
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name):
            continue
        if node.id == entry_point and (isinstance(node.ctx, ast.Store) or id(node) not in called):
            raise NotEvaluable("the entry point is used other than by calling it")
        if node.id not in bound and node.id not in BUILTINS:
            raise NotEvaluable(f"name {node.id!r} comes from elsewhere")


def _name_loads(tree: ast.AST) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _entry_calls(node: ast.AST, entry_point: str) -> Iterator[ast.Call]:
    """The entry point's call nodes under ``node``, in Python's evaluation order."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == entry_point
    ):
        for argument in (*node.args, *(k.value for k in node.keywords)):
            if any(True for _ in _entry_calls(argument, entry_point)):
                raise NotEvaluable("a call's argument depends on another call")
        yield node
        return
    if isinstance(node, ast.GeneratorExp | ast.ListComp | ast.SetComp | ast.DictComp):
        yield from _entry_calls(node.generators[0].iter, entry_point)  # evaluated outside
        inner = [node.generators[0].target, *node.generators[0].ifs, *node.generators[1:]]
        inner += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        if any(True for part in inner for _ in _entry_calls(part, entry_point)):
            raise NotEvaluable("the entry point is called inside a comprehension's loop")
        return
    if isinstance(node, ast.Dict):  # keys and values are evaluated in pairs
        children: list[ast.AST] = [
            part for pair in zip(node.keys, node.values, strict=True) for part in pair if part
        ]
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        yield from _entry_calls(child, entry_point)


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _static_arguments(
    index: int, node: ast.Call, static: dict[str, Any], loads: dict[str, int]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The values of a call's arguments, computed now; NotEvaluable if they cannot be."""
    if any(isinstance(arg, ast.Starred) for arg in node.args) or any(
        keyword.arg is None for keyword in node.keywords
    ):
        raise NotEvaluable("*args and **kwargs in a call of the entry point")
    for argument in (*node.args, *(k.value for k in node.keywords)):
        own = {
            n.id
            for n in ast.walk(argument)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        for name in _names_in(argument) - own:
            if name not in static and name not in BUILTINS and name != "math":
                raise NotEvaluable(f"argument name {name!r} is not known before the call")
            if name in static and _observable_mutation(name, static, loads):
                raise NotEvaluable(f"{name!r} is passed to the entry point and seen again")
    evaluator = Evaluator()
    try:
        args = tuple(evaluator.eval(arg, static) for arg in node.args)
        kwargs = {k.arg: evaluator.eval(k.value, static) for k in node.keywords}
    except NotEvaluable:
        raise
    except Exception as exc:  # EvalLimit, ZeroDivisionError, ...: no answer can pass
        raise PlanError(f"test {index} fails for every answer: {_describe(exc)}") from None
    try:
        encode_value((args, kwargs), max_bytes=1 << 26)
    except WireError:
        raise NotEvaluable("an argument is not plain data") from None
    return args, kwargs  # type: ignore[return-value]


def _bind_static(index: int, statement: ast.Assign, static: dict[str, Any], entry: str) -> None:
    """Give assigned names their value now when it needs no call; otherwise forget them."""
    targets = [name for target in statement.targets for name in _names_in(target)]
    needs_call = any(True for _ in _entry_calls(statement.value, entry))
    unknown = _names_in(statement.value) - static.keys() - BUILTINS.keys() - {"math"}
    if needs_call or unknown:
        for name in targets:
            static.pop(name, None)
        return
    try:
        Evaluator().run_statement(statement, static)
    except NotEvaluable:
        raise
    except Exception as exc:
        raise PlanError(f"test {index} fails for every answer: {_describe(exc)}") from None


def _observable_mutation(name: str, static: dict[str, Any], loads: dict[str, int]) -> bool:
    """Could the test see the entry point mutate ``name``'s value (read again, or aliased)?"""
    mutable = _mutable_parts(static[name])
    if not mutable:
        return False
    if loads.get(name, 0) > 1:
        return True
    return any(
        other != name and not mutable.isdisjoint(_mutable_parts(value))
        for other, value in static.items()
    )


def _mutable_parts(value: Any) -> set[int]:
    """Identities of the mutable containers inside ``value`` (itself included)."""
    found: set[int] = set()
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, list | dict | set | bytearray):
            found.add(id(item))
        if isinstance(item, list | tuple | set | frozenset):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
    return found


def _describe(exc: BaseException) -> str:
    text = _shown(exc, str, 300)
    return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__


def _shown(value: Any, show: Callable[[Any], str] = repr, limit: int = 60) -> str:
    """``show(value)`` cut to ``limit`` characters; a value Python refuses to show is named.

    Returned values come from the answer: an integer of more than 4300 digits makes ``repr``
    raise ``ValueError`` (so does a ``KeyError`` holding one), which must not escape a verdict.

    Example:
        >>> _shown(10 ** 5000), _shown([1, 2])
        ('<int too large to show>', '[1, 2]')
    """
    try:
        text = show(value)
    except ValueError:
        return f"<{type(value).__name__} too large to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------------------------ judging


class _CallFailed(VideoRLKitError):
    """A call the test needs did not return plain data."""


def judge_call_tests(plan: CodeTestPlan, results: Sequence[CallResult]) -> list[CodeTestVerdict]:
    """Decide each callable-form test from the calls' results (one per planned call).

    Example:
        >>> plan = plan_tests("f", ["assert f(2) == 4", "assert f(3) in (1, 2)"])
        >>> verdicts = judge_call_tests(plan, [CallResult("ok", 4), CallResult("ok", 9)])
        >>> [(v.passed, v.message) for v in verdicts]
        [(True, ''), (False, 'test 1: assert f(3) in (1, 2): assertion failed; f(3) returned 9')]
    """
    if len(results) != len(plan.calls):
        raise ValueError(f"{len(results)} results for {len(plan.calls)} calls")
    deadline = time.monotonic() + JUDGE_SECONDS  # shared: many tests cannot add up
    verdicts = []
    for test in plan.call_tests:

        def entry_call(node: ast.Call, test: CallTest = test) -> Any:
            result = results[test.call_numbers[id(node)]]
            if result.kind == "ok":
                return result.value
            what = "raised" if result.kind == "raised" else "returned a value that is not data"
            raise _CallFailed(f"{ast.unparse(node)[:80]} {what}: {result.message}")

        try:
            Evaluator(plan.entry_point, entry_call, deadline=deadline).run(
                list(test.statements), {}
            )
        except _CallFailed as exc:
            verdicts.append(_failed(test, str(exc)))
        except Exception as exc:  # AssertionError, EvalLimit, or what Python would raise
            reason = "assertion failed" if isinstance(exc, AssertionError) else _describe(exc)
            returned = _returned(test, results)
            verdicts.append(_failed(test, reason + (f"; {returned}" if returned else "")))
        else:
            verdicts.append(CodeTestVerdict(test.index, True, "returned_values"))
    return verdicts


def _failed(test: CallTest, reason: str) -> CodeTestVerdict:
    source = " ".join(test.source.split())
    source = source if len(source) <= 80 else source[:77] + "..."
    return CodeTestVerdict(
        test.index, False, "returned_values", f"test {test.index}: {source}: {reason}"
    )


def _returned(test: CallTest, results: Sequence[CallResult]) -> str:
    """``f(3) returned 9`` for the test's calls (values shortened), for explanations."""
    parts = []
    for statement in test.statements:
        for node in ast.walk(statement):
            number = test.call_numbers.get(id(node))
            if number is not None and results[number].kind == "ok":
                value = _shown(results[number].value)
                parts.append(f"{ast.unparse(node)[:60]} returned {value}")
    return ", ".join(parts[:3])
