"""``check_verifier``: the verifier contract of docs/extending.md, run as properties.

Example:
    >>> report = check_verifier("boolean", examples=10, seed=1,
    ...                         properties=["never_raises", "gold_forms", "unverifiable_gold"])
    >>> report.ok, [p.status for p in report.properties]
    (True, ['held', 'held', 'held'])
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel

from videorl_kit.core.errors import UserError
from videorl_kit.testing import strategies as vs
from videorl_kit.testing.cases import GoldenCase, load_cases
from videorl_kit.testing.kinds import (
    Kind,
    Problem,
    generic_kind,
    has_kind,
    kind_for,
    problems_from_cases,
)
from videorl_kit.testing.properties import PROPERTIES, Context
from videorl_kit.testing.report import CONTRACT, PropertyResult, VerifierReport, short
from videorl_kit.testing.subject import Subject, resolve_verifier

#: Examples per Hypothesis property when none is given (``reward check --examples``).
DEFAULT_EXAMPLES = 100
#: Seconds an input of up to :data:`LONG_INPUT_BYTES` bytes (UTF-8) may take.
DEFAULT_TIME_BUDGET_S = 0.05
LONG_INPUT_BYTES = 1_000_000
#: Golds (given, or the kind's own) whose every form is tried before the search.
COVERED_GOLDS = 5


def _problem_source(
    subject: Subject,
    golds: Sequence[str] | None,
    options: Sequence[str] | None,
    cases: list[GoldenCase] | None,
) -> tuple[Kind, st.SearchStrategy[Problem], bool]:
    """How the check draws problems: the type's kind, or what the user's golds and cases say."""
    ptype = subject.problem_type.value
    if has_kind(ptype):
        kind = kind_for(ptype)
        if golds is None:
            return kind, kind.problems, True
        return kind, vs.problems(kind, golds=golds, options=options), bool(golds)
    known = problems_from_cases(cases or [], ptype)
    if golds is not None:
        graded = {(p.gold, p.options): p for p in known}
        opts = None if options is None else tuple(options)
        known = [graded.get((gold, opts)) or Problem(gold, opts, (gold,), ()) for gold in golds]
    kind = generic_kind(ptype, known)
    return kind, kind.problems, bool(known)


def check_verifier(
    verifier: Any,
    *,
    problem_type: str | None = None,
    params: Mapping[str, Any] | BaseModel | None = None,
    golds: Sequence[str] | None = None,
    options: Sequence[str] | None = None,
    cases: str | Path | Iterable[GoldenCase] | None = None,
    examples: int = DEFAULT_EXAMPLES,
    seed: int | None = None,
    time_budget_s: float = DEFAULT_TIME_BUDGET_S,
    long_input_bytes: int = LONG_INPUT_BYTES,
    properties: Iterable[str] | None = None,
    threads: int = 4,
) -> VerifierReport:
    """Check ``verifier`` against the verifier contract; never raises on a broken verifier.

    ``verifier``: a registered name (``"numeric"``, ``"numeric@2"``), an import path
    (``"mypkg.verifiers:Ordering"``), a class decorated with ``@register_verifier``, or an
    instance. ``golds`` (with ``options``) replace the generated golds; a problem type the kit
    generates no answers for takes its golds, forms and wrong answers from ``golds`` and the
    case file. ``cases``: a golden case file (the kit's JSONL layout) or its cases, checked as
    the ``golden_cases`` property. ``examples``: inputs per searched property. ``seed``:
    reproduces a run (random when None; the report says which). ``time_budget_s``: seconds an
    input of up to ``long_input_bytes`` bytes (UTF-8) may take. ``properties``: a subset of
    :data:`~videorl_kit.testing.properties.PROPERTIES` (all by default).

    Raises :class:`~videorl_kit.core.errors.UserError` for what cannot be checked at all (an
    unknown verifier or property, a bad case file).

    Example:
        >>> r = check_verifier("numeric", golds=["12"], examples=20, seed=3,
        ...                    properties=["gold_forms"])
        >>> r.get("gold_forms").status
        'held'
    """
    subject = resolve_verifier(verifier, problem_type, params)
    chosen = list(PROPERTIES) if properties is None else list(properties)
    unknown = [name for name in chosen if name not in PROPERTIES]
    if unknown:
        raise UserError(
            f"unknown propert{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown)}; "
            f"choose from: {', '.join(PROPERTIES)}"
        )
    if examples < 1:
        raise UserError(f"examples must be at least 1, got {examples}")
    case_list, source = _cases(cases)
    kind, problem_strategy, has_problems = _problem_source(subject, golds, options, case_list)
    cover = [kind.from_gold(gold, options) for gold in (golds or kind.cover)[:COVERED_GOLDS]]
    run_seed = random.randrange(2**32) if seed is None else int(seed)
    ctx = Context(
        subject=subject,
        kind=kind,
        problems=problem_strategy,
        has_problems=has_problems,
        examples=examples,
        seed=run_seed,
        time_budget_s=time_budget_s,
        long_input_bytes=long_input_bytes,
        threads=threads,
        cases=case_list,
        cases_source=source,
        cover=tuple(p for p in cover if p is not None),
    )
    results = tuple(_run(name, ctx) for name in chosen)
    return VerifierReport(
        subject.label,
        subject.problem_type.value,
        subject.params.model_dump(mode="json"),
        run_seed,
        examples,
        results,
    )


def _cases(
    cases: str | Path | Iterable[GoldenCase] | None,
) -> tuple[list[GoldenCase] | None, str]:
    if cases is None:
        return None, ""
    if isinstance(cases, str | Path):
        return load_cases(cases), Path(cases).name
    return list(cases), "the cases given"


def _run(name: str, ctx: Context) -> PropertyResult:
    started = time.perf_counter()
    try:
        return PROPERTIES[name](ctx)
    except Exception as exc:  # the verifier broke the check itself (e.g. its constructor)
        message = f"the check failed: {type(exc).__name__}: {short(str(exc), 200)}"
        return PropertyResult(
            name, "broken", CONTRACT[name], 0, message,
            seconds=time.perf_counter() - started,
        )  # fmt: skip
