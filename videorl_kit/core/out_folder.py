"""Output folders the kit writes into hold no symbolic link.

A run folder, a report folder or an export folder may be shared (a scratch disk, a folder
someone else prepared). A link placed there beforehand (``plan.json -> ~/.bashrc``,
``data -> /elsewhere``) would make the kit write through it, outside the folder, over a file
it never meant to touch. Every command that writes into an existing folder checks it first
with :func:`refuse_links` and refuses, in one line, a folder that holds a link anywhere
inside. The folder itself may be a link: its path is the user's choice.
"""

from __future__ import annotations

import os
from pathlib import Path

from videorl_kit.core.errors import UserError


def first_link(folder: str | Path) -> Path | None:
    """The first symbolic link inside ``folder`` (links are not followed), else None.

    Example:
        >>> import tempfile, pathlib
        >>> out = pathlib.Path(tempfile.mkdtemp())
        >>> first_link(out) is None
        True
        >>> (out / "plan.json").symlink_to("/etc/hostname")
        >>> first_link(out).name
        'plan.json'
    """
    root = Path(folder)  # the folder itself may be a link: whoever typed its path chose it
    if not root.is_dir():
        return None
    for current, dirs, files in os.walk(root, followlinks=False):
        for name in sorted(dirs + files):
            path = Path(current) / name
            if path.is_symlink():
                return path
    return None


def refuse_links(folder: str | Path, what: str) -> None:
    """Raise a one-line :class:`UserError` when ``folder`` holds a symbolic link.

    ``what`` names the folder for the user (``--out runs/x``, ``the run folder runs/x``).

    Example:
        >>> import tempfile, pathlib
        >>> out = pathlib.Path(tempfile.mkdtemp())
        >>> (out / "data").symlink_to("/tmp")
        >>> refuse_links(out, "--out x")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.core.errors.UserError: --out x holds a symbolic link, .../data -> /tmp; ...
    """
    link = first_link(folder)
    if link is not None:
        raise UserError(
            f"{what} holds a symbolic link, {link} -> {os.readlink(link)}; the kit writes only "
            "inside its output folder and never through a link: remove the link or choose "
            "another folder"
        )
