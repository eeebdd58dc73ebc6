"""The store's write lock: one writer at a time changes a store's tables or its version record.

Every change a kit process makes to a store — creating its tables, recording a budget in the
frames table's config, each commit of rows, the version record written after it, a repair —
happens while the process holds an exclusive :func:`fcntl.flock` on ``<store>/`` :data:`LOCK_NAME`.
Decoding, hashing and reading run outside it, so two ``build-cache`` processes writing one store
still decode side by side and only take turns to commit. After taking the lock a writer
re-reads what it is about to change (whether a table exists, whether a budget is recorded,
which keys are committed), so the second of two writers finds the first one's work done.

Properties:

* **Never stale.** The kernel releases a ``flock`` when the process that holds it exits, however
  it exits (a crash, ``SIGKILL``, a lost node); the lock file itself stays (removing it would
  let two processes lock two different files of one name) and holds nothing.
* **Re-entrant** within a process (a commit inside a repair takes it again without blocking);
  threads of one process take turns. A child made with ``fork`` forgets the locks of its
  parent and closes its copies of their files, so a worker never keeps a store locked.
* **Readers take no lock.** Lance commits are atomic and a reader sees one committed version;
  ``FrameStore``, ``cache status``, ``verify`` and ``export`` never open the lock file, so a
  read-only store (a read-only mount, a shared copy) reads as before.
* **Bounded wait.** A writer waits at most ``timeout_s`` (default :data:`LOCK_WAIT_S`) for the
  lock and then fails with one line naming the lock file.

Network file systems: Linux emulates ``flock`` on NFS with POSIX byte-range locks (NFSv4, or
NFSv3 with ``lockd``), which lock across clients; a mount without lock support (``nolock``,
some FUSE file systems) answers ``ENOLCK``/``EOPNOTSUPP``: the writer then warns once and goes
on unlocked, relying on Lance's own commit conflict detection and the kit's bounded retries
(:func:`retry_conflicts`); two builders creating one store at the same moment are not safe there.
SMB/CIFS and object stores are not supported as store locations for concurrent writers.

Example:
    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> with write_lock(root):
    ...     with write_lock(root):  # re-entrant
    ...         held(root)
    True
    >>> held(root)
    False
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from videorl_kit.store.errors import StoreError, StoreIntegrityError

LOCK_NAME = ".videorl_kit.lock"
"""The lock file inside a store folder (empty; only its ``flock`` matters)."""

LOCK_WAIT_S = 1800.0
"""How long a writer waits for another writer's lock before giving up (one line)."""

CONFLICT_RETRIES = 5
"""How often :func:`retry_conflicts` runs an operation again after a Lance commit conflict."""

_UNSUPPORTED = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}

T = TypeVar("T")


class _Held:
    """One store's lock as this process holds it: the file, and how deep it is taken."""

    def __init__(self) -> None:
        self.mutex = threading.RLock()
        self.fd: int | None = None
        self.depth = 0


_held: dict[str, _Held] = {}
_registry = threading.Lock()
_warned: set[str] = set()


def lock_path(root: str | Path) -> Path:
    """The lock file of the store at ``root``.

    Example:
        >>> str(lock_path("/data/cache"))
        '/data/cache/.videorl_kit.lock'
    """
    return Path(root) / LOCK_NAME


def _key(root: str | Path) -> str:
    return os.path.realpath(root)


def held(root: str | Path) -> bool:
    """Whether this process holds the write lock of the store at ``root``."""
    entry = _held.get(_key(root))
    return entry is not None and entry.depth > 0


def _open_lock_file(root: Path) -> int:
    """Open (creating if needed) the lock file; refuse a link or a special file (one line).

    Opened read-only (``flock`` needs no write access, so a lock file another user created
    works), without following a link and without blocking on a FIFO.
    """
    path = lock_path(root)
    flags = os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StoreIntegrityError(
                f"{root}: the store is damaged: its write lock {path} is a symbolic link; "
                "remove it (the kit creates it again)"
            ) from None
        if exc.errno == errno.EISDIR:
            raise _not_a_file(root, path) from None
        raise StoreError(
            f"{root}: cannot write to the store ({path}: {exc.strerror or exc}); "
            "build into a writable folder or fix its permissions"
        ) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise _not_a_file(root, path)
    return fd


def _not_a_file(root: Path, path: Path) -> StoreIntegrityError:
    return StoreIntegrityError(
        f"{root}: the store is damaged: its write lock {path} is not a regular file; "
        "remove it (the kit creates it again)"
    )


def _flock(fd: int, root: Path, timeout_s: float) -> bool:
    """Take the exclusive lock on ``fd``, waiting up to ``timeout_s``; False if unsupported."""
    deadline = time.monotonic() + timeout_s
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        except OSError as exc:
            if exc.errno in _UNSUPPORTED:
                return False
            raise
        if time.monotonic() >= deadline:
            raise StoreError(
                f"{root}: another process has held the store's write lock "
                f"{lock_path(root)} for over {timeout_s:g} s; wait for that build (or repair) "
                "to finish and run this again (a process that died has released it)"
            )
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


@contextlib.contextmanager
def write_lock(root: str | Path, *, timeout_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the exclusive write lock of the store at ``root`` (see the module notes).

    Creates the folder ``root`` when it does not exist yet (a store being created). Raises
    :class:`~videorl_kit.store.errors.StoreError` (one line) when the folder or the lock file
    cannot be created or the lock is not free within ``timeout_s``, and
    :class:`~videorl_kit.store.errors.StoreIntegrityError` when the lock file is a link or
    not a regular file.

    Example:
        >>> import tempfile
        >>> root = tempfile.mkdtemp()
        >>> with write_lock(root):
        ...     lock_path(root).is_file()
        True
    """
    root = Path(root)
    _watch_forks()
    with _registry:
        entry = _held.setdefault(_key(root), _Held())
    with entry.mutex:
        if entry.depth == 0:
            try:
                root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"{root}: cannot write to the store ({exc.strerror or exc}); "
                    "build into a writable folder or fix its permissions"
                ) from None
            fd = _open_lock_file(root)
            try:
                locked = _flock(fd, root, timeout_s)
            except BaseException:
                os.close(fd)
                raise
            if not locked and _key(root) not in _warned:
                _warned.add(_key(root))
                warnings.warn(
                    f"{root}: the file system does not support file locks; writing without "
                    "the store's write lock (two writers creating one store at once may fail)",
                    stacklevel=3,
                )
            entry.fd = fd
        entry.depth += 1
        try:
            yield
        finally:
            entry.depth -= 1
            if entry.depth == 0 and entry.fd is not None:
                fd, entry.fd = entry.fd, None
                os.close(fd)  # releases the flock


def _forget_after_fork() -> None:
    """In a forked child: close the inherited lock files, so the parent's unlock counts."""
    global _registry
    _registry = threading.Lock()
    for entry in list(_held.values()):
        if entry.fd is not None:
            with contextlib.suppress(OSError):
                os.close(entry.fd)
    _held.clear()


_fork_hook: list[bool] = []


def _watch_forks() -> None:
    """Register :func:`_forget_after_fork` once (on the first lock, not at import)."""
    if not _fork_hook:
        _fork_hook.append(True)
        os.register_at_fork(after_in_child=_forget_after_fork)


def is_commit_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` is Lance refusing a commit because another writer committed first.

    Example:
        >>> is_commit_conflict(OSError("Retryable commit conflict for version 4"))
        True
        >>> is_commit_conflict(OSError("No such file or directory"))
        False
    """
    if not isinstance(exc, OSError | RuntimeError):
        return False
    text = str(exc)
    return (
        type(exc).__name__ == "CommitConflictError"
        or "commit conflict" in text.lower()
        or "Incompatible transaction" in text
    )


def retry_conflicts(
    operation: Callable[[], T], *, attempts: int = CONFLICT_RETRIES, pause_s: float = 0.05
) -> T:
    """Run ``operation``; after a Lance commit conflict, run it again (at most ``attempts``
    times in all, with a short growing pause). ``operation`` must re-read the table it
    changes (open the dataset inside it), so a retry works on the newest version.

    Under the write lock kit writers do not conflict with each other; this covers writers
    the lock cannot see (a file system without locks, a concurrent ``lance`` user).

    Example:
        >>> calls = []
        >>> def flaky():
        ...     calls.append(1)
        ...     if len(calls) < 3:
        ...         raise OSError("Retryable commit conflict for version 7")
        ...     return "done"
        >>> retry_conflicts(flaky, pause_s=0), len(calls)
        ('done', 3)
    """
    for attempt in range(1, attempts + 1):
        try:
            return operation()
        except (OSError, RuntimeError) as exc:
            if attempt == attempts or not is_commit_conflict(exc):
                raise
        time.sleep(pause_s * attempt)
    raise AssertionError("unreachable")  # pragma: no cover
