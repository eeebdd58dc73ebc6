"""A recipe's ``offline:`` section: which stored trajectories join GRPO groups, and how.

.. code-block:: yaml

    offline:
      source: [curated, "eval:*"]   # globs over the trajectories' sources
      select: best                  # best | random | newest among a sample's trajectories
      min_reward: 1.0               # only trajectories whose overall reward is at least this
      per_group: 1                  # k of the group's n members are offline (1 ≤ k < n)
      when: below_accuracy          # always | below_accuracy
      accuracy_threshold: 0.25      # below_accuracy: the online group's mean accuracy
      correction: none              # none | recompute | truncated_is (no default)
      is_cap: 2.0                   # truncated_is: the cap of the importance weight

The model is checked like every recipe field (unknown keys refused, every problem at once).
:func:`offline_problems` adds the checks across the section's fields; what a backend cannot do
with the section is that backend's to say (its ``problems``: the TRL adapter refuses mixing
into RLOO, the OpenRLHF adapter a frames-as-images run, for example), each message naming the
backend; :func:`store_problems` checks the section against a store (at
``validate`` against the recipe's store, at ``train`` against the store it trains on): a store
with none of the selected trajectories, and ``truncated_is`` over trajectories without
behaviour log-probs, naming how many lack them.

What ``correction`` means on both backends: TRL and OpenRLHF both compute the PPO ratio's old
log-probs with the training policy, for every group member, so an offline member's ratio starts
at 1 whether ``none`` or ``recompute`` is chosen (``recompute`` is the peer's behaviour, named
explicitly; ``none`` states that no correction is wanted). ``truncated_is`` multiplies each
offline token's loss by ``min(π_old(token) / μ(token), is_cap)`` with μ the stored behaviour
log-probs (TRL: the kit's trainer scales the offline members' per-token advantages; OpenRLHF:
its own token-level ``clip`` correction with the stored log-probs as rollout log-probs).

Example:
    >>> section = OfflineSection(source="curated", correction="none")
    >>> section.source, section.select, section.per_group, section.when
    (['curated'], 'best', 1, 'always')
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from videorl_kit.core.strict_model import StrictModel


class OfflineSection(StrictModel):
    """Mixed offline/online GRPO groups (see the module doc and ``docs/training.md``)."""

    source: list[str] = Field(
        ..., min_length=1, description="Source globs of the trajectories that may be used."
    )
    select: Literal["best", "random", "newest"] = Field(
        "best", description="Which of a sample's trajectories: highest reward, random, newest."
    )
    min_reward: float | None = Field(
        None, ge=0, le=1, description="Only trajectories whose overall reward is at least this."
    )
    per_group: int = Field(1, ge=1, description="Offline members per group (k of n).")
    when: Literal["always", "below_accuracy"] = Field(
        "always", description="Every group with a candidate, or only groups below the threshold."
    )
    accuracy_threshold: float | None = Field(
        None, ge=0, le=1, description="below_accuracy: the online group's mean accuracy bound."
    )
    correction: Literal["none", "recompute", "truncated_is"] = Field(
        ..., description="Off-policy correction of offline members (no default: choose one)."
    )
    is_cap: float | None = Field(
        None, gt=0, description="truncated_is: cap of the importance weight (default 2.0)."
    )

    @field_validator("source", mode="before")
    @classmethod
    def _one_source(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("source")
    @classmethod
    def _no_blank_source(cls, value: list[str]) -> list[str]:
        if any(not item.strip() for item in value):
            raise ValueError("a source glob must not be empty")
        return value

    @property
    def cap(self) -> float:
        """The truncated importance weight's cap (``is_cap``, 2.0 when not given)."""
        return 2.0 if self.is_cap is None else self.is_cap


def offline_problems(recipe: Any) -> list[tuple[str, str]]:
    """``(field path, message)`` for each problem of ``recipe.offline`` across its fields and
    the recipe's group size (the same on every backend).

    Example:
        >>> from types import SimpleNamespace as NS
        >>> section = OfflineSection(source="x", per_group=4, correction="none", is_cap=3)
        >>> recipe = NS(offline=section, rollout=NS(group_size=4))
        >>> for path, message in offline_problems(recipe):
        ...     print(path, "|", message[:64])
        offline.per_group | per_group 4 leaves no online member in a group of rollout.group_
        offline.is_cap | is_cap is only read with correction: truncated_is
    """
    section: OfflineSection | None = recipe.offline
    if section is None:
        return []
    problems = []
    n = recipe.rollout.group_size
    if section.per_group >= n:
        problems.append(
            (
                "offline.per_group",
                f"per_group {section.per_group} leaves no online "
                f"member in a group of rollout.group_size {n}; choose 1 to {n - 1}",
            )
        )
    if section.when == "below_accuracy" and section.accuracy_threshold is None:
        problems.append(
            (
                "offline.accuracy_threshold",
                "when: below_accuracy needs "
                "accuracy_threshold (groups whose online mean accuracy is below it "
                "get offline members)",
            )
        )
    if section.when == "always" and section.accuracy_threshold is not None:
        problems.append(
            (
                "offline.accuracy_threshold",
                "accuracy_threshold is only read with when: below_accuracy",
            )
        )
    if section.correction != "truncated_is" and section.is_cap is not None:
        problems.append(("offline.is_cap", "is_cap is only read with correction: truncated_is"))
    return problems
