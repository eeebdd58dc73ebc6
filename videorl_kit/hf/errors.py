"""Errors raised by the Hub code (resolving ``hf://`` files, publishing, pulling).

Both are :class:`~videorl_kit.core.errors.UserError` subclasses, so the CLI prints them as
one line with exit status 1.

Example:
    >>> raise HubIntegrityError("specs/a.yaml: sha256 mismatch")
    Traceback (most recent call last):
    ...
    videorl_kit.hf.errors.HubIntegrityError: specs/a.yaml: sha256 mismatch
"""

from __future__ import annotations

from videorl_kit.core.errors import UserError


class HubError(UserError):
    """A Hub repo, revision or file could not be used (not found, bad reference, network)."""


class HubIntegrityError(HubError):
    """A downloaded file does not match the repo's manifest (tampered, truncated or missing)."""
