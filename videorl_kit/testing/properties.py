"""The verifier contract as properties, each checked by Hypothesis (or by a measured search).

Every property takes a :class:`Context` (the verifier, how its answers look, how many
examples, the seed) and returns a :class:`~videorl_kit.testing.report.PropertyResult`.
Properties that Hypothesis searches report its shrunk counterexample; the others report the
smallest input that breaks them (the shortest input whose verdict differs, the shortest flood
over the time budget). :data:`PROPERTIES` lists them in the order a report shows them.

Example:
    >>> list(PROPERTIES)[:3]
    ['never_raises', 'bounded_time', 'deterministic']
"""

from __future__ import annotations

import contextlib
import json
import pickle
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, find, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky, NoSuchExample, Unsatisfiable

from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.rewards.result import RewardResult
from videorl_kit.rewards.router import RewardFunction, reward_function_for
from videorl_kit.testing import strategies as vs
from videorl_kit.testing.cases import GoldenCase, answer_text, case_line, disagreements
from videorl_kit.testing.child import ChildError, Verdict, score_elsewhere, verdict
from videorl_kit.testing.kinds import Kind, Problem
from videorl_kit.testing.report import CONTRACT, PropertyResult, short
from videorl_kit.testing.subject import Subject

Case = vs.Case
#: Times an input over the budget is measured; the fastest counts.
TIMING_TRIES = 5


@dataclass
class Context:
    """What every property needs: the subject, its answers, the search budget."""

    subject: Subject
    kind: Kind
    problems: st.SearchStrategy[Problem]
    has_problems: bool
    examples: int
    seed: int
    time_budget_s: float = 0.05
    long_input_bytes: int = 1_000_000
    threads: int = 4
    cases: list[GoldenCase] | None = None
    cases_source: str = ""
    #: Problems whose every form is tried before the search (besides the simplest one).
    cover: tuple[Problem, ...] = ()
    _function: RewardFunction | None = field(default=None, repr=False)

    @property
    def function(self) -> RewardFunction:
        """The reward function shared by the checks (one instance, as a trainer has)."""
        if self._function is None:
            self._function = self.subject.reward_function()
        return self._function

    @property
    def raw_text(self) -> bool:
        """The verifier reads text as written (no compatibility forms generated)."""
        return self.subject.info.raw_text

    def strategy(self, build: Callable[..., st.SearchStrategy[Case]]) -> st.SearchStrategy[Case]:
        """One of :mod:`~videorl_kit.testing.strategies`' case strategies for this subject."""
        return build(self.kind, raw_text=self.raw_text, problem_strategy=self.problems)


@dataclass(frozen=True)
class Counterexample:
    """An input that breaks a property, what happened, and what the contract expects."""

    case: Case
    message: str
    expected_accuracy: float = 0.0
    expected_status: str = "ok"


class _Falsified(VideoRLKitError):
    """Raised inside a Hypothesis test to mark its input as a counterexample."""


def _settings(ctx: Context, examples: int | None = None, shrink: bool = True) -> settings:
    phases = (Phase.generate, Phase.shrink) if shrink else (Phase.generate,)
    return settings(
        parent=settings.get_profile("default"),
        max_examples=max(1, examples or ctx.examples),
        database=None,
        deadline=None,
        derandomize=False,
        phases=phases,
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )


@dataclass
class _Search:
    found: Counterexample | None = None
    tried: int = 0
    flaky: bool = False
    unsatisfiable: bool = False


def falsify(
    ctx: Context,
    strategy: st.SearchStrategy[Any],
    check: Callable[[Any], Counterexample | None],
    examples: int | None = None,
    explicit: Sequence[Any] = (),
) -> _Search:
    """Search ``strategy`` for a value ``check`` objects to; the last one is the shrunk one.

    The ``explicit`` values (each form of a family once) are tried first, in order.
    """
    search = _Search()
    for value in explicit:
        search.tried += 1
        search.found = check(value)
        if search.found is not None:
            return search

    def body(value: Any) -> None:
        search.tried += 1
        problem = check(value)
        if problem is not None:
            search.found = problem
            raise _Falsified(problem.message)

    test = seed(ctx.seed)(_settings(ctx, examples)(given(strategy)(body)))
    try:
        test()
    except _Falsified:
        pass
    except Flaky:  # the verdict changed when the same input ran again
        search.flaky = True
    except Unsatisfiable:
        search.unsatisfiable = True
    return search


def sample(ctx: Context, strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """``count`` values drawn from ``strategy`` (reproducibly, from the context's seed)."""
    drawn: list[Any] = []

    def keep(value: Any) -> None:
        drawn.append(value)

    test = seed(ctx.seed)(_settings(ctx, count, shrink=False)(given(strategy)(keep)))
    with contextlib.suppress(Unsatisfiable):
        test()
    return drawn


def _result(ctx: Context, name: str, search: _Search, started: float) -> PropertyResult:
    description = CONTRACT[name]
    seconds = time.perf_counter() - started
    if search.found is None and search.unsatisfiable:
        why = "no input could be generated for it"
        return PropertyResult(name, "skipped", description, search.tried, why, seconds=seconds)
    if search.found is None:
        return PropertyResult(name, "held", description, search.tried, seconds=seconds)
    found = search.found
    message = found.message
    if search.flaky:
        message += " (not reproducible: the verdict changed when the input ran again)"
    return PropertyResult(
        name,
        "broken",
        description,
        search.tried,
        message,
        _example(found),
        _case_line(ctx, name, found),
        seconds,
    )


def _example(found: Counterexample) -> dict[str, Any]:
    case = found.case
    return {
        "response": case.response,
        "answer": case.gold,
        "options": case.options,
        "form": case.form,
    }


def _case_line(ctx: Context, name: str, found: Counterexample) -> str:
    case = found.case
    return case_line(
        f"check-{name}-{ctx.seed}",
        ctx.subject.problem_type.value,
        case.response,
        case.gold,
        case.options,
        found.expected_accuracy,
        f"reward check {name} ({case.form}): {found.message}",
        expected_status=found.expected_status,
        params=ctx.subject.params.model_dump(mode="json", exclude_defaults=True) or None,
    )


def _score(fn: RewardFunction, case: Case) -> RewardResult:
    return fn(case.response, case.gold, case.options)


def _said(result: RewardResult) -> str:
    text = f"accuracy {result.accuracy:g}, status {result.status}"
    reason = result.details.get("error") or result.details.get("reason")
    return f"{text} ({short(str(reason), 100)})" if reason else text


def _verdict_text(found: Verdict) -> str:
    """``accuracy 1 [ok, format 1]``: what a verdict says."""
    accuracy, fmt, _, status = found
    return f"accuracy {accuracy:g} [{status}, format {fmt:g}]"


def _quoted(text: str, limit: int = 60) -> str:
    return "'" + short(text, limit).strip("'") + "'"


def _no_golds() -> str:
    return "no golds: give golds=[...] or a case file (--cases) for this problem type"


# ----------------------------------------------------------------------------- never raises


def never_raises(ctx: Context) -> PropertyResult:
    """No input (any response, gold or options) makes the verifier raise."""
    started = time.perf_counter()
    fn = ctx.function

    def check(case: Case) -> Counterexample | None:
        result = _score(fn, case)
        if result.status == "error":
            error = result.details.get("error", "?")
            verb = (
                "broke the contract"
                if result.details.get("error_type") == "VerifierContractError"
                else "raised"
            )
            return Counterexample(case, f"{verb}: {short(str(error), 200)}")
        try:
            json.dumps(result.to_dict(), allow_nan=False)
        except (TypeError, ValueError) as exc:
            return Counterexample(case, f"details are not JSON ({exc})")
        if case.form.startswith(vs.ARBITRARY_TEXT) and result.status != "ok":
            reason = short(str(result.details.get("reason", "")), 100)
            message = f"a readable gold gave status {result.status} ({reason})"
            return Counterexample(case, message)
        return None

    strategies = [ctx.strategy(vs.arbitrary_gold_cases)]
    if ctx.has_problems:
        strategies.append(ctx.strategy(vs.arbitrary_cases))
    gold = _simplest_problem(ctx)
    explicit = [
        Case(response, g, gold.option_list, "a classic")
        for g in (gold.gold, "")
        for response in vs.NASTY_RESPONSES
    ]
    search = falsify(ctx, st.one_of(strategies), check, explicit=explicit)
    return _result(ctx, "never_raises", search, started)


# ----------------------------------------------------------------------------- bounded time


def _timed(fn: RewardFunction, response: str, problem: Problem, tries: int) -> float:
    best = float("inf")
    for _ in range(tries):
        started = time.perf_counter()
        fn(response, problem.gold, problem.option_list)
        best = min(best, time.perf_counter() - started)
    return best


def bounded_time(ctx: Context) -> PropertyResult:
    """Every input up to ``long_input_bytes`` bytes (UTF-8) is scored within the time budget.

    Each flood grows from 1000 bytes to the full size (so a slow verifier is found
    without a long wait); a time over the budget is measured three times and the fastest
    counts. The counterexample is the shortest flood over the budget (bisected).
    """
    started = time.perf_counter()
    name = "bounded_time"
    problem = _simplest_problem(ctx)
    fn = ctx.function
    budget = ctx.time_budget_s
    tried = 0
    worst: tuple[float, str] = (0.0, "")
    for flood in vs.long_inputs(problem):
        full = flood.count_for(ctx.long_input_bytes)
        low, count = 0, min(full, flood.count_for(1000))
        while True:
            tried += 1
            seconds = _timed(fn, flood.text(count), problem, 1)
            if seconds > budget:  # measured again: the machine may be busy for a moment
                seconds = min(seconds, _timed(fn, flood.text(count), problem, TIMING_TRIES - 1))
            if seconds > budget:
                count, seconds = _shortest_over(fn, flood, problem, budget, low, count, seconds)
                text = flood.text(count)
                message = (
                    f"{seconds * 1000:.1f} ms on '{flood.name}' ({len(text):,} characters; "
                    f"budget {budget * 1000:g} ms)"
                )
                example = {
                    "expression": flood.expression(count),
                    "answer": problem.gold,
                    "options": problem.option_list,
                    "form": flood.name,
                    "seconds": seconds,
                }
                return PropertyResult(
                    name, "broken", CONTRACT[name], tried, message, example, None,
                    time.perf_counter() - started,
                )  # fmt: skip
            worst = max(worst, (seconds, flood.name))
            if count >= full:
                break
            low, count = count, min(full, count * 4)
    held = PropertyResult(name, "held", CONTRACT[name], tried)
    note = f"slowest: '{worst[1]}' {worst[0] * 1000:.1f} ms" if worst[1] else ""
    return PropertyResult(
        held.name, held.status, held.description, tried, note,
        seconds=time.perf_counter() - started,
    )  # fmt: skip


def _shortest_over(
    fn: RewardFunction,
    flood: vs.LongInput,
    problem: Problem,
    budget: float,
    low: int,
    high: int,
    seconds: float,
) -> tuple[int, float]:
    """The smallest count in (low, high] still over ``budget`` (a few halvings)."""
    for _ in range(8):
        if high - low <= max(1, high // 50):
            break
        middle = (low + high) // 2
        taken = _timed(fn, flood.text(middle), problem, 1)
        if taken > budget:
            taken = min(taken, _timed(fn, flood.text(middle), problem, TIMING_TRIES - 1))
        if taken > budget:
            high, seconds = middle, taken
        else:
            low = middle
    return high, seconds


def _covering(ctx: Context, family: str) -> list[Case]:
    if not ctx.has_problems:
        return []
    problems = [_simplest_problem(ctx), *ctx.cover]
    return [
        case
        for problem in dict.fromkeys(problems)
        for case in vs.covering_cases(ctx.kind, problem, family, raw_text=ctx.raw_text)
    ]


def _simplest_problem(ctx: Context) -> Problem:
    if not ctx.has_problems:
        return Problem("x", None, ("x",), ())
    try:
        return find(ctx.problems, lambda _: True, settings=_settings(ctx, 10))
    except (NoSuchExample, Unsatisfiable):
        return Problem("x", None, ("x",), ())


# ----------------------------------------------------------------------------- determinism


def _mixed(ctx: Context) -> st.SearchStrategy[Case]:
    builds = [vs.arbitrary_gold_cases]
    if ctx.has_problems:
        builds += [vs.gold_cases, vs.wrong_cases, vs.hedge_cases, vs.unanswered_cases]
        builds.append(vs.arbitrary_cases)
    return st.one_of([ctx.strategy(b) for b in builds])


def deterministic(ctx: Context) -> PropertyResult:
    """The same input gets the same verdict: called again, after other inputs, and from a
    fresh instance (a verifier keeps no state between calls)."""
    started = time.perf_counter()
    subject = ctx.subject

    def check(pair: tuple[Case, Case]) -> Counterexample | None:
        first, second = pair
        fresh = verdict(_score(subject.reward_function(), second))
        shared = subject.reward_function()
        _score(shared, first)
        after = verdict(_score(shared, second))
        again = verdict(_score(shared, second))
        if len({fresh, after, again}) > 1:
            message = (
                f"one input got {_verdict_text(fresh)} from a new instance, "
                f"{_verdict_text(after)} after {_quoted(first.response)}, "
                f"{_verdict_text(again)} when scored again"
            )
            return Counterexample(second, message, fresh[0], fresh[3])
        return None

    search = falsify(ctx, st.tuples(_mixed(ctx), _mixed(ctx)), check)
    return _result(ctx, "deterministic", search, started)


def _batch(ctx: Context, limit: int = 200) -> list[Case]:
    return sample(ctx, _mixed(ctx), min(ctx.examples, limit))


def _first_disagreement(
    cases: Sequence[Case], here: Sequence[Verdict], there: Sequence[Verdict]
) -> tuple[Case, Verdict, Verdict] | None:
    differing = [(case, a, b) for case, a, b in zip(cases, here, there, strict=True) if a != b]
    if not differing:
        return None
    return min(differing, key=lambda item: len(item[0].response) + len(item[0].gold))


def cross_process(ctx: Context) -> PropertyResult:
    """Other processes (hash seeds of their own, the verifier rebuilt from its import path)
    give every input the same verdict as this one."""
    started = time.perf_counter()
    name = "cross_process"
    if ctx.subject.import_path() is None:
        message = (
            "the verifier's class is defined in __main__ or inside a function: no other "
            "process (a trainer's worker) can import it; define it at the top of a module"
        )
        return PropertyResult(name, "broken", CONTRACT[name], 0, message)
    cases = _batch(ctx)
    inputs = [(c.response, c.gold, c.options) for c in cases]
    here = [verdict(ctx.function(*item)) for item in inputs]
    try:
        first, second = score_elsewhere(ctx.subject.reference(), inputs)
    except ChildError as exc:
        return PropertyResult(
            name, "broken", CONTRACT[name], len(cases), str(exc),
            seconds=time.perf_counter() - started,
        )  # fmt: skip
    # this process against the first other one, else the two others against each other
    search = _Search(tried=len(cases))
    for mine, theirs, where in ((here, first, "here"), (first, second, "in one other process")):
        differing = _first_disagreement(cases, mine, theirs)
        if differing:
            case, a, b = differing
            count = sum(x != y for x, y in zip(mine, theirs, strict=True))
            message = (
                f"{count} of {len(cases)} verdicts differ between processes: "
                f"{_verdict_text(a)} {where}, {_verdict_text(b)} in another (the expected "
                "accuracy of this line is the first verdict: check it)"
            )
            search.found = Counterexample(case, message, a[0], a[3])
            break
    return _result(ctx, name, search, started)


# ----------------------------------------------------------------------------- pickle, threads


def picklable(ctx: Context) -> PropertyResult:
    """The verifier and its reward function survive ``pickle`` and the copies agree."""
    started = time.perf_counter()
    name = "picklable"
    clones: list[Any] = []
    for what, original in (("verifier", ctx.subject.verifier()), ("reward function", ctx.function)):
        try:
            clones.append(pickle.loads(pickle.dumps(original)))
        except Exception as exc:
            message = f"the {what} does not pickle: {type(exc).__name__}: {short(str(exc), 200)}"
            return PropertyResult(
                name, "broken", CONTRACT[name], 0, message,
                seconds=time.perf_counter() - started,
            )  # fmt: skip
    clone = clones[1]

    def check(case: Case) -> Counterexample | None:
        mine, theirs = verdict(_score(ctx.function, case)), verdict(_score(clone, case))
        if mine != theirs:
            message = f"{_verdict_text(mine)}, but {_verdict_text(theirs)} from the unpickled copy"
            return Counterexample(case, message, mine[0], mine[3])
        return None

    search = falsify(ctx, _mixed(ctx), check)
    return _result(ctx, name, search, started)


def thread_safe(ctx: Context) -> PropertyResult:
    """One instance called from several threads at once gives the verdicts of serial calls."""
    started = time.perf_counter()
    name = "thread_safe"
    cases = _batch(ctx, limit=100)
    fn = ctx.function
    serial = [verdict(_score(fn, c)) for c in cases]
    order = list(range(len(cases))) * 3
    with ThreadPoolExecutor(max_workers=max(2, ctx.threads)) as pool:
        concurrent = list(pool.map(lambda i: (i, verdict(_score(fn, cases[i]))), order))
    differ = [(cases[i], serial[i], v) for i, v in concurrent if v != serial[i]]
    search = _Search(tried=len(order))
    if differ:
        case, a, b = min(differ, key=lambda item: len(item[0].response) + len(item[0].gold))
        message = (
            f"{len(differ)} of {len(order)} concurrent calls disagree with serial ones: "
            f"{_verdict_text(a)} serially, {_verdict_text(b)} in a thread"
        )
        search.found = Counterexample(case, message, a[0], a[3])
    return _result(ctx, name, search, started)


# ----------------------------------------------------------------------------- verdicts


def gold_forms(ctx: Context) -> PropertyResult:
    """Every accepted form of the gold scores 1 (status ``ok``)."""
    started = time.perf_counter()
    if not ctx.has_problems:
        return _skipped(ctx, "gold_forms", _no_golds(), started)
    fn = ctx.function

    def check(case: Case) -> Counterexample | None:
        result = _score(fn, case)
        if result.accuracy != 1.0 or result.status != "ok":
            return Counterexample(case, f"the gold scored {_said(result)}", 1.0)
        return None

    search = falsify(ctx, ctx.strategy(vs.gold_cases), check, explicit=_covering(ctx, "gold"))
    return _result(ctx, "gold_forms", search, started)


def _below_gold(
    ctx: Context, name: str, build: Callable[..., st.SearchStrategy[Case]], family: str
) -> PropertyResult:
    started = time.perf_counter()
    if not ctx.has_problems:
        return _skipped(ctx, name, _no_golds(), started)
    fn = ctx.function

    def check(case: Case) -> Counterexample | None:
        result = _score(fn, case)
        gold = fn(f"<answer>{case.gold_form}</answer>", case.gold, case.options).accuracy
        if result.status == "ok" and gold > 0 and result.accuracy >= gold:
            message = (
                f"scored {result.accuracy:g}, as much as the gold itself "
                f"(<answer>{short(case.gold_form, 40)}</answer> scores {gold:g})"
            )
            return Counterexample(case, message, 0.0)
        return None

    search = falsify(ctx, ctx.strategy(build), check, explicit=_covering(ctx, family))
    if search.unsatisfiable:
        return _skipped(ctx, name, "no wrong candidates known for these golds", started)
    return _result(ctx, name, search, started)


def hedges(ctx: Context) -> PropertyResult:
    """A hedge between the gold and a wrong candidate scores below the gold."""
    return _below_gold(ctx, "hedges", vs.hedge_cases, "hedge")


def wrong_answers(ctx: Context) -> PropertyResult:
    """A wrong candidate scores below the gold."""
    return _below_gold(ctx, "wrong_answers", vs.wrong_cases, "wrong")


def unanswered(ctx: Context) -> PropertyResult:
    """The gold stated only inside ``<think>`` (or before an empty answer block) scores 0."""
    started = time.perf_counter()
    if not ctx.has_problems:
        return _skipped(ctx, "unanswered", _no_golds(), started)
    fn = ctx.function

    def check(case: Case) -> Counterexample | None:
        result = _score(fn, case)
        if result.accuracy > 0.0:
            return Counterexample(case, f"scored {_said(result)} without a final answer", 0.0)
        return None

    search = falsify(
        ctx, ctx.strategy(vs.unanswered_cases), check, explicit=_covering(ctx, "unanswered")
    )
    return _result(ctx, "unanswered", search, started)


def unverifiable_gold(ctx: Context) -> PropertyResult:
    """A gold the verifier cannot read gives status ``unverifiable`` (never a silent 0)."""
    started = time.perf_counter()
    fn = ctx.function

    def check(case: Case) -> Counterexample | None:
        result = _score(fn, case)
        if result.status != "unverifiable":
            message = f"the unreadable gold {short(case.gold, 40)} gave {_said(result)}"
            return Counterexample(case, message, 0.0, "unverifiable")
        return None

    search = falsify(ctx, ctx.strategy(vs.unreadable_gold_cases), check)
    return _result(ctx, "unverifiable_gold", search, started)


def golden_cases(ctx: Context) -> PropertyResult:
    """Every case of the case file of this problem type gets the verdict it expects."""
    started = time.perf_counter()
    name = "golden_cases"
    if ctx.cases is None:
        return _skipped(ctx, name, "no case file (--cases FILE.jsonl)", started)
    ptype = ctx.subject.problem_type.value
    mine = [c for c in ctx.cases if c.problem_type == ptype]
    if not mine:
        return _skipped(ctx, name, f"{ctx.cases_source} has no case of {ptype}", started)
    functions: dict[str, RewardFunction] = {}
    wrong: list[tuple[GoldenCase, list[str]]] = []
    for case in mine:
        key = json.dumps(case.params, sort_keys=True)
        if key not in functions:
            params = ctx.subject.params if case.params is None else case.params
            functions[key] = _with_params(ctx, params)
        result = functions[key](case.response, case.answer, case.options)
        problems = disagreements(case, result)
        if problems:
            wrong.append((case, problems))
    seconds = time.perf_counter() - started
    if not wrong:
        return PropertyResult(name, "held", CONTRACT[name], len(mine), seconds=seconds)
    case, problems = wrong[0]
    ids = ", ".join(c.id for c, _ in wrong[:5]) + (", …" if len(wrong) > 5 else "")
    message = (
        f"{len(wrong)} of {len(mine)} cases of {ctx.cases_source} disagree ({ids}); "
        f"{case.id}: {'; '.join(problems)}"
    )
    example = {
        "response": case.response,
        "answer": answer_text(case.answer),
        "options": case.options,
        "form": case.id,
    }
    line = case.model_dump_json(exclude_defaults=True)
    return PropertyResult(
        name, "broken", CONTRACT[name], len(mine), message, example, line, seconds
    )


def _with_params(ctx: Context, params: Any) -> RewardFunction:
    info = ctx.subject.info
    return reward_function_for(ctx.subject.problem_type, (info.name, info.version, params))


def _skipped(ctx: Context, name: str, why: str, started: float) -> PropertyResult:
    return PropertyResult(
        name, "skipped", CONTRACT[name], 0, why, seconds=time.perf_counter() - started
    )


#: The properties, in report order.
PROPERTIES: dict[str, Callable[[Context], PropertyResult]] = {
    "never_raises": never_raises,
    "bounded_time": bounded_time,
    "deterministic": deterministic,
    "cross_process": cross_process,
    "picklable": picklable,
    "thread_safe": thread_safe,
    "gold_forms": gold_forms,
    "wrong_answers": wrong_answers,
    "hedges": hedges,
    "unanswered": unanswered,
    "unverifiable_gold": unverifiable_gold,
    "golden_cases": golden_cases,
}
