"""The ``math`` verifier: math-verify without signals, bounded in time, usable from threads."""

from __future__ import annotations

import threading
import time

import pytest

from videorl_kit.rewards.math import (
    MathParams,
    MathTimeout,
    MathVerifier,
    math_candidate,
    run_with_timeout,
)

MATH = MathVerifier(MathParams())


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("\\frac{1}{2}", "0.5"),
        ("1/2", "\\frac{1}{2}"),
        ("x = 2", "2"),
        ("2x+1", "1+2x"),
        ("\\boxed{\\sqrt{2}}", "\\sqrt{2}"),
        ("The value is $\\frac{\\sqrt{3}}{2}$", "\\frac{\\sqrt{3}}{2}"),
        ("(B)", "B"),
    ],
)
def test_equivalent_answers(answer: str, gold: str) -> None:
    outcome = MATH.score(answer, gold)
    assert outcome.accuracy == 1.0, outcome.details


def test_wrong_answer_scores_zero() -> None:
    assert MATH.score("0.6", "1/2").accuracy == 0.0


def test_unparseable_gold_is_unverifiable() -> None:
    assert MATH.score("1", "").status == "unverifiable"
    assert MATH.score("1", "((((").status == "unverifiable"


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("(" * 40 + ")" * 40, "nested deeper"),
        ("((x+1)", "unbalanced"),
        ("10^{10^{10}}", "too large"),
        ("2^{123456}", "too large"),
        ("(10^5)!", "too large"),
        ("word " * 30, "plain words"),
        ("1" * 300, "too long"),
    ],
)
def test_junk_is_screened_before_math_verify(answer: str, reason: str) -> None:
    assert reason in (math_candidate(answer, 256)[1] or "")
    started = time.perf_counter()
    outcome = MATH.score(answer, "1")
    assert outcome.accuracy == 0.0
    assert time.perf_counter() - started < 0.5  # screened: math-verify is never called


def test_works_from_a_worker_thread() -> None:
    # verl PR#5635: math-verify's signal.alarm fails off the main thread, scores became 0.
    results: list[float] = []
    worker = threading.Thread(target=lambda: results.append(MATH.score("0.5", "1/2").accuracy))
    worker.start()
    worker.join(30)
    assert results == [1.0]


def test_timeout_scores_zero_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    import videorl_kit.rewards.math as math_module

    real_parse, real_verify = math_module._load_math_verify()

    def slow_verify(*args: object, **kwargs: object) -> bool:
        time.sleep(1.0)
        return bool(real_verify(*args, **kwargs))

    monkeypatch.setattr(math_module, "_math_verify", (real_parse, slow_verify))
    fast = MathVerifier(MathParams(timeout_s=0.05))
    outcome = fast.score("x + 1", "1 + x")
    assert outcome.accuracy == 0.0
    assert outcome.details["reason"].startswith("timeout")


def test_run_with_timeout_passes_results_and_errors() -> None:
    assert run_with_timeout(lambda: 7, 1.0) == 7
    with pytest.raises(ZeroDivisionError):
        run_with_timeout(lambda: 1 / 0, 1.0)
    with pytest.raises(MathTimeout):
        run_with_timeout(lambda: time.sleep(0.5), 0.01)
