"""What ``reward check`` finds broken on main today: the one list of known failures.

``tests/rewards/test_reward_check.py`` marks each (verifier, property) pair below as a strict
xfail, and ``tests/rewards/test_extending_docs.py`` expects exactly these properties broken for
the guide's ``event_order`` example. A pair fails for one or more *families* of wrong readings.
When a family is fixed, delete its line from :data:`FAMILIES`: a pair left with no family is
no longer expected to fail (its strict xfail would otherwise fail the suite).

Empty today: the families of issue 19 §2, a letter joined to another option's text
(``(A) and Blue``) and a critic judgement that lists both labels (``Response 1\nResponse 2``)
are fixed, and their shrunk examples are cases in ``tests/golden``.
"""

from __future__ import annotations

import pytest

#: Family → what goes wrong, with a shrunk example from ``reward check`` (gold first).
FAMILIES: dict[str, str] = {}

#: (verifier, property) → the families that break it. ``event_order`` is the worked example
#: of docs/extending.md (it reads answers with the kit's shared extraction).
PAIRS: dict[tuple[str, str], tuple[str, ...]] = {}


def known_failing(verifier: str, prop: str) -> str | None:
    """Why ``prop`` fails for ``verifier`` on main, or None when it must hold.

    Example:
        >>> known_failing("numeric", "never_raises") is None
        True
    """
    reasons = [FAMILIES[f] for f in PAIRS.get((verifier, prop), ()) if f in FAMILIES]
    return "; ".join(reasons) or None


def xfail_marks(verifier: str, prop: str) -> list[pytest.MarkDecorator]:
    """A strict xfail naming the families, for a pair that fails on main; else no mark."""
    why = known_failing(verifier, prop)
    return [pytest.mark.xfail(reason=why, strict=True)] if why else []


def broken_properties(verifier: str) -> set[str]:
    """The properties ``reward check`` finds broken for ``verifier`` on main."""
    return {prop for v, prop in PAIRS if v == verifier and known_failing(v, prop)}
