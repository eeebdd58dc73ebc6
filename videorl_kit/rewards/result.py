"""The outcome of scoring one response: :class:`RewardResult`.

Example:
    >>> r = RewardResult(accuracy=1.0, format=0.0, overall=0.9, status="ok", details={})
    >>> r.to_dict()["overall"]
    0.9
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from videorl_kit.rewards.base import (
    MASKED_STATUSES,
    STATUS_ERROR,
    STATUS_OK,
    STATUS_UNVERIFIABLE,
    Status,
    clamp01,
)


@dataclass(frozen=True, slots=True)
class RewardResult:
    """Accuracy, format and combined reward of one response, plus an explanation.

    * ``accuracy``, ``format``, ``overall``: floats in [0, 1];
      ``overall = w_acc * accuracy + w_fmt * format``.
    * ``status``: ``"ok"`` (graded), ``"unverifiable"`` (the ground truth could not be read)
      or ``"error"`` (the verifier raised on this input: a bug, with ``details["error_type"]``
      and ``details["error"]``). Unverifiable and error results have accuracy and overall 0
      and carry no training signal: mask them (:attr:`masked`).
    * ``details``: the extracted answer, parsed prediction and gold, ``reason`` for a 0,
      the verifier name and version.

    Example:
        >>> RewardResult.unverifiable("gold is not a number", format=1.0).overall
        0.0
        >>> r = RewardResult.error(ZeroDivisionError("division by zero"), format=1.0)
        >>> r.status, r.masked, r.details["error"]
        ('error', True, 'ZeroDivisionError: division by zero')
    """

    accuracy: float
    format: float
    overall: float
    status: Status = STATUS_OK
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (
            0.0 <= self.accuracy <= 1.0 and 0.0 <= self.format <= 1.0 and 0.0 <= self.overall <= 1.0
        ):
            raise ValueError(
                "RewardResult accuracy, format and overall must be in [0, 1], got "
                f"{self.accuracy!r}, {self.format!r}, {self.overall!r}"
            )
        if self.status not in (STATUS_OK, *MASKED_STATUSES):
            raise ValueError(
                f"RewardResult.status must be 'ok', 'unverifiable' or 'error': {self.status}"
            )
        if self.status in MASKED_STATUSES and (self.accuracy != 0.0 or self.overall != 0.0):
            raise ValueError(f"a RewardResult with status {self.status!r} must score 0")

    @property
    def masked(self) -> bool:
        """True for ``unverifiable`` and ``error``: no training signal, leave it out."""
        return self.status in MASKED_STATUSES

    @classmethod
    def unverifiable(cls, reason: str, *, format: float = 0.0, **details: Any) -> RewardResult:
        """An unverifiable result (accuracy 0, overall 0) with ``details["reason"]``."""
        return cls(0.0, clamp01(format), 0.0, STATUS_UNVERIFIABLE, {"reason": reason, **details})

    @classmethod
    def error(cls, exc: BaseException, *, format: float = 0.0, **details: Any) -> RewardResult:
        """The result of a verifier that raised: status ``error``, accuracy and overall 0,
        ``details["error_type"]`` (the exception class) and ``details["error"]``
        (``"Class: message"``, at most 500 characters)."""
        return cls(0.0, clamp01(format), 0.0, STATUS_ERROR, {**details, **error_details(exc)})

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output (``details`` copied shallowly).

        Example:
            >>> sorted(RewardResult(1.0, 1.0, 1.0).to_dict())
            ['accuracy', 'details', 'format', 'overall', 'status']
        """
        return {
            "accuracy": self.accuracy,
            "format": self.format,
            "overall": self.overall,
            "status": self.status,
            "details": dict(self.details),
        }


def error_details(exc: BaseException) -> dict[str, str]:
    """``{"error_type": class name, "error": "Class: message"}`` (message cut to 500 chars).

    Example:
        >>> error_details(KeyError("boom"))
        {'error_type': 'KeyError', 'error': "KeyError: 'boom'"}
    """
    name = type(exc).__name__
    return {"error_type": name, "error": f"{name}: {exc}"[:500]}
