"""What ``reward check`` finds broken on main today: the one list of known failures.

``tests/rewards/test_reward_check.py`` marks each (verifier, property) pair below as a strict
xfail, and ``tests/rewards/test_extending_docs.py`` expects exactly these properties broken for
the guide's ``event_order`` example. A pair fails for one or more *families* of wrong readings.

Issue 19 §2 (branch ``families``) fixes the families marked ``issue 19 §2``: each was checked
against that branch (at 5c51c8c, where every pair made only of them holds). When such a fix
is merged, delete its line from :data:`FAMILIES`: a pair left with no family is no longer
expected to fail (its strict xfail would otherwise fail the suite), and the guide's example
must then hold that property. The families not in issue 19 still fail on that branch too.

Seen on that branch as well (not a family: ``bounded_time``, all types): 1 MB of repeated
``\\boxed{}`` answers takes 180-320 ms there on a loaded 2-core machine (0.4 ms on main), over
the suite's 200 ms budget (and the 50 ms contract): that reading needs to be made cheaper.
"""

from __future__ import annotations

import pytest

#: Family → what goes wrong, with a shrunk example from ``reward check`` (gold first).
FAMILIES: dict[str, str] = {
    "boxed": "issue 19 §2, several \\boxed{} answers that disagree: the last one wins "
    "(gold A: '\\boxed{B}, then \\boxed{A}' scores 1)",
    "think_only": "issue 19 §2, an answer stated only inside <think>, nothing after it: "
    "graded instead of unanswered (gold A: '<think>... The answer is A.</think>' scores 1)",
    "boolean_both": "issue 19 §2, a boolean answer that states both verdicts "
    "(gold no: '<answer>no yes</answer>', 'no. No wait, yes.' score 1)",
    "boolean_negated": "issue 19 §2, a negated verdict word "
    "(gold yes: 'I would not say yes' scores 1)",
    "exponent": "issue 19 §2, an exponent beyond the float range is dropped "
    "(gold 12: '12e99999' scores 1)",
    "sign_word": "issue 19 §2, a sign written as a word is dropped (gold 12: 'minus 12' scores 1)",
    "choice_next_line": "a letter, then another option on the next line "
    "(gold A: '<answer>(A)\\nB</answer>' scores 1; fixed on branch families too)",
    "choice_letter_and_text": "not in issue 19: a letter joined to another option's text "
    "(gold A of ['A. Red', 'B. Blue']: '<answer>(A) and Blue</answer>' scores 1; "
    "also on branch families)",
    "critic_both_labels": "not in issue 19: both response labels, one per line or 'Tie and' "
    "a label (gold Response 1: '<answer>Response 1\\nResponse 2</answer>' scores 1, gold Tie: "
    "'Tie and Response 1' scores 1; also on branch families)",
}

_ALL_BUT_CODE = (
    "choice", "numeric", "mra", "boolean", "temporal_iou", "box_iou", "spatiotemporal_iou",
    "tracking_iou", "wer", "rouge", "math", "preference",
)  # fmt: skip
_EXTRA_HEDGES = {
    "choice": ("choice_next_line", "choice_letter_and_text"),
    "boolean": ("boolean_both",),
    "preference": ("critic_both_labels",),
}

#: (verifier, property) → the families that break it. ``event_order`` is the worked example
#: of docs/extending.md (it reads answers with the kit's shared extraction).
PAIRS: dict[tuple[str, str], tuple[str, ...]] = {
    **{(v, "hedges"): ("boxed", *_EXTRA_HEDGES.get(v, ())) for v in _ALL_BUT_CODE},
    **{(v, "unanswered"): ("think_only",) for v in _ALL_BUT_CODE},
    ("numeric", "wrong_answers"): ("exponent", "sign_word"),
    ("mra", "wrong_answers"): ("exponent", "sign_word"),
    ("boolean", "wrong_answers"): ("boolean_negated",),
    ("event_order", "hedges"): ("boxed",),
    ("event_order", "unanswered"): ("think_only",),
}


def known_failing(verifier: str, prop: str) -> str | None:
    """Why ``prop`` fails for ``verifier`` on main, or None when it must hold.

    Example:
        >>> known_failing("numeric", "never_raises") is None
        True
        >>> known_failing("numeric", "unanswered").startswith("issue 19 §2, an answer stated")
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
