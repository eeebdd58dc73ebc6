"""The named rules by which a data row or a media item is skipped, in one place.

Every input of a cache build ends ok, failed or skipped by one of these rules, and every
skipped sample records its rule (``samples.skip_rule``); ``build-cache`` and ``cache
status`` group skips by rule with example rows.

Example:
    >>> RULE_DATA_TYPE_MISMATCH in ROW_RULES, RULE_OVER_TOKEN_BUDGET in ROW_RULES
    (True, False)
"""

from __future__ import annotations

RULE_MALFORMED_ROW = "malformed_row"
"""Unreadable JSON, not an object, a missing or mistyped field, an ambiguous gold answer."""
RULE_UNKNOWN_PROBLEM_TYPE = "unknown_problem_type"
"""The row's problem type is not a known type or alias."""
RULE_MISSING_PROBLEM_TYPE = "missing_problem_type"
"""``problem_type: from_row``, and the row has no problem type."""
RULE_PROBLEM_TYPE_MISMATCH = "problem_type_mismatch"
"""The spec has one problem type and the row declares another one."""
RULE_DATA_TYPE_MISMATCH = "data_type_mismatch"
"""The row's ``data_type`` contradicts its media, or a media file's content contradicts the
modality it is listed under (a still image as a video, a video as an image)."""
RULE_DUPLICATE_ID = "duplicate_id"
"""A second row with an already used sample id (found by the cache build)."""
RULE_PROMPT_ERROR = "prompt_error"
"""The spec's prompt template does not render for the row."""
RULE_OVER_TOKEN_BUDGET = "over_token_budget"
"""More visual tokens than ``--max-visual-tokens``, or a prompt over ``--max-prompt-tokens``."""

ROW_RULES: tuple[str, ...] = (
    RULE_MALFORMED_ROW,
    RULE_UNKNOWN_PROBLEM_TYPE,
    RULE_MISSING_PROBLEM_TYPE,
    RULE_PROBLEM_TYPE_MISMATCH,
    RULE_DATA_TYPE_MISMATCH,
    RULE_DUPLICATE_ID,
)
"""Rules that skip a data row before its media are looked at."""
