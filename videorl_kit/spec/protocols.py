"""A benchmark spec under one of its protocols: ``reasoning`` (as written) or ``official``.

``eval.protocols.official`` holds partial sections (``prompt``, ``budget``, ``reward``,
``generation``, ``metrics``, ``judge``); :func:`apply_protocol` merges each over the spec's
section of that name (mappings key by key, anything else replaced, as ``include:`` merges)
and validates the result as a whole. The spec it returns records the protocol it runs
(``eval.protocol``) and no longer carries ``eval.protocols``: it is exactly what runs.

Example:
    >>> from videorl_kit.spec.models import TaskSpec
    >>> spec = TaskSpec.model_validate({"id": "a", "version": 1, "problem_type": "ocr",
    ...     "data": {"path": "x.jsonl"}, "prompt": {"template": "{{ question }} Think first."},
    ...     "eval": {"protocols": {"official": {"source": "bench repo @ abc, eval.py",
    ...         "prompt": {"template": "{{ question }}"}, "generation": {"max_new_tokens": 16}}}}})
    >>> official = apply_protocol(spec, "official")
    >>> official.prompt.template, official.eval.generation.max_new_tokens, official.eval.protocol
    ('{{ question }}', 16, 'official')
    >>> apply_protocol(spec, "reasoning").prompt.template
    '{{ question }} Think first.'
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from videorl_kit.core.errors import UserError
from videorl_kit.spec.eval_section import PROTOCOLS, OfficialProtocol
from videorl_kit.spec.models import TaskSpec

#: Where each section of an official protocol is merged in the spec (a path of keys).
SECTION_PATHS: dict[str, tuple[str, ...]] = {
    "prompt": ("prompt",),
    "budget": ("budget",),
    "reward": ("reward",),
    "generation": ("eval", "generation"),
    "metrics": ("eval", "metrics"),
    "judge": ("eval", "judge"),
}


class ProtocolError(UserError):
    """A protocol that a spec does not offer, or whose merged spec is invalid.

    ``problems`` holds ``(field path inside the protocol, message)`` pairs.
    """

    def __init__(self, message: str, problems: list[tuple[tuple[str | int, ...], str]]):
        super().__init__(message)
        self.problems = problems


def merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``patch`` merged over ``base``: mappings merge recursively, anything else replaces.

    Example:
        >>> merge({"video": {"fps": 2.0, "max_frames": 64}}, {"video": {"max_frames": 32}})
        {'video': {'fps': 2.0, 'max_frames': 32}}
    """
    merged = dict(base)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _protocol_path(loc: tuple[Any, ...]) -> tuple[str | int, ...] | None:
    """The path inside ``eval.protocols.official`` that a merged spec's error points at, if
    the failing field is one the protocol merges into."""
    for section, path in SECTION_PATHS.items():
        if loc[: len(path)] == path:
            return (section, *loc[len(path) :])
    return None


def apply_protocol(spec: TaskSpec, name: str) -> TaskSpec:
    """``spec`` under protocol ``name`` (see the module docstring).

    Raises :class:`ProtocolError` for a protocol the spec does not offer, or when the merged
    spec is invalid (every problem listed, with its field path inside the protocol).
    """
    if name not in PROTOCOLS:
        raise ProtocolError(
            f"{spec.id}: unknown protocol {name!r} (valid: {', '.join(PROTOCOLS)})", []
        )
    section = spec.eval
    offered: OfficialProtocol | None = (
        section.protocols.get("official") if section is not None else None
    )
    if name == "official" and offered is None:
        raise ProtocolError(
            f"{spec.id}: --protocol official, but the spec declares no eval.protocols.official "
            "(the benchmark's own prompt, generation length and frame sampling)",
            [],
        )
    data = spec.model_dump(mode="json", exclude_none=True)
    if section is None:
        return spec
    if offered is not None and name == "official":
        for key, path in SECTION_PATHS.items():
            patch = getattr(offered, key)
            if not patch:
                continue
            node = data
            for part in path[:-1]:
                node = node.setdefault(part, {})
            current = node.get(path[-1])
            node[path[-1]] = merge(current if isinstance(current, dict) else {}, patch)
    data["eval"]["protocol"] = name
    data["eval"].pop("protocols", None)
    try:
        updated = TaskSpec.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if not str(p).startswith("function-"))
            message = str(err["msg"]).removeprefix("Value error, ")
            problems.append((_protocol_path(loc) or loc, message))
        listed = "; ".join(f"{'.'.join(map(str, loc))}: {m}" for loc, m in problems)
        raise ProtocolError(
            f"{spec.id}: protocol {name!r} makes the spec invalid: {listed}", problems
        ) from None
    updated._source_file = spec.source_file
    return updated.with_provenance(spec.provenance)
