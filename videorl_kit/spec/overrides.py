"""Command-line overrides of spec fields: ``[TASK:]dotted.path=value`` (torchtune style).

The value is read as YAML (``32`` is a number, ``[a, b]`` a list, ``null`` clears a field).
An override without ``TASK:`` applies to every spec; with it, only to the spec of that id.
A ``data.path`` or ``data.media_root`` typed here may lie anywhere on this machine (it
sets ``data.allow_absolute_paths``: the person running the command chose that path).
The overridden spec is validated again as a whole, so an override can never produce a spec
the loader would refuse; every override is recorded by whoever applies it.

Example:
    >>> from videorl_kit.spec.models import TaskSpec
    >>> spec = TaskSpec.model_validate({"id": "a", "version": 1, "problem_type": "ocr",
    ...     "data": {"path": "x.jsonl"}, "prompt": {"template": "{{ question }}"}})
    >>> apply_overrides(spec, ["budget.video.patch=32", "b:data.limit=5"]).budget.video.patch
    32
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from videorl_kit.core.errors import UserError
from videorl_kit.spec.models import TaskSpec
from videorl_kit.spec.paths import ALLOW_ABSOLUTE_KEY

#: Fields holding a path the person running the command types on the command line.
_TYPED_PATHS = (("data", "path"), ("data", "media_root"))


@dataclass(frozen=True)
class Override:
    """One parsed ``[TASK:]dotted.path=value``."""

    task: str | None
    path: tuple[str, ...]
    value: Any
    text: str

    @classmethod
    def parse(cls, text: str) -> Override:
        """Parse one override; a :class:`UserError` says what is malformed.

        Example:
            >>> Override.parse("video-mme:data.media_root=/data/vmme").path
            ('data', 'media_root')
        """
        key, sep, raw = text.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--set {text!r}: expected [TASK:]dotted.path=value")
        task, colon, dotted = key.strip().rpartition(":")
        path = tuple(part for part in dotted.split("."))
        if not all(part.isidentifier() for part in path):
            raise UserError(f"--set {text!r}: {dotted!r} is not a dotted field path")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError as exc:
            raise UserError(f"--set {text!r}: the value is not valid YAML ({exc})") from None
        return cls(task if colon else None, path, value, text)


def apply_overrides(spec: TaskSpec, overrides: list[str]) -> TaskSpec:
    """``spec`` with the overrides that apply to it (a :class:`UserError` names a bad one)."""
    parsed = [Override.parse(text) for text in overrides]
    mine = [o for o in parsed if o.task in (None, spec.id)]
    if not mine:
        return spec
    data = spec.model_dump(mode="json", exclude_none=True)
    for override in mine:
        node = data
        for part in override.path[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                raise UserError(f"--set {override.text!r}: {part!r} is not a mapping")
            node = child
        node[override.path[-1]] = override.value
        if override.path in _TYPED_PATHS:
            data["data"][ALLOW_ABSOLUTE_KEY] = True
    try:
        updated = TaskSpec.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {str(e['msg']).removeprefix('Value error, ')}"
            for e in exc.errors()
        )
        texts = ", ".join(o.text for o in mine)
        raise UserError(f"{spec.id}: --set {texts} makes the spec invalid: {problems}") from None
    updated._source_file = spec.source_file
    return updated.with_provenance(spec.provenance)
