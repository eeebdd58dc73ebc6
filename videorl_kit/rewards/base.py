"""The contract every verifier implements (built-in and third-party alike).

A *verifier* grades the **extracted** final answer of one response against the ground truth.
Extraction (``<answer>`` block, final statement, hedge detection) and the format reward are done
once by :mod:`videorl_kit.rewards.extract` and :mod:`videorl_kit.rewards.format`; a verifier only
sees the answer text, with Unicode compatibility forms already folded in it, the ground truth
and the options (``Ｂ`` is ``B``, ``３½`` is ``3 1/2``; a verifier registered with
``raw_text=True`` gets them as written).

Shape of a verifier:

* a class whose ``__init__`` takes one argument, an instance of its pydantic *params model*
  (``extra="forbid"``; use :class:`~videorl_kit.core.verifiers.NoParams` when there is
  nothing to configure);
* a method ``score(answer_text, gold, options) -> VerifyOutcome``;
* registered with :func:`videorl_kit.core.verifiers.register_verifier`.

Rules for ``score``:

* ``accuracy`` in [0, 1]; deterministic; no global state; safe to call from any thread;
  the instance must be picklable (plain attributes only, no open handles or locks).
* Bad *model output* is never an exception: return ``VerifyOutcome.wrong("reason")``.
  (An exception that escapes anyway is a verifier bug: the router turns it into status
  ``error`` with the exception's class and message in ``details``; trainers mask it.)
* A ground truth the verifier cannot read is ``VerifyOutcome.unverifiable("reason")``:
  never a silent 0 with status ``ok``.
* Bounded time on any input (1 MB of adversarial text): only linear-time regexes, cap lengths.

Example:
    >>> from pydantic import BaseModel, ConfigDict
    >>> from videorl_kit.rewards.base import VerifyOutcome
    >>> from videorl_kit.core.verifiers import register_verifier
    >>> class ExactParams(BaseModel):
    ...     model_config = ConfigDict(extra="forbid", frozen=True)
    ...     case_sensitive: bool = False
    >>> @register_verifier(
    ...     name="doc_exact", version=1, problem_types=("open_ended",), params_model=ExactParams
    ... )
    ... class ExactVerifier:
    ...     '''1 when the answer equals the ground truth.'''
    ...
    ...     def __init__(self, params: ExactParams) -> None:
    ...         self.params = params
    ...
    ...     def score(self, answer_text, gold, options=None):
    ...         if not gold.strip():
    ...             return VerifyOutcome.unverifiable("empty ground truth")
    ...         fold = (lambda s: s) if self.params.case_sensitive else str.casefold
    ...         same = fold(answer_text.strip()) == fold(gold.strip())
    ...         return VerifyOutcome.ok(1.0 if same else 0.0, pred=answer_text.strip())
    >>> ExactVerifier(ExactParams()).score("Paris", "paris").accuracy
    1.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Status = Literal["ok", "unverifiable", "error"]
"""``ok``: the answer was graded. ``unverifiable``: the ground truth could not be read.
``error``: the verifier (or the extraction) failed on this input: a bug, never a verdict."""

STATUS_OK: Status = "ok"
STATUS_UNVERIFIABLE: Status = "unverifiable"
STATUS_ERROR: Status = "error"
#: Statuses without a training signal: trainers mask them (never read them as "wrong").
MASKED_STATUSES: frozenset[str] = frozenset({STATUS_UNVERIFIABLE, STATUS_ERROR})


def clamp01(value: float) -> float:
    """Clamp ``value`` to [0, 1]; NaN becomes 0.

    Example:
        >>> clamp01(1.5), clamp01(-2.0), clamp01(float("nan"))
        (1.0, 0.0, 0.0)
    """
    if value != value or (math.isinf(value) and value < 0):
        return 0.0
    return 0.0 if value < 0.0 else 1.0 if value > 1.0 else float(value)


@dataclass(frozen=True, slots=True)
class VerifyOutcome:
    """What a verifier says about one extracted answer.

    ``details`` holds explanation data (parsed prediction, parsed gold, reason); values should
    be JSON-serialisable (str, numbers, bools, lists, dicts, None).

    Example:
        >>> VerifyOutcome.ok(1.0, pred="B", gold="B").accuracy
        1.0
        >>> VerifyOutcome.wrong("hedged answer").details["reason"]
        'hedged answer'
        >>> VerifyOutcome.unverifiable("gold is not a number").status
        'unverifiable'
    """

    accuracy: float
    status: Status = STATUS_OK
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def ok(cls, accuracy: float, **details: Any) -> VerifyOutcome:
        """A graded answer with ``accuracy`` clamped to [0, 1]."""
        return cls(clamp01(accuracy), STATUS_OK, details)

    @classmethod
    def wrong(cls, reason: str, **details: Any) -> VerifyOutcome:
        """A graded answer that scores 0, with the reason (e.g. unparseable, hedged)."""
        return cls(0.0, STATUS_OK, {"reason": reason, **details})

    @classmethod
    def unverifiable(cls, reason: str, **details: Any) -> VerifyOutcome:
        """The ground truth cannot be read: accuracy 0, status ``unverifiable``."""
        return cls(0.0, STATUS_UNVERIFIABLE, {"reason": reason, **details})


@runtime_checkable
class Verifier(Protocol):
    """Structural type of a verifier instance (see the module docstring)."""

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """Grade ``answer_text`` (the extracted final answer) against ``gold``."""
        ...
