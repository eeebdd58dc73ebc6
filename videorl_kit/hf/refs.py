"""Parsing of Hub references: ``ORG/NAME[@REV]`` and ``hf://ORG/NAME@REV/path``.

Only dataset repos are addressed (spec repos are dataset repos). A revision is a commit
sha, a branch or a tag; a revision that contains ``/`` (``refs/pr/1``) is written
URL-encoded inside an ``hf://`` URI (``refs%2Fpr%2F1``).

Example:
    >>> parse_repo_ref("my-org/video-tasks@v1")
    RepoRef(repo='my-org/video-tasks', revision='v1')
    >>> uri = parse_hf_uri("hf://my-org/video-tasks@main/specs/synth-count.yaml")
    >>> uri.repo, uri.revision, uri.path
    ('my-org/video-tasks', 'main', 'specs/synth-count.yaml')
    >>> format_hf_uri("my-org/video-tasks", "0" * 40, "specs/a.yaml")
    'hf://my-org/video-tasks@0000000000000000000000000000000000000000/specs/a.yaml'
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from videorl_kit.core.safe_text import control_characters, quoted
from videorl_kit.hf.errors import HubError

HF_SCHEME = "hf://"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
REPO_ID_RE = re.compile(rf"^{_NAME}/{_NAME}$")
COMMIT_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
_REVISION_CHARS = re.compile(r"[A-Za-z0-9._+/-]{1,255}")
_BAD_REVISION = re.compile(r"^[-./]|\.\.|//|/[.-]|\.lock(/|$)|[./]$")


@dataclass(frozen=True)
class RepoRef:
    """A dataset repo and an optional revision (None means the default branch)."""

    repo: str
    revision: str | None = None

    @property
    def is_pinned(self) -> bool:
        """True when the revision is a full commit sha (immutable)."""
        return self.revision is not None and COMMIT_SHA_RE.fullmatch(self.revision) is not None


@dataclass(frozen=True)
class HubUri:
    """A file inside a dataset repo at a revision, parsed from ``hf://ORG/NAME@REV/path``."""

    repo: str
    revision: str | None
    path: str


def check_repo_id(repo: str) -> str:
    """Return ``repo`` if it looks like ``org/name``, else raise :class:`HubError`.

    Example:
        >>> check_repo_id("org/name")
        'org/name'
        >>> try:
        ...     check_repo_id("no-slash")
        ... except HubError as exc:
        ...     print(str(exc).split(":")[0])
        invalid repo id 'no-slash'
    """
    if not REPO_ID_RE.fullmatch(repo) or ".." in repo or "--" in repo:
        raise HubError(
            f"invalid repo id {repo!r}: expected ORG/NAME (letters, digits, '.', '_', '-')"
        )
    return repo


def check_revision(revision: str) -> str:
    """Return ``revision`` if it is a plausible git ref or commit sha, else raise.

    A revision is at most 255 of the characters letters, digits, ``.``, ``_``, ``+``, ``-``
    and ``/`` (what Hub branches, tags and shas use; no shell or control character), within
    git's ref rules: no ``..`` or ``//``, no part that starts with ``.`` or ``-`` or ends with
    ``.lock``, no ``.`` or ``/`` at the end.

    Example:
        >>> check_revision("refs/pr/1")
        'refs/pr/1'
        >>> check_revision("a..b")
        Traceback (most recent call last):
        ...
        videorl_kit.hf.errors.HubError: invalid revision 'a..b': not a branch, tag or commit sha ...
    """
    if not _REVISION_CHARS.fullmatch(revision) or _BAD_REVISION.search(revision):
        raise HubError(
            f"invalid revision {quoted(revision)}: not a branch, tag or commit sha (letters, "
            "digits and . _ + - / within git's ref rules)"
        )
    return revision


def parse_repo_ref(text: str) -> RepoRef:
    """Parse ``ORG/NAME`` or ``ORG/NAME@REV`` (REV: commit sha, branch or tag).

    Example:
        >>> parse_repo_ref("org/name")
        RepoRef(repo='org/name', revision=None)
        >>> parse_repo_ref("org/name@" + "a" * 40).is_pinned
        True
    """
    text = text.strip()
    if text.startswith(HF_SCHEME):
        text = text[len(HF_SCHEME) :]
    text = text.removeprefix("datasets/")
    repo, sep, revision = text.partition("@")
    check_repo_id(repo)
    if not sep:
        return RepoRef(repo=repo, revision=None)
    return RepoRef(repo=repo, revision=check_revision(unquote(revision)))


def normalize_repo_path(path: str, *, what: str = "path") -> str:
    """Normalise a relative path inside a repo; refuse absolute paths and ``..`` escapes.

    Example:
        >>> normalize_repo_path("specs/./a.yaml")
        'specs/a.yaml'
        >>> normalize_repo_path("../etc/passwd")
        Traceback (most recent call last):
        ...
        videorl_kit.hf.errors.HubError: invalid path '../etc/passwd': must stay inside the repo
    """
    if not path or "\\" in path or "\x00" in path or path.startswith("/"):
        raise HubError(f"invalid {what} {path!r}: expected a relative path inside the repo")
    bad = control_characters(path)
    if bad:  # it reaches printed `hf download` commands and one-line messages
        raise HubError(
            f"invalid {what} {path!r}: has a control character ({', '.join(bad)}); a repo "
            "path is one line of text"
        )
    normalized = posixpath.normpath(path)
    if normalized == "." or normalized == ".." or normalized.startswith("../"):
        raise HubError(f"invalid {what} {path!r}: must stay inside the repo")
    return normalized


def parse_hf_uri(uri: str) -> HubUri:
    """Parse ``hf://ORG/NAME[@REV]/path`` (``hf://datasets/ORG/NAME@REV/path`` also accepted).

    Example:
        >>> parse_hf_uri("hf://datasets/org/name@refs%2Fpr%2F2/specs/a.yaml").revision
        'refs/pr/2'
        >>> parse_hf_uri("hf://org/name")
        Traceback (most recent call last):
        ...
        videorl_kit.hf.errors.HubError: invalid Hub URI 'hf://org/name': expected hf://ORG/NAME@REV/path/to/file.yaml
    """
    usage = f"invalid Hub URI {uri!r}: expected hf://ORG/NAME@REV/path/to/file.yaml"
    if not uri.startswith(HF_SCHEME):
        raise HubError(usage)
    rest = uri[len(HF_SCHEME) :].removeprefix("datasets/")
    parts = rest.split("/", 2)
    if len(parts) < 3 or not parts[2]:
        raise HubError(usage)
    org, name_rev, path = parts
    ref = parse_repo_ref(f"{org}/{name_rev}")
    return HubUri(repo=ref.repo, revision=ref.revision, path=normalize_repo_path(unquote(path)))


def format_hf_uri(repo: str, revision: str | None, path: str) -> str:
    """Build the ``hf://`` URI of a file (the inverse of :func:`parse_hf_uri`).

    Example:
        >>> format_hf_uri("org/name", "refs/pr/1", "a.yaml")
        'hf://org/name@refs%2Fpr%2F1/a.yaml'
    """
    rev = f"@{quote(revision, safe='')}" if revision else ""
    return f"{HF_SCHEME}{repo}{rev}/{path}"
