"""The ``label`` of a prompt row: the only per-sample channel into OpenRLHF's reward function.

OpenRLHF hands ``reward_func`` the raw value of ``--data.label_key`` and nothing else about the
row (no ``datasource``, no id), so the label carries what scoring needs: task id, sample id,
the row's problem type, gold answer and options. It is JSON *text*, not a JSON object, so that
HF ``datasets`` does not unify the answer schemas of different tasks into one struct type.

Example:
    >>> text = encode_label("synth-count", "s-1", "numerical", "3", None)
    >>> text[:60]
    '{"answer": "3", "options": null, "problem_type": "numerical"'
    >>> decode_label(text).task_id
    'synth-count'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


class LabelError(ValueError):
    """A label that is not the JSON object :func:`encode_label` writes."""


@dataclass(frozen=True)
class Label:
    """The decoded label of one prompt row."""

    task_id: str
    sample_id: str
    problem_type: str
    answer: str
    options: list[str] | None


def encode_label(
    task_id: str, sample_id: str, problem_type: str, answer: str, options: list[str] | None
) -> str:
    """The label text of one row (keys sorted, so equal rows give equal text)."""
    payload = {
        "task_id": task_id,
        "sample_id": sample_id,
        "problem_type": problem_type,
        "answer": answer,
        "options": options,
    }
    return json.dumps(payload, ensure_ascii=False, sort_keys=True)


def decode_label(value: Any) -> Label:
    """Read a label back; raises :class:`LabelError` saying what is wrong with it.

    Example:
        >>> try:
        ...     decode_label('{"task_id": 3}')
        ... except LabelError as exc:
        ...     print(exc)
        label field 'task_id' must be a non-empty string, got 3
    """
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if not isinstance(value, str):
        raise LabelError(f"label must be JSON text, got {type(value).__name__}")
    try:
        payload = json.loads(value)
    except ValueError as exc:
        raise LabelError(f"label is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise LabelError(f"label must be a JSON object, got {type(payload).__name__}")
    fields: dict[str, str] = {}
    for key in ("task_id", "sample_id", "problem_type"):
        item = payload.get(key)
        if not isinstance(item, str) or not item:
            raise LabelError(f"label field {key!r} must be a non-empty string, got {item!r}")
        fields[key] = item
    answer = payload.get("answer")
    if not isinstance(answer, str):
        raise LabelError(f"label field 'answer' must be a string, got {answer!r}")
    options = payload.get("options")
    if options is not None and (
        not isinstance(options, list) or not all(isinstance(o, str) for o in options)
    ):
        raise LabelError(
            f"label field 'options' must be a list of strings or null, got {options!r}"
        )
    return Label(answer=answer, options=options, **fields)
