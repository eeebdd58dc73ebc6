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

from pathlib import Path

import yaml

from videorl_kit.core.spec_files import (
    SAFE_YAML_TAGS,
    UnreadableSpecFile,
    decode_spec_bytes,
    read_spec_file,
)
from videorl_kit.hf.errors import HubError

_WHY = "a spec is plain data (code is referenced by registered name, never embedded)"


def check_plain_yaml(text: str, where: str, *, allow_aliases: bool = True) -> None:
    """Raise :class:`HubError` naming file and line if ``text`` is not plain-data YAML.

    Rejects YAML syntax errors, every tag outside
    :data:`~videorl_kit.core.spec_files.SAFE_YAML_TAGS` and, with ``allow_aliases=False``,
    anchors/aliases. Every document in the stream is checked.

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
            if tag is not None and tag != "!" and tag not in SAFE_YAML_TAGS:
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
    try:
        return decode_spec_bytes(data)
    except UnreadableSpecFile as exc:
        raise HubError(f"{where}: {exc}") from None


def read_spec_path(path: Path, where: str) -> str:
    """Read a downloaded spec file (a regular file of at most 1 MiB of UTF-8), else HubError.

    Example:
        >>> read_spec_path(Path("/dev/zero"), "specs/a.yaml")
        Traceback (most recent call last):
        ...
        videorl_kit.hf.errors.HubError: specs/a.yaml: not a regular file (a character device)
    """
    try:
        return read_spec_file(path)
    except UnreadableSpecFile as exc:
        raise HubError(f"{where}: {exc}") from None
