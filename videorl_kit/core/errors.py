"""Error types shared across the kit.

:class:`VideoRLKitError` is the root of every error the kit defines, so a caller can catch
all of them in one ``except``. Errors that also fit a built-in category derive from it too
(a missing verifier is also a ``LookupError``, bad verifier params also a ``ValueError``).

:class:`UserError` marks a problem with the user's input (a file, a flag, a spec): the CLI
prints its message on one line and exits with status 1, never a traceback.

Example:
    >>> raise UserError("data/x.jsonl: no such file")
    Traceback (most recent call last):
    ...
    videorl_kit.core.errors.UserError: data/x.jsonl: no such file
    >>> issubclass(UserError, VideoRLKitError)
    True
"""


class VideoRLKitError(Exception):
    """The root of every error class videorl-kit defines."""


class UserError(VideoRLKitError):
    """A problem with user input, reported as one clear line by the CLI."""
