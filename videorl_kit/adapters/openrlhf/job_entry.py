"""The Ray job's entrypoint: ``python -m videorl_kit.adapters.openrlhf.job_entry ARGV_FILE``.

It runs ``python -m openrlhf.cli.train_ppo_ray`` with the argv of the bundle's ``argv.json``,
as a list, with no shell in between. No value of the run travels on the job's command line,
because that line is read twice: ``ray job submit -- CMD ...`` joins ``CMD`` with Windows
quoting (``subprocess.list2cmdline``, which leaves ``$(...)``, backticks and ``;`` as they
are), and Ray's job supervisor runs the result with ``/bin/sh``. The only word that does
travel, the path of ``argv.json``, is written in characters that both read the same
(:func:`argv_token`): as it is when plain, else base64url behind ``b64:``.

The kit reaches the job's driver through the runtime env's ``py_modules``, like every Ray
worker; ``argv.json`` is read on the driver, where the bundle is at the same path.

Example:
    >>> argv_token(Path("/runs/tiny/argv.json"))
    '/runs/tiny/argv.json'
    >>> token = argv_token(Path("/runs/my run $(x)/argv.json")); token[:8]
    'b64:L3J1'
    >>> argv_file(token)
    PosixPath('/runs/my run $(x)/argv.json')
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from videorl_kit.adapters.openrlhf.parser_check import ENTRY_MODULE
from videorl_kit.core.errors import UserError
from videorl_kit.core.safe_text import escape_controls

MODULE = "videorl_kit.adapters.openrlhf.job_entry"

_PLAIN = re.compile(r"/[A-Za-z0-9_./-]*")
"""Characters that POSIX shells and ``list2cmdline`` both leave alone."""

_B64 = "b64:"


def argv_token(path: Path) -> str:
    """The one command-line word that names ``path`` (see the module doc)."""
    text = str(path)
    if _PLAIN.fullmatch(text):
        return text
    return _B64 + base64.urlsafe_b64encode(os.fsencode(text)).decode("ascii")


def argv_file(token: str) -> Path:
    """The path :func:`argv_token` wrote as ``token``."""
    if token.startswith(_B64):
        return Path(os.fsdecode(base64.urlsafe_b64decode(token[len(_B64) :])))
    return Path(token)


def entrypoint(argv_json: Path) -> str:
    """The job's command line: this module on the bundle's ``argv.json``.

    Example:
        >>> entrypoint(Path("/runs/x/argv.json"))
        'python -m videorl_kit.adapters.openrlhf.job_entry /runs/x/argv.json'
    """
    return f"python -m {MODULE} {argv_token(argv_json)}"


def read_argv(path: Path) -> list[str]:
    """The argv list in ``path``; raises :class:`UserError` naming the file otherwise."""
    try:
        argv = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: cannot read the job's argv ({exc})") from None
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise UserError(f"{path}: the job's argv must be a JSON list of strings")
    return argv


def main(args: Sequence[str] | None = None) -> None:
    """Replace this process with OpenRLHF's trainer on the argv ``args[0]`` names."""
    words = list(sys.argv[1:] if args is None else args)
    if len(words) != 1:
        raise UserError(f"usage: python -m {MODULE} ARGV_JSON (got {len(words)} arguments)")
    argv = read_argv(argv_file(words[0]))
    shown = escape_controls(shlex.join(argv))  # the job log is read on a terminal
    print(f"videorl-kit job: python -m {ENTRY_MODULE} {shown}", flush=True)
    os.execv(sys.executable, [sys.executable, "-m", ENTRY_MODULE, *argv])


if __name__ == "__main__":
    main()
