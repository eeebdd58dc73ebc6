"""One evaluated sample, as a line of ``samples_<task>.jsonl``: :class:`SampleRecord`.

Each record carries lm-eval-style content hashes so two runs can be compared sample by
sample: ``doc_hash`` (the raw benchmark row), ``prompt_hash`` (system turn, rendered prompt,
media cache keys, variant and the order of the frames shown), ``target_hash`` (problem type,
gold answer and options) and ``response_hash``. Hashes are sha256 of canonical JSON (sorted
keys, no spaces).

Example:
    >>> content_hash({"b": 1, "a": [1, 2]}) == content_hash({"a": [1, 2], "b": 1})
    True
    >>> len(content_hash("text"))
    64
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def content_hash(value: Any) -> str:
    """sha256 of ``value`` as canonical JSON (sorted keys, compact, UTF-8).

    Example:
        >>> content_hash(None)[:12]
        '74234e98afe7'
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class SampleRecord(BaseModel):
    """What the evaluator kept of one sample: inputs (hashed), response and verdict."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    sample_id: str
    row_index: int = Field(..., ge=0)
    problem_type: str
    doc_hash: str
    prompt_hash: str
    target_hash: str
    response_hash: str
    prompt: str
    target: str
    options: list[str] | None = None
    media: list[str] = Field(
        default_factory=list, description="Cache keys of the media given to the model."
    )
    response: str
    accuracy: float = Field(..., ge=0, le=1)
    format: float = Field(..., ge=0, le=1)
    overall: float = Field(..., ge=0, le=1)
    status: str = Field(
        ...,
        description="Verdict status: ok, unverifiable, error or unscored (judge-graded, "
        "no judgement).",
    )
    details: dict[str, Any] = Field(default_factory=dict)
    cluster: str = Field(..., description="Standard errors are clustered by this (the video).")
    categories: dict[str, str | None] = Field(default_factory=dict)
    judge: dict[str, Any] | None = Field(
        None,
        description="A judge-graded question's judgement: the judge's prompt and output, the "
        "verdict read from it, the judge model, and whether it was replayed from a file.",
    )

    def to_line(self) -> str:
        """One JSONL line (no trailing newline); lone surrogates are escaped, never raised.

        Example:
            >>> record = SampleRecord(task_id="t", sample_id="s", row_index=0,
            ...     problem_type="boolean", doc_hash="d", prompt_hash="p", target_hash="t",
            ...     response_hash="r", prompt="?", target="yes", response="\\ud800 yes",
            ...     accuracy=1, format=0, overall=0.9, status="ok", cluster="v")
            >>> SampleRecord.from_line(record.to_line()).response == record.response
            True
        """
        data = self.model_dump(mode="json")
        if data["judge"] is None:  # only judge-graded questions carry the key
            del data["judge"]
        return json.dumps(data, ensure_ascii=True, sort_keys=True)

    @classmethod
    def from_line(cls, line: str | bytes) -> SampleRecord:
        """Parse one JSONL line (``json`` reads escaped lone surrogates; pydantic's parser not).

        Raises ``ValueError`` (``json.JSONDecodeError`` or ``ValidationError``) when the line
        is not a record.
        """
        return cls.model_validate(json.loads(line))
