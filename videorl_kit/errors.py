"""Error types shared across the kit.

:class:`UserError` marks a problem with the user's input (a file, a flag, a spec):
the CLI prints its message on one line and exits with status 1, never a traceback.

Example:
    >>> raise UserError("data/x.jsonl: no such file")
    Traceback (most recent call last):
    ...
    videorl_kit.errors.UserError: data/x.jsonl: no such file
"""


class UserError(Exception):
    """A problem with user input, reported as one clear line by the CLI."""
