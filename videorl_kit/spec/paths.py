"""Where a spec may read files: inside its root, unless it explicitly allows absolute paths.

Every spec loaded from a file has a **root**, the folder its paths may not leave:

* for a spec file on disk, the nearest folder at or above it that holds ``.git``,
  ``pyproject.toml`` or a Hub spec repo's ``videorl_kit_manifest.json`` (a project or a
  pulled repo); without one, the working directory when the spec lies inside it (as
  pytest finds its rootdir), else the spec's own folder;
* for a spec in the Hugging Face cache (an ``hf://`` spec, or a pull without ``--dest``),
  the repo snapshot it was downloaded into (and the blobs its files link to).

``data.path`` and ``data.media_root`` must resolve inside the root, a local ``include:``
inside the root of the file that writes it;
media paths written in data rows must resolve inside the media root. "Inside" is checked
twice: on the path as written (``..`` cannot climb out) and after following symlinks (a
link cannot point out). A relative path never leaves its root. An absolute path, or a
symlink pointing out, is accepted only when the spec sets ``data.allow_absolute_paths: true``
(e.g. videos on a shared ``/datasets`` disk; for ``include:``, only in the file you named);
a spec from the Hub cannot set it.

Example:
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> roots = PathRoots((root,))
    >>> roots.resolve("videos/a.mp4", base=root) == root / "videos/a.mp4"
    True
    >>> try:
    ...     roots.resolve("../../etc/passwd", base=root, field="videos")
    ... except PathRefused as exc:
    ...     print(str(exc).split(" (")[0])
    videos: '../../etc/passwd' leaves its root
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from videorl_kit.core.errors import UserError
from videorl_kit.core.safe_text import quoted
from videorl_kit.core.spec_files import special_file_kind
from videorl_kit.hf.manifest import MANIFEST_NAME

#: Files that mark the root of a project or of a pulled Hub spec repo.
ROOT_MARKERS = (MANIFEST_NAME, ".git", "pyproject.toml")

#: The spec field that lets paths leave the root (in the ``data`` section).
ALLOW_ABSOLUTE_KEY = "allow_absolute_paths"
ALLOW_ABSOLUTE_FIELD = f"data.{ALLOW_ABSOLUTE_KEY}"
#: How a local spec's root is found, for messages.
ROOT_RULE = (
    f"a spec's root is the nearest folder above it holding {', '.join(ROOT_MARKERS)}, "
    "else the working directory if the spec is inside it, else the spec's own folder"
)


class PathRefused(UserError, ValueError):
    """A path that leaves its root (a ``ValueError`` too, so a data row is skipped, not fatal).

    ``field`` names where the path was written, ``written`` is the path as written,
    ``reason`` says what is wrong without repeating either, ``outside`` whether the path
    leaves its root (else it is a device, FIFO or socket) and ``allowable`` whether
    :data:`ALLOW_ABSOLUTE_FIELD` would accept it (an absolute path or a link; never ``..``).
    """

    def __init__(
        self,
        field: str,
        written: str | os.PathLike[str],
        reason: str,
        *,
        outside: bool = True,
        allowable: bool = False,
    ) -> None:
        self.field = field
        self.written = os.fspath(written)
        self.reason = reason
        self.outside = outside
        self.allowable = allowable
        hint = f"; set {ALLOW_ABSOLUTE_FIELD}: true to read it" if allowable else ""
        super().__init__(f"{field}: {quoted(self.written)} {reason}{hint}")


@dataclass(frozen=True)
class SpecRoot:
    """The folder a spec file's paths must stay inside, and whether it is a pulled Hub repo."""

    folder: Path
    from_hub: bool = False


def find_spec_root(spec_file: str | os.PathLike[str]) -> SpecRoot:
    """The root of a spec file on disk (see the module docstring).

    Example:
        >>> import pathlib, tempfile
        >>> project = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (project / "pyproject.toml").write_text("")
        >>> (project / "specs").mkdir()
        >>> find_spec_root(project / "specs" / "a.yaml").folder == project
        True
    """
    folder = Path(os.path.abspath(spec_file)).parent
    for candidate in (folder, *folder.parents):
        if _is_hub_snapshot(candidate):
            return SpecRoot(candidate, from_hub=True)
        for marker in ROOT_MARKERS:
            if os.path.lexists(candidate / marker):
                return SpecRoot(candidate, from_hub=marker == MANIFEST_NAME)
    cwd = Path.cwd()
    if cwd != Path(cwd.anchor) and (folder == cwd or cwd in folder.parents):
        return SpecRoot(cwd)
    return SpecRoot(folder)


def _is_hub_snapshot(folder: Path) -> bool:
    """Whether ``folder`` is one commit of a repo in the Hugging Face cache."""
    return folder.parent.name == "snapshots" and (folder.parent.parent / "blobs").is_dir()


def root_folders(root: SpecRoot) -> tuple[Path, ...]:
    """The folders a root covers: a Hub cache snapshot also covers the blobs its links point to.

    Example:
        >>> root_folders(SpecRoot(Path("/tmp")))
        (PosixPath('/tmp'),)
    """
    if _is_hub_snapshot(root.folder):
        return (root.folder, root.folder.parent.parent / "blobs")
    return (root.folder,)


def _inside(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == f or path.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


@dataclass(frozen=True)
class PathRoots:
    """Folders that paths must stay inside, and whether absolute paths may leave them.

    Whatever the roots, a device, FIFO or socket is never accepted. ``by_name_only`` checks
    paths by their names alone (no link followed, nothing stat'ed): for re-reading the rows
    of a store already built, whose media the reader does not open.
    """

    folders: tuple[Path, ...]
    allow_absolute: bool = False
    by_name_only: bool = False

    def resolve(self, written: str | os.PathLike[str], *, base: Path, field: str = "path") -> Path:
        """``written`` resolved against ``base``; raises :class:`PathRefused` if it leaves.

        Returns ``base / written`` (or ``written`` when absolute) without normalising it, so
        names derived from it stay as they were.

        Example:
            >>> anywhere = PathRoots((Path("/data"),), allow_absolute=True)
            >>> anywhere.resolve("/mnt/v.mp4", base=Path("/data"))
            PosixPath('/mnt/v.mp4')
        """
        if "\0" in os.fspath(written):  # no file name holds one; os calls would raise
            raise PathRefused(field, written, "holds a NUL character", outside=False)
        if self.by_name_only:
            return self._by_name(written, base, field)
        path = Path(written)
        joined = path if path.is_absolute() else base / path
        lexical = tuple(os.path.abspath(f) for f in self.folders)
        if not path.is_absolute() and not _inside(os.path.abspath(joined), lexical):
            raise PathRefused(field, written, f"leaves its root ({_roots(lexical)})")
        if self.allow_absolute:
            return _not_special(joined, written, field)
        real = tuple(os.path.realpath(f) for f in self.folders)
        if not _inside(os.path.realpath(joined), real):
            why = "is outside" if path.is_absolute() else "is a link that points outside"
            raise PathRefused(field, written, f"{why} its root ({_roots(lexical)})", allowable=True)
        return _not_special(joined, written, field)

    def _by_name(self, written: str | os.PathLike[str], base: Path, field: str) -> Path:
        """:meth:`resolve` by names only (string operations: this runs once per row)."""
        text = os.fspath(written)
        absolute = os.path.isabs(text)
        joined = text if absolute else os.path.join(os.fspath(base), text)
        if not absolute or not self.allow_absolute:
            normal = os.path.abspath(joined)
            if not any(normal == f or normal.startswith(p) for f, p in self._prefixes):
                why = "is outside" if absolute else "leaves"
                raise PathRefused(field, written, f"{why} its root ({_roots(self._lexical)})")
        return Path(joined)

    @cached_property
    def _lexical(self) -> tuple[str, ...]:
        return tuple(os.path.abspath(f) for f in self.folders)

    @cached_property
    def _prefixes(self) -> tuple[tuple[str, str], ...]:  # what _inside compares, made once
        return tuple((f, f.rstrip(os.sep) + os.sep) for f in self._lexical)


def _not_special(path: Path, written: str | os.PathLike[str], field: str) -> Path:
    try:
        kind = special_file_kind(os.stat(path).st_mode)
    except OSError:  # missing or unreadable: whoever opens it reports that
        return path
    if kind not in (None, "a folder"):
        raise PathRefused(field, written, f"is not a regular file ({kind})", outside=False)
    return path


def _roots(folders: tuple[str, ...]) -> str:
    return ", ".join(folders)
