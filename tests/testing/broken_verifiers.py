"""Verifiers that each break one rule of the verifier contract, on purpose.

Each wraps the kit's ``numeric`` verifier (so it reads numbers as a real verifier does) and adds
one defect of the kind a plugin author writes by accident. They register under their own
names (``broken_*``), and live at the top of an importable module, so that the checker's
other process can import them by path (``tests.testing.broken_verifiers:RaisesOnSevens``).
"""

from __future__ import annotations

import threading
import time

from videorl_kit.core.verifiers import NoParams, register_verifier
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.numeric import NumericParams, NumericVerifier

MODULE = __name__


class _Numeric:
    """``numeric`` with its default params, behind a verifier without params."""

    def __init__(self, params: NoParams) -> None:
        self.params = params
        self._inner = NumericVerifier(NumericParams())

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        return self._inner.score(answer_text, gold, options)


@register_verifier(name="broken_raises", version=1, problem_types=["numerical"])
class RaisesOnBlank(_Numeric):
    """Reads the first word of the answer without checking there is one."""

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        first = answer_text.split()[0]  # IndexError on a blank answer
        return super().score(first, gold, options)


@register_verifier(name="broken_hedge", version=1, problem_types=["numerical"])
class AcceptsHedges(_Numeric):
    """Credits any answer that mentions the gold (``"12 or 13"`` scores 1)."""

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        if gold.strip() and gold.strip() in answer_text.split():
            return VerifyOutcome.ok(1.0, pred=answer_text)
        return super().score(answer_text, gold, options)


@register_verifier(name="broken_state", version=1, problem_types=["numerical"])
class KeepsState(_Numeric):
    """Scores an answer it saw on the previous call 0 (a "duplicate" filter kept on self)."""

    def __init__(self, params: NoParams) -> None:
        super().__init__(params)
        self._last: str | None = None

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        repeated, self._last = answer_text == self._last, answer_text
        if repeated:
            return VerifyOutcome.wrong("the same answer as before")
        return super().score(answer_text, gold, options)


@register_verifier(name="broken_slow", version=1, problem_types=["numerical"])
class SlowOnLongInput(_Numeric):
    """Takes a microsecond per character of the answer (1 s for 1 MB)."""

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        time.sleep(len(answer_text) * 1e-6)
        return super().score(answer_text, gold, options)


@register_verifier(name="broken_hash", version=1, problem_types=["numerical"])
class HashOrdered(_Numeric):
    """Reads the first number of a set of candidates: which one depends on the hash seed."""

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        words = {w for w in answer_text.replace(",", " ").split() if w}
        if len(words) > 1:
            return super().score(next(iter(words)), gold, options)
        return super().score(answer_text, gold, options)


@register_verifier(name="broken_pickle", version=1, problem_types=["numerical"])
class HoldsALock(_Numeric):
    """Keeps a lock on the instance, which no worker process can receive."""

    def __init__(self, params: NoParams) -> None:
        super().__init__(params)
        self._lock = threading.Lock()


@register_verifier(name="broken_threads", version=1, problem_types=["numerical"])
class SharesAScratchpad(_Numeric):
    """Parks the gold on the instance between two steps: threads overwrite each other's."""

    def __init__(self, params: NoParams) -> None:
        super().__init__(params)
        self._gold = ""

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        self._gold = gold
        time.sleep(0.0005)  # the GIL is released here, as it is in any real I/O or C call
        return super().score(answer_text, self._gold, options)
