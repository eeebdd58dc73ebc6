"""Checks that a YAML spec is plain data before anything is published or loaded.

A spec never carries code: verifiers are referenced by registered name. YAML can smuggle
code through tags (``!!python/object``, lm-eval's ``!function utils.fn``) and can blow up
through alias chains, so Hub-facing code accepts only the core data tags and, for files
downloaded from the Hub, no anchors or aliases at all.

Example:
    >>> check_plain_yaml("id: a\\nversion: 1\\n", "a.yaml")
    >>> try:
    ...     check_plain_yaml("process: !function utils.fn\\n", "a.yaml")
    ... except HubError as exc:
    ...     print(str(exc).split(": a spec")[0])
    a.yaml:1: YAML tag '!function' is not allowed
"""

from __future__ import annotations

import yaml

from videorl_kit.hf.errors import HubError

#: Tags a spec may use: plain JSON-like data (timestamps appear implicitly for dates).
SAFE_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")
)

#: Largest spec file accepted from the Hub; real specs are a few kilobytes.
MAX_SPEC_BYTES = 1_000_000

_WHY = "a spec is plain data (code is referenced by registered name, never embedded)"


def check_plain_yaml(text: str, where: str, *, allow_aliases: bool = True) -> None:
    """Raise :class:`HubError` naming file and line if ``text`` is not plain-data YAML.

    Rejects YAML syntax errors, every tag outside :data:`SAFE_TAGS` and, with
    ``allow_aliases=False``, anchors/aliases. Every document in the stream is checked.

    Example:
        >>> check_plain_yaml("a: &x [1]\\nb: *x\\n", "s.yaml", allow_aliases=False)
        Traceback (most recent call last):
        ...
        videorl_kit.hf.errors.HubError: s.yaml:2: YAML aliases are not allowed in published specs
    """
    problems: list[str] = []
    try:
        # Events, not nodes: explicit tags and aliases are visible there, and nothing is
        # expanded, so an alias bomb costs no more than its text.
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            line = event.start_mark.line + 1
            if isinstance(event, yaml.AliasEvent) and not allow_aliases:
                problems.append(f"{where}:{line}: YAML aliases are not allowed in published specs")
            tag = getattr(event, "tag", None)
            if tag is not None and tag != "!" and tag not in SAFE_TAGS:
                problems.append(f"{where}:{line}: YAML tag {tag!r} is not allowed: {_WHY}")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise HubError(f"{where}:{line}: invalid YAML: {problem}") from None
    if problems:
        raise HubError("; ".join(problems))


def read_spec_text(data: bytes, where: str) -> str:
    """Decode a downloaded spec file, refusing oversized or non-UTF-8 content.

    Example:
        >>> read_spec_text(b"id: a\\n", "specs/a.yaml")
        'id: a\\n'
    """
    if len(data) > MAX_SPEC_BYTES:
        raise HubError(f"{where}: {len(data)} bytes is too large for a spec (max {MAX_SPEC_BYTES})")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HubError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
