""" "Did you mean" suggestions, worded the same way in every message of the kit.

Example:
    >>> did_you_mean("pathh", ["path", "problem", "solution"])
    "; did you mean 'path'?"
    >>> did_you_mean("zzz", ["path"])
    ''
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

SUGGESTION_CUTOFF = 0.6
"""How close (difflib ratio) a candidate must be to be suggested."""


def close_matches(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``candidates`` closest to ``word``, best first (difflib).

    Example:
        >>> close_matches("multple choice", ["multiple choice", "numerical"])
        ['multiple choice']
    """
    return difflib.get_close_matches(str(word), list(candidates), n=n, cutoff=SUGGESTION_CUTOFF)


def did_you_mean(word: str, candidates: Iterable[str], n: int = 3) -> str:
    """``"; did you mean 'a' or 'b'?"`` for the close matches of ``word``, else ``""``.

    Example:
        >>> did_you_mean("numric", ["numeric", "choice"])
        "; did you mean 'numeric'?"
    """
    close = close_matches(word, candidates, n=n)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
