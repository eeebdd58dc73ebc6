"""Is a store physically whole? Data files present at their recorded size, and no table
rolled back to an older version behind the kit's back.

Lance records every data file of a version in that version's manifest, with its size in
bytes. :func:`damaged_files` compares each with the file on disk (a deleted or truncated
file is damage that a read would otherwise hit as an obscure I/O error). Lance opens the
newest manifest it finds, so deleting the latest ``_versions/N.manifest`` would silently
serve version N-1; the kit therefore records the versions it last committed in a small state
file (:data:`STATE_NAME`) and :func:`rolled_back_tables` reports a table whose newest version
is older than that record.

The state file is itself part of the check, so losing it must not switch the check off:
a state file that is present but unreadable (not JSON, not ``{"versions": {table: int}}``)
is damage (:func:`state_problem`), and so is a missing state file in a store whose tables
hold rows. Every store of the current cache schema was written by a kit that records its
versions after each commit, and :meth:`~videorl_kit.store.tables.StoreTables.create` writes
the file when it creates a store, so only an empty store may lack it. Both cases name the
file and ``cache repair``, which records the tables' current versions again (and says that
a newer version lost at the same time cannot be told apart any more).

Example:
    >>> import tempfile
    >>> from videorl_kit.store.tables import StoreTables
    >>> tables = StoreTables.create(tempfile.mkdtemp())
    >>> record_versions(tables.root, {"frames": 5})
    >>> rolled_back_tables(tables.root, {"frames": 4})
    {'frames': (4, 5)}
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import lance

from videorl_kit.core.errors import VideoRLKitError

STATE_NAME = "videorl_kit_state.json"
"""File in the store folder: ``{"versions": {table: last version the kit committed}}``."""


@dataclass(frozen=True)
class DamagedFile:
    """A file a table's current version needs that is missing or has the wrong size."""

    table: str
    fragment_id: int
    path: str
    problem: str

    def __str__(self) -> str:
        return f"{self.table} fragment {self.fragment_id}: {self.path} {self.problem}"


def damaged_files(table: str, dataset: lance.LanceDataset) -> list[DamagedFile]:
    """Data and deletion files of ``dataset``'s version that are missing or truncated.

    Example:
        >>> import tempfile, pyarrow as pa
        >>> ds = lance.write_dataset(pa.table({"a": [1]}), tempfile.mkdtemp() + "/t.lance")
        >>> damaged_files("t", ds)
        []
    """
    root = Path(dataset.uri)
    found: list[DamagedFile] = []
    for fragment in dataset.get_fragments():
        metadata = fragment.metadata
        needed = []
        for f in metadata.files:
            if f.base_id is not None:  # the kit writes no multi-base tables
                problem = f"is on another storage base ({f.base_id}), outside the store"
                found.append(DamagedFile(table, fragment.fragment_id, f.path, problem))
            else:
                needed.append((root / "data" / f.path, int(f.file_size_bytes or 0)))
        deletion = metadata.deletion_file
        if deletion is not None and deletion.base_id is None:
            needed.append((root / deletion.path(fragment.fragment_id), 0))
        for path, size in needed:
            outside = _outside(root, path)
            if outside:
                found.append(DamagedFile(table, fragment.fragment_id, str(path), outside))
                continue
            try:
                actual = path.stat().st_size
            except FileNotFoundError:
                found.append(DamagedFile(table, fragment.fragment_id, str(path), "is missing"))
                continue
            if size and actual != size:
                problem = f"has {actual} bytes, the table recorded {size} (truncated?)"
                found.append(DamagedFile(table, fragment.fragment_id, str(path), problem))
    return found


def _outside(root: Path, path: Path) -> str | None:
    """Why ``path`` is not a file of the table folder ``root`` (None when it is one): a name
    that climbs out of the folder or a symbolic link (Lance writes neither)."""
    if path.is_symlink():
        return f"is a symbolic link to {os.readlink(path)} (Lance writes none)"
    if not os.path.realpath(path).startswith(os.path.realpath(root) + os.sep):
        return "lies outside the table folder (its manifest entry climbs out of the store)"
    return None


class StateFileError(VideoRLKitError, ValueError):
    """The state file is present but cannot be read as ``{"versions": {table: int}}``."""


#: The most bytes a version record may hold (the kit writes a few hundred).
MAX_STATE_BYTES = 1 << 20


def _kind(mode: int) -> str:
    """A file type in words, for messages (``a FIFO``, ``a character device``)."""
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _read_small_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of ``path``, opened without following a link and without blocking on a
    FIFO; ``OSError`` / :class:`StateFileError` when it is not a regular file of at most
    ``limit`` bytes (``FileNotFoundError`` when absent)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StateFileError(
                f"is a symbolic link to {os.readlink(path)} (the kit writes a regular file)"
            ) from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise StateFileError(f"is {_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise StateFileError(f"holds {info.st_size} bytes, more than a record's {limit}")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise StateFileError(f"holds more than a record's {limit} bytes")
    return data


def special_manifest(folder: Path) -> str | None:
    """Why a table folder's ``_versions`` holds an entry Lance would block on or follow out of
    the store (a FIFO, a device, a link), or None when every entry is a regular file.

    Lance opens the newest manifest without checking its type, so a FIFO there makes every
    open of the store wait forever. Listing the folder costs no ``stat`` per entry.

    Example:
        >>> import tempfile, pathlib
        >>> table = pathlib.Path(tempfile.mkdtemp())
        >>> (table / "_versions").mkdir()
        >>> os.mkfifo(table / "_versions" / "1.manifest")
        >>> special_manifest(table)  # doctest: +ELLIPSIS
        '.../_versions/1.manifest is a FIFO, not a regular file (Lance writes only files)'
    """
    versions = folder / "_versions"
    try:
        entries = list(os.scandir(versions))
    except (FileNotFoundError, NotADirectoryError):
        return None
    for entry in entries:
        if entry.is_symlink():
            return (
                f"{entry.path} is a symbolic link to {os.readlink(entry.path)} (Lance writes none)"
            )
        if not entry.is_file(follow_symlinks=False):
            mode = os.stat(entry.path, follow_symlinks=False).st_mode
            return f"{entry.path} is {_kind(mode)}, not a regular file (Lance writes only files)"
    return None


def _read_state(root: Path) -> dict[str, int] | None:
    """The recorded versions; None when there is no state file; :class:`StateFileError`
    (saying what is wrong) when there is one that cannot be read: not a regular file (a link,
    a FIFO, a device are never opened for reading), over :data:`MAX_STATE_BYTES`, not JSON."""
    path = root / STATE_NAME
    try:
        text = _read_small_regular_file(path, MAX_STATE_BYTES).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StateFileError(f"cannot be read ({exc})") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise StateFileError("is not JSON (nested too deeply)") from None
    except ValueError as exc:
        raise StateFileError(f"is not JSON ({exc})") from None
    versions = data.get("versions") if isinstance(data, dict) else None
    if not isinstance(versions, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in versions.values()
    ):
        raise StateFileError('is not {"versions": {table: version}}') from None
    return {str(k): int(v) for k, v in versions.items()}


def recorded_versions(root: Path) -> dict[str, int]:
    """The table versions the kit last committed (empty when never recorded).

    Raises :class:`StateFileError` when the state file is present but unreadable.

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> recorded_versions(root)
        {}
        >>> _ = (root / STATE_NAME).write_text("[1, 2")
        >>> recorded_versions(root)
        Traceback (most recent call last):
        ...
        videorl_kit.store.integrity.StateFileError: is not JSON (Expecting ',' delimiter: ...)
    """
    return _read_state(root) or {}


def state_problem(root: Path, has_rows: bool) -> str | None:
    """What is wrong with the store's state file, or None when it can be trusted.

    ``has_rows``: whether any table of the store holds rows (then the file must exist).

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> state_problem(root, has_rows=False) is None
        True
        >>> state_problem(root, has_rows=True)  # doctest: +ELLIPSIS
        'its version record ... is missing, ...'
    """
    path = root / STATE_NAME
    try:
        found = _read_state(root)
    except StateFileError as exc:
        return (
            f"its version record {path} {exc}, so a table rolled back to an older version "
            "(a lost newest manifest) cannot be noticed"
        )
    if found is None and has_rows:
        return (
            f"its version record {path} is missing, so a table rolled back to an older "
            "version (a lost newest manifest) cannot be noticed"
        )
    return None


def record_versions(root: Path, versions: dict[str, int]) -> None:
    """Record ``versions`` as the latest the kit committed (never lowering a recorded one
    unless ``versions`` comes from :func:`accept_versions`). Written atomically.

    Raises :class:`StateFileError` when the present state file is unreadable: only
    ``cache repair`` (:func:`reset_versions`) replaces such a file.
    """
    merged = recorded_versions(root)
    for table, version in versions.items():
        merged[table] = max(version, merged.get(table, 0))
    _write_state(root, merged)


def accept_versions(root: Path, versions: dict[str, int]) -> None:
    """Record exactly ``versions`` (after a repair accepted a rolled-back table).

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> record_versions(root, {"frames": 5}); accept_versions(root, {"frames": 3})
        >>> recorded_versions(root)
        {'frames': 3}
    """
    merged = recorded_versions(root)
    merged.update(versions)
    _write_state(root, merged)


def reset_versions(root: Path, versions: dict[str, int]) -> None:
    """Replace the state file, whatever it holds, by exactly ``versions`` (``cache repair``
    after :func:`state_problem` named it).

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (root / STATE_NAME).write_text("garbage")
        >>> reset_versions(root, {"frames": 3}); recorded_versions(root)
        {'frames': 3}
    """
    _write_state(root, dict(versions))


def _write_state(root: Path, versions: dict[str, int]) -> None:
    path = root / STATE_NAME
    tmp = path.with_name(f".{STATE_NAME}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"versions": dict(sorted(versions.items()))}) + "\n")
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def rolled_back_tables(
    root: Path, latest: dict[str, int], *, recorded: dict[str, int] | None = None
) -> dict[str, tuple[int, int]]:
    """``{table: (latest version found, version recorded)}`` for tables that went back.

    ``recorded``: the version record, read before ``latest`` (default: read now). A reader
    that takes no lock reads the record first, since writers record after committing.
    """
    if recorded is None:
        recorded = recorded_versions(root)
    return {
        table: (version, recorded[table])
        for table, version in latest.items()
        if table in recorded and version < recorded[table]
    }
