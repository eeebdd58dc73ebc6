"""Canonical problem types, the aliases other projects use for them, and how each is scored.

This file is the registration of a problem type (``docs/extending.md``): its
:class:`ProblemType` member, its aliases, its default verifier (:data:`DEFAULT_VERIFIERS`)
and the module of each built-in verifier (:data:`BUILTIN_VERIFIERS`, imported the first time
the verifier is asked for). The spec models, the verifier registry and the reward router
read these tables, so a type name means the same thing everywhere.

Example:
    >>> canonical_problem_type("multiple choice").value
    'multiple_choice'
    >>> canonical_problem_type("Spatial-Temporal Grounding").value
    'spatiotemporal_grounding'
"""

from __future__ import annotations

from enum import StrEnum


class ProblemType(StrEnum):
    """The problem types of the reward contract (``docs/verifiers.md``, "Per verifier")."""

    MULTIPLE_CHOICE = "multiple_choice"
    NUMERICAL = "numerical"
    REGRESSION = "regression"
    BOOLEAN = "boolean"
    TEMPORAL_GROUNDING = "temporal_grounding"
    SPATIAL_GROUNDING = "spatial_grounding"
    SPATIOTEMPORAL_GROUNDING = "spatiotemporal_grounding"
    TRACKING = "tracking"
    OCR = "ocr"
    OPEN_ENDED = "open_ended"
    MATH = "math"
    CODE = "code"
    CRITIC = "critic"


FROM_ROW = "from_row"
"""A spec's ``problem_type`` when each data row's own problem type picks its verifier."""

#: Spellings used by EasyVideoR1, Video-R1 and friends, mapped to canonical names.
ALIASES: dict[str, ProblemType] = {
    "multiple choice": ProblemType.MULTIPLE_CHOICE,
    "multiple-choice": ProblemType.MULTIPLE_CHOICE,
    "mcq": ProblemType.MULTIPLE_CHOICE,
    "number": ProblemType.NUMERICAL,
    "numeric": ProblemType.NUMERICAL,
    "binary classification": ProblemType.BOOLEAN,
    "yes/no": ProblemType.BOOLEAN,
    "temporal grounding": ProblemType.TEMPORAL_GROUNDING,
    "spatial grounding": ProblemType.SPATIAL_GROUNDING,
    "spatial-temporal grounding": ProblemType.SPATIOTEMPORAL_GROUNDING,
    "spatio-temporal grounding": ProblemType.SPATIOTEMPORAL_GROUNDING,
    "spatiotemporal grounding": ProblemType.SPATIOTEMPORAL_GROUNDING,
    "open-ended": ProblemType.OPEN_ENDED,
    "open ended": ProblemType.OPEN_ENDED,
    "free-form": ProblemType.OPEN_ENDED,
    "video qa": ProblemType.OPEN_ENDED,
    "video description": ProblemType.OPEN_ENDED,
    "mathematics": ProblemType.MATH,
    "coding": ProblemType.CODE,
    "llava": ProblemType.CRITIC,
    "preference": ProblemType.CRITIC,
}


#: Built-in verifiers: (name, version) -> the module (or "module:class") that registers it,
#: imported the first time the verifier is asked for.
BUILTIN_VERIFIERS: dict[tuple[str, int], str] = {
    ("choice", 2): "videorl_kit.rewards.choice",
    ("numeric", 2): "videorl_kit.rewards.numeric",
    ("mra", 2): "videorl_kit.rewards.numeric",
    ("boolean", 2): "videorl_kit.rewards.boolean",
    ("temporal_iou", 2): "videorl_kit.rewards.grounding",
    ("box_iou", 2): "videorl_kit.rewards.grounding",
    ("spatiotemporal_iou", 2): "videorl_kit.rewards.grounding",
    ("tracking_iou", 2): "videorl_kit.rewards.grounding",
    ("wer", 2): "videorl_kit.rewards.ocr",
    ("rouge", 2): "videorl_kit.rewards.open_ended",
    ("math", 2): "videorl_kit.rewards.math",
    ("code_exec", 3): "videorl_kit.rewards.code:CodeExecVerifier",
    ("preference", 2): "videorl_kit.rewards.preference",
}


#: The verifier a problem type uses when a spec names none.
DEFAULT_VERIFIERS: dict[ProblemType, str] = {
    ProblemType.MULTIPLE_CHOICE: "choice",
    ProblemType.NUMERICAL: "numeric",
    ProblemType.REGRESSION: "mra",
    ProblemType.BOOLEAN: "boolean",
    ProblemType.TEMPORAL_GROUNDING: "temporal_iou",
    ProblemType.SPATIAL_GROUNDING: "box_iou",
    ProblemType.SPATIOTEMPORAL_GROUNDING: "spatiotemporal_iou",
    ProblemType.TRACKING: "tracking_iou",
    ProblemType.OCR: "wer",
    ProblemType.OPEN_ENDED: "rouge",
    ProblemType.MATH: "math",
    ProblemType.CODE: "code_exec",
    ProblemType.CRITIC: "preference",
}


def canonical_problem_type(name: str) -> ProblemType:
    """Return the canonical :class:`ProblemType` for ``name`` or one of its aliases.

    Matching ignores case and surrounding whitespace; ``-`` and ``_`` variants of
    canonical names are accepted. Raises ``ValueError`` naming the valid types.

    Example:
        >>> canonical_problem_type("OCR")
        <ProblemType.OCR: 'ocr'>
    """
    key = str(name).strip().lower()
    if key in ALIASES:
        return ALIASES[key]
    normalised = key.replace("-", "_").replace(" ", "_")
    try:
        return ProblemType(normalised)
    except ValueError:
        valid = ", ".join(t.value for t in ProblemType)
        raise ValueError(f"unknown problem type {name!r}; valid types: {valid}") from None
