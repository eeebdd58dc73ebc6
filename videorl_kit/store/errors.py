"""Errors raised by the frame store; all are :class:`~videorl_kit.core.errors.UserError` subclasses.

Example:
    >>> err = StoreMismatchError("store /s was built with cache schema 0")
    >>> isinstance(err, UserError)
    True
"""

from __future__ import annotations

import shlex

from videorl_kit.core.errors import UserError, VideoRLKitError


class StoreError(UserError):
    """A store cannot be opened, read or written."""


class StoreNotFoundError(StoreError):
    """The folder is not a videorl-kit store (no ``frames.lance`` inside)."""


class StoreMismatchError(StoreError):
    """The store was written with another cache-schema version or budget than expected."""


class StoreIntegrityError(StoreError):
    """Stored bytes do not match their checksum, or a data file is damaged or gone.

    ``problem`` is what is wrong, without the store and repair hint around it.
    """

    def __init__(self, message: str, problem: str = "") -> None:
        super().__init__(message)
        self.problem = problem or message


class MissingKeyError(StoreError, KeyError):
    """A cache key is not in the store."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class BuildInvariantError(VideoRLKitError, RuntimeError):
    """Internal bug: an input did not end in exactly one of ok / failed / skipped."""


def rebuild_hint(store: str, *, schema_changed: bool = False) -> str:
    """The sentence telling a user how to (re)build a store.

    A budget mismatch is fixed by building the missing budget into the same store (a store
    holds several budgets side by side); a schema change needs a fresh folder.

    Example:
        >>> rebuild_hint("/data/cache")
        'build it with `videorl-kit build-cache SPEC... --store /data/cache`'
        >>> rebuild_hint("/data/my cache")  # the path quoted for a shell
        "build it with `videorl-kit build-cache SPEC... --store '/data/my cache'`"
        >>> rebuild_hint("/data/cache", schema_changed=True)  # doctest: +ELLIPSIS
        'move /data/cache away (or delete it) and rebuild with `videorl-kit build-cache ...`'
    """
    command = f"`videorl-kit build-cache SPEC... --store {shlex.quote(store)}`"
    if schema_changed:
        return f"move {store} away (or delete it) and rebuild with {command}"
    return f"build it with {command}"


def repair_hint(store: str) -> str:
    """The sentence telling a user how to repair a damaged store.

    Example:
        >>> repair_hint("/data/cache")  # doctest: +ELLIPSIS
        'run `videorl-kit cache repair --store /data/cache` (re-decodes damaged rows ...)'
        >>> repair_hint("/data/my cache")  # doctest: +ELLIPSIS
        "run `videorl-kit cache repair --store '/data/my cache'` ..."
    """
    return (
        f"run `videorl-kit cache repair --store {shlex.quote(store)}` (re-decodes damaged "
        "rows from their sources)"
    )
