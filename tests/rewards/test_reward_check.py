"""Every built-in verifier keeps the verifier contract: ``reward check``, property by property.

The shared suite (:mod:`videorl_kit.testing`) checks what tests/rewards/test_properties.py
used to check per verifier (totality, arbitrary golds, determinism, threads, pickling, 1 MB
floods) and more: another process, the gold's accepted forms, wrong answers, hedges, an answer
only inside ``<think>``, unreadable golds, and each type's golden case file. CI runs a small
number of examples with a fixed seed (``HYPOTHESIS_PROFILE=stress`` runs many more).

The pairs listed in tests/rewards/known_failing.py (the one list) fail on main today, each
for the families named there (most of them issue 19 §2, fixed on another branch). They are
strict xfails: when a fix lands, the pair passes, the test fails, and the family's line is
deleted there.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest

from tests.rewards.known_failing import FAMILIES, PAIRS, xfail_marks
from videorl_kit.core.problem_types import ProblemType
from videorl_kit.core.verifiers import default_verifier_name, verifier_infos
from videorl_kit.testing import PROPERTIES, check_verifier

GOLDEN_DIR = Path(__file__).parent / "golden"
#: Inputs per searched property (each also tries every form of its family once first).
EXAMPLES = 500 if os.environ.get("HYPOTHESIS_PROFILE") == "stress" else 20
SEED = 0
#: The time budget for 1 MB here: 4× the command's 50 ms default, for a machine that runs the
#: whole suite and other jobs at once (benchmarks/bench_reward_check.py measures real times).
#: code_exec runs each answer as a program in a sandbox: its bound is a hang guard.
BUDGET_S = {"code_exec": 2.0}
DEFAULT_BUDGET_S = 0.2
#: code_exec starts a sandboxed process per answer: fewer examples.
EXAMPLES_FOR = {"code_exec": 5}

BUILTINS = [(ptype, default_verifier_name(ptype)) for ptype in ProblemType]


def _params() -> list[pytest.param]:
    params = []
    for ptype, verifier in BUILTINS:
        for prop in PROPERTIES:
            marks = xfail_marks(verifier, prop)
            params.append(pytest.param(ptype, verifier, prop, marks=marks, id=f"{verifier}-{prop}"))
    return params


@pytest.mark.parametrize(("ptype", "verifier", "prop"), _params())
def test_builtin_verifier_keeps_the_contract(ptype: ProblemType, verifier: str, prop: str) -> None:
    report = check_verifier(
        verifier,
        problem_type=ptype,
        cases=GOLDEN_DIR / f"{ptype.value}.jsonl",
        examples=EXAMPLES_FOR.get(verifier, EXAMPLES),
        seed=SEED,
        time_budget_s=BUDGET_S.get(verifier, DEFAULT_BUDGET_S),
        properties=[prop],
    )
    result = report.get(prop)
    assert result.status == "held", report.summary()


def _defined_in_the_kit(factory: object) -> bool:
    try:
        source = Path(inspect.getfile(factory))  # type: ignore[arg-type]
    except (TypeError, OSError):  # a documentation example, defined in a docstring
        return False
    return source.parent == Path(__file__).parents[2] / "videorl_kit" / "rewards"


def test_every_builtin_verifier_is_checked() -> None:
    builtin = {i.name for i in verifier_infos() if _defined_in_the_kit(i.factory)}
    assert builtin == {verifier for _, verifier in BUILTINS}


def test_the_known_failures_name_builtin_verifiers_and_known_families() -> None:
    verifiers = {verifier for _, verifier in BUILTINS} | {"event_order"}  # docs/extending.md
    assert {v for v, _ in PAIRS} <= verifiers and {p for _, p in PAIRS} <= set(PROPERTIES)
    # every family is named by a pair (a fixed family's line is deleted from FAMILIES, and
    # the pairs still naming it no longer count it)
    assert set(FAMILIES) <= {f for families in PAIRS.values() for f in families}
