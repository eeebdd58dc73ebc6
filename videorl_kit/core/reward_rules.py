"""How a reward is assembled: the weights of its parts, the format rules, what is graded.

``overall = weights.accuracy * accuracy + weights.format * format``. The two weights sum to
1, so a perfect response scores exactly 1 and every task's rewards share one scale.
The format rules and answer sources are named here; :mod:`videorl_kit.rewards.format`
and :mod:`videorl_kit.rewards.router` implement them.

Example:
    >>> RewardWeights(accuracy=0.8, format=0.2).accuracy
    0.8
    >>> RewardWeights(accuracy=0.5, format=0.3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for RewardWeights
      Value error, accuracy + format weights must sum to 1 (got 0.8) so that ...
    >>> FORMAT_RULES, ANSWER_SOURCES
    (('answer_tag', 'none'), ('auto', 'answer_tag'))
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field, model_validator

from videorl_kit.core.strict_model import StrictModel

FormatRule = Literal["answer_tag", "none"]
"""``answer_tag``: one ``<answer>…</answer>``, optionally after one ``<think>…</think>``;
``none``: format is always 1 (for prompts that ask for no tags)."""
FORMAT_RULES: tuple[str, ...] = get_args(FormatRule)

AnswerSource = Literal["auto", "answer_tag"]
"""What the verifier grades: ``auto`` (the ``<answer>`` block, else the final statement
after the reasoning, else the text outside ``<think>``) or ``answer_tag`` (only the
``<answer>`` block, no fallback)."""
ANSWER_SOURCES: tuple[str, ...] = get_args(AnswerSource)


class RewardWeights(StrictModel):
    """Weights of the reward parts: overall = accuracy·w_acc + format·w_fmt, summing to 1.

    Example:
        >>> RewardWeights().format
        0.1
    """

    accuracy: float = Field(0.9, ge=0, le=1)
    format: float = Field(0.1, ge=0, le=1)

    @model_validator(mode="after")
    def _sum_to_one(self) -> RewardWeights:
        if abs(self.accuracy + self.format - 1.0) > 1e-9:
            raise ValueError(
                f"accuracy + format weights must sum to 1 (got {self.accuracy + self.format:g}) "
                "so that overall stays in [0, 1]"
            )
        return self
