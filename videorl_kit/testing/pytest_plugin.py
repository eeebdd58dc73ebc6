"""pytest plugin: the verifier contract as tests, in a few lines of a verifier author's file.

Installed with the kit (entry point ``pytest11``). A test that asks for the
``verifier_contract`` fixture runs once per property of the contract
(``test_x[never_raises]``, ``test_x[hedges]``, ...); the fixture is a function that checks
that property for the verifier it is given and fails the test with the counterexample
(Hypothesis's shrunk example, as a line to paste into the case file) and the seed::

    from pathlib import Path

    def test_ordering_keeps_the_verifier_contract(verifier_contract):
        verifier_contract(
            "mypkg.verifiers:Ordering",
            problem_type="ordering",
            cases=Path(__file__).parent / "golden" / "ordering.jsonl",
        )

Its keyword arguments are :func:`~videorl_kit.testing.check_verifier`'s. A property left
out by ``properties=[...]``, or that cannot run (no case file), is skipped. Options, which
override the test's own arguments: ``--verifier-examples N`` (inputs per property),
``--verifier-seed S`` (reproduce a failure) and ``--verifier-time-budget-ms MS`` (a busy
machine). Tests that do not ask for the fixture are not
touched, and nothing (Hypothesis included) is imported until one runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import videorl_kit.testing as testing
from videorl_kit.testing.report import CONTRACT

FIXTURE = "verifier_contract"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--verifier-examples`` and ``--verifier-seed``."""
    group = parser.getgroup("videorl-kit", "videorl-kit verifier contract")
    group.addoption(
        "--verifier-examples",
        type=int,
        default=None,
        help="inputs per property of the verifier_contract fixture (default: the test's, else 100)",
    )
    group.addoption(
        "--verifier-time-budget-ms",
        type=float,
        default=None,
        help="time an input of up to 1 MB may take (default: the test's, else 50 ms)",
    )
    group.addoption(
        "--verifier-seed",
        type=int,
        default=None,
        help="seed of the verifier_contract fixture (default: random; a failure names it)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per property for a test that asks for ``verifier_contract``."""
    if FIXTURE in metafunc.fixturenames:
        names = list(CONTRACT)
        metafunc.parametrize(FIXTURE, names, indirect=True, ids=names)


@pytest.fixture
def verifier_contract(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """A function ``(verifier, **check_verifier_arguments)`` that checks one property of the
    contract (this test's parameter) and fails the test with the counterexample."""
    prop = getattr(request, "param", None)
    examples = request.config.getoption("verifier_examples")
    seed = request.config.getoption("verifier_seed")
    budget_ms = request.config.getoption("verifier_time_budget_ms")

    def check(verifier: Any, **kwargs: Any) -> Any:
        wanted = kwargs.pop("properties", None)
        chosen = [prop] if prop is not None else list(wanted or CONTRACT)
        if wanted is not None and prop is not None and prop not in wanted:
            pytest.skip(f"{prop} is not among the properties this test checks")
        if examples is not None:
            kwargs["examples"] = examples
        if seed is not None:
            kwargs["seed"] = seed
        if budget_ms is not None:
            kwargs["time_budget_s"] = budget_ms / 1000.0
        report = testing.check_verifier(verifier, properties=chosen, **kwargs)
        if not report.ok:
            rerun = f"  rerun this test with: pytest --verifier-seed {report.seed}"
            pytest.fail(f"{report.summary()}\n{rerun}", pytrace=False)
        skipped = [p for p in report.properties if p.status == "skipped"]
        if prop is not None and skipped:
            pytest.skip(f"{prop}: {skipped[0].message}")
        return report

    return check
