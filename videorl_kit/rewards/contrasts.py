"""Opposite words, for telling a near-copy of a sentence from a contradiction.

"The man closes the door" shares most words with "The man opens the door" and states the
opposite event. A rule-based grader cannot understand sentences, but it can know closed sets
of opposites: actions (open / close, enter / leave, sit / stand, turn on / turn off),
directions and places (left / right, up / down, inside / outside) and states (full / empty,
asleep / awake). :func:`contrast` finds one swap between two token lists: a word of one
side in the answer but not in the gold, and a word of the other side in the gold but not in
the answer. Writing both ("opens the door and then closes it") is no swap.

Only opposites count: a different member of a category (another colour, count or person: "A
woman is chopping" for "A man is chopping") is a wrong detail, which ROUGE already scores
lower, not the opposite event.

Tokens are lower-case ``[a-z0-9]+`` words (as ``rouge_score`` makes them).

Example:
    >>> contrast("the man closes the door".split(), "the man opens the door".split())
    ('closes', 'opens')
    >>> contrast("a woman opens the door".split(), "a man opens the door".split()) is None
    True
"""

from __future__ import annotations

from functools import cache

#: Pairs of opposites; each side lists its forms, separated by spaces.
OPPOSITES: tuple[tuple[str, str], ...] = (
    (
        "open opens opened opening unlock unlocks unlocked",
        "close closes closed closing shut shuts shutting lock locks locked",
    ),
    (
        "enter enters entered entering arrive arrives arrived arriving",
        "leave leaves left leaving exit exits exited exiting depart departs departed",
    ),
    ("sit sits sat sitting", "stand stands stood standing"),
    ("push pushes pushed pushing", "pull pulls pulled pulling"),
    (
        "start starts started starting begin begins began beginning",
        "stop stops stopped stopping finish finishes finished finishing",
    ),
    (
        "rise rises rose rising raise raises raised raising lift lifts lifted lifting",
        "fall falls fell falling lower lowers lowered lowering drop drops dropped dropping",
    ),
    (
        "increase increases increased increasing grow grows grew growing",
        "decrease decreases decreased decreasing shrink shrinks shrank shrinking",
    ),
    ("win wins won winning", "lose loses lost losing"),
    ("give gives gave giving", "take takes took taking"),
    ("throw throws threw throwing", "catch catches caught catching"),
    ("buy buys bought buying", "sell sells sold selling"),
    ("add adds added adding", "remove removes removed removing"),
    ("appear appears appeared appearing", "disappear disappears disappeared vanish vanishes"),
    ("laugh laughs laughed laughing", "cry cries cried crying"),
    ("smile smiles smiled smiling", "frown frowns frowned frowning"),
    ("accept accepts accepted accepting", "reject rejects rejected rejecting"),
    ("succeed succeeds succeeded", "fail fails failed failing"),
    ("up upward upwards upstairs", "down downward downwards downstairs"),
    ("left", "right"),
    ("forward forwards", "backward backwards"),
    ("toward towards", "away"),
    ("into", "out"),
    ("inside indoors", "outside outdoors"),
    ("above over", "below under beneath"),
    ("before", "after"),
    ("top", "bottom"),
    ("front", "behind back"),
    ("clockwise", "counterclockwise anticlockwise"),
    ("north", "south"),
    ("east", "west"),
    ("first", "last"),
    ("more", "less fewer"),
    ("full", "empty"),
    ("hot warm", "cold cool"),
    ("fast quickly", "slow slowly"),
    ("big large huge", "small little tiny"),
    ("tall", "short"),
    ("young", "old"),
    ("wet", "dry"),
    ("clean", "dirty"),
    ("awake", "asleep"),
    ("alive", "dead"),
    ("happy", "sad"),
    ("same", "different"),
    ("day daytime", "night nighttime"),
)
#: Opposites only in a sentence with one of the context words: "on" and "off" after "turn" or
#: "switch" ("turns the light off"), not in "jumps off the boat on the lake".
CONTEXT_OPPOSITES: tuple[tuple[str, tuple[str, str]], ...] = (
    ("turn turns turned turning switch switches switched switching", ("on", "off")),
)


Side = frozenset[str]


@cache
def _pairs() -> tuple[tuple[Side, Side, Side], ...]:
    """``(context words, one side, other side)`` per pair; an empty context is everywhere."""
    plain = [("", pair) for pair in OPPOSITES]
    return tuple(
        (frozenset(context.split()), frozenset(one.split()), frozenset(other.split()))
        for context, (one, other) in plain + list(CONTEXT_OPPOSITES)
    )


def contrast(answer: list[str], gold: list[str]) -> tuple[str, str] | None:
    """``(answer word, gold word)`` of the first swap between two opposites, or None (see the
    module docstring).

    Example:
        >>> contrast("the boy turns the light off".split(), "the boy turns the light on".split())
        ('off', 'on')
        >>> contrast("the man puts down the box".split(), "the man picks up the box".split())
        ('down', 'up')
    """
    said, meant = frozenset(answer), frozenset(gold)
    for context, one, other in _pairs():
        if context and not (context & said and context & meant):
            continue
        for this, that in ((one, other), (other, one)):
            if this & said and not this & meant and that & meant and not that & said:
                return min(this & said), min(that & meant)
    return None
