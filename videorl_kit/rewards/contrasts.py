"""Opposite words, for telling a near-copy of a sentence from a contradiction.

"The man closes the door" shares most words with "The man opens the door" and states the
opposite event. A rule-based grader cannot understand sentences, but it can know closed sets
of opposites: actions (open / close, enter / leave, sit / stand, push / pull), directions and
places (left / right, up / down, on / off, inside / outside) and states (full / empty, asleep
/ awake). :func:`contrast` finds the swaps between two token lists (a word of one side in the
answer but not in the gold, and a word of the other side in the gold but not in the answer;
writing both, "opens the door and then closes it", is no swap) and counts them only when
putting the gold's words back makes the answer the gold, nearly word for word (ROUGE-L F at
least :data:`SUBSTITUTED_SIMILARITY`). So a converse that describes the same fact in another
order is no contradiction: "The table is below the lamp" for "The lamp is above the table",
"The boy takes the ball from the girl" for "The girl gives the ball to the boy".

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

from videorl_kit.rewards.sequence import lcs_length

#: ROUGE-L F of the answer, with the gold's words put back for the swapped ones, against the
#: gold from which the swap is a contradiction (a substitution, not a rephrasing).
SUBSTITUTED_SIMILARITY = 0.8

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
    ("on", "off"),
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


@cache
def _pairs() -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """Each pair of :data:`OPPOSITES` as two sets of forms."""
    return tuple((frozenset(one.split()), frozenset(other.split())) for one, other in OPPOSITES)


@cache
def _pairs_of_word() -> dict[str, tuple[int, ...]]:
    """The pairs (indexes into :func:`_pairs`) each form belongs to."""
    index: dict[str, list[int]] = {}
    for i, (one, other) in enumerate(_pairs()):
        for form in one | other:
            index.setdefault(form, []).append(i)
    return {form: tuple(pairs) for form, pairs in index.items()}


def contrast(answer: list[str], gold: list[str]) -> tuple[str, str] | None:
    """``(answer word, gold word)`` of the first swap between two opposites that makes the
    answer contradict the gold, or None (see the module docstring).

    Example:
        >>> contrast("the boy turns the light off".split(), "the boy turns the light on".split())
        ('off', 'on')
        >>> contrast("the man puts down the box".split(), "the man picks up the box".split())
        ('down', 'up')
        >>> contrast("the lamp is below the table".split(), "the lamp is above the table".split())
        ('below', 'above')
        >>> contrast("the table is below the lamp".split(), "the lamp is above the table".split())
        ... # None: a converse
    """
    said, meant = frozenset(answer), frozenset(gold)
    pairs, pairs_of_word = _pairs(), _pairs_of_word()
    touched = {i for word in said - meant for i in pairs_of_word.get(word, ())}
    swaps: dict[str, str] = {}
    for one, other in (pairs[i] for i in sorted(touched)):
        for this, that in ((one, other), (other, one)):
            if this & said and not this & meant and that & meant and not that & said:
                swaps.update(dict.fromkeys(this & said, min(that & meant)))
    if not swaps:
        return None
    restored = [swaps.get(word, word) for word in answer]
    common = lcs_length(restored, gold)
    if 2 * common < SUBSTITUTED_SIMILARITY * (len(restored) + len(gold)):  # ROUGE-L F < bound
        return None
    first = min(swaps)
    return first, swaps[first]


def offered_opposite(answer: list[str], gold: list[str]) -> tuple[str, str] | None:
    """``(answer word, gold word)`` when the answer states a word of the gold *and* its
    opposite (``opens or closes`` for ``opens``), else None. The caller decides whether the two
    are offered as alternatives (round 4: ``The man opens or closes the door`` kept ROUGE 0.65
    while either side alone scores 1 or 0, so the hedge beat a guess).

    Example:
        >>> offered_opposite("he opens or closes the door".split(), "he opens the door".split())
        ('closes', 'opens')
        >>> offered_opposite("he opens the door".split(), "he opens the door".split())
    """
    said, meant = frozenset(answer), frozenset(gold)
    pairs, pairs_of_word = _pairs(), _pairs_of_word()
    for word in sorted(said - meant):
        for i in pairs_of_word.get(word, ()):
            one, other = pairs[i]
            that = other if word in one else one
            if that & meant and that & said:
                return word, min(that & meant & said)
    return None
