"""Exact sequence metrics on token lists: edit distance and longest common subsequence.

Both are rapidfuzz's (bit-parallel, in C). Tokens are numbered first, each distinct token
its own integer, because rapidfuzz compares the elements of a list by a hash: ``""`` and
``"\\x00"`` would count as the same token.

Example:
    >>> edit_distance("a b c".split(), "a x c d".split())
    2
    >>> lcs_length("the cat sat".split(), "a cat sat down".split())
    2
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from rapidfuzz.distance import LCSseq, Levenshtein


def _numbered(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[list[int], list[int]]:
    """``a`` and ``b`` with each distinct token replaced by its own integer."""
    number: dict[Hashable, int] = {}
    return (
        [number.setdefault(token, len(number)) for token in a],
        [number.setdefault(token, len(number)) for token in b],
    )


def edit_distance(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Levenshtein distance between two token sequences.

    Example:
        >>> edit_distance([], ["x"]), edit_distance(["x"], ["x"]), edit_distance([""], ["\\x00"])
        (1, 0, 1)
        >>> edit_distance(["a", "b"], ["b", "a"])
        2
    """
    return Levenshtein.distance(*_numbered(a, b))


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of two token sequences.

    Example:
        >>> lcs_length(list("ABCBDAB"), list("BDCABA"))
        4
    """
    return LCSseq.similarity(*_numbered(a, b))
