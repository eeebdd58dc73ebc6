"""The ``videorl-kit`` command line (Typer + Rich).

Each package contributes its commands through a ``register(app)`` function in its
``commands`` module, so this file only assembles them and turns user errors into a
one-line message with exit code 1.

The command modules are imported at start-up; each imports the heavy modules of its
commands (Lance, PyAV, a training backend) when the command runs, so that
``videorl-kit --help`` and ``validate`` start in about a second.
"""

from __future__ import annotations

import errno
import functools
import io
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from videorl_kit import __version__
from videorl_kit.core.errors import UserError
from videorl_kit.core.safe_text import terminal_text
from videorl_kit.eval.commands import register as register_eval
from videorl_kit.hub.commands import register as register_hub
from videorl_kit.rewards.commands import register as register_rewards
from videorl_kit.spec.commands import register as register_spec
from videorl_kit.store.commands import register as register_store
from videorl_kit.synth.commands import register as register_synth
from videorl_kit.testing.commands import register as register_testing
from videorl_kit.train.commands import BackendFactory
from videorl_kit.train.commands import register as register_train
from videorl_kit.train.offline.commands import register as register_trajectories
from videorl_kit.train.recipe import is_recipe_document

if TYPE_CHECKING:
    from videorl_kit.train.run import TrainBackend


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"videorl-kit {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version."
    ),
) -> None:
    """videorl-kit: declare a task once, decode once, reward strictly."""


def _trl_backend() -> TrainBackend:
    from videorl_kit.adapters.trl import TrlBackend

    return TrlBackend()


def _openrlhf_backend() -> TrainBackend:
    from videorl_kit.adapters.openrlhf.backend import OpenRLHFBackend

    return OpenRLHFBackend()


BACKENDS: dict[str, BackendFactory] = {"trl": _trl_backend, "openrlhf": _openrlhf_backend}
"""The training backends of this installation, by name: a factory each (imported when used)."""


def _validate_recipe(
    path: str | Path, backends: Mapping[str, BackendFactory]
) -> tuple[str, list[str]]:
    """``validate`` of a recipe: its id, then what it found: the offline section's trajectories
    and the data warnings (Lance and the plan load lazily). The recipe's backend (from
    ``backends``) adds its problems to the recipe's own."""
    from videorl_kit.train.offline.commands import validate_recipe_document
    from videorl_kit.train.plan import recipe_warnings

    found = validate_recipe_document(path, backends=backends)
    recipe_id, notes = found if isinstance(found, tuple) else (found, [])
    _, warnings = recipe_warnings(path)
    return recipe_id, [*notes, *(f"warning: {warning}" for warning in warnings)]


def _register_commands(root: typer.Typer, backends: Mapping[str, BackendFactory]) -> None:
    recipes = functools.partial(_validate_recipe, backends=backends)
    register_spec(root, other_kinds=[(is_recipe_document, recipes)])
    register_rewards(root)
    register_hub(root)
    register_synth(root)
    register_testing(root)  # reward check, in the reward group
    register_store(root)
    register_eval(root)
    register_train(root, backends=backends)
    register_trajectories(root)


def build_app(backends: Mapping[str, BackendFactory]) -> typer.Typer:
    """The ``videorl-kit`` command with the given training backends: ``train`` runs on them,
    and ``validate`` and ``train`` report the recipe's backend's ``problems`` with the
    recipe's own (a backend outside the kit is added here, under the name recipes use).

    Example:
        >>> from typer.testing import CliRunner
        >>> done = CliRunner().invoke(build_app(BACKENDS), ["validate", "recipes/tiny-grpo.yaml"])
        >>> done.exit_code
        0
    """
    root = typer.Typer(
        name="videorl-kit",
        help="Declarative RLVR for video understanding: specs, decode-once cache, verifiers.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode="rich",
    )
    root.callback()(_root)
    _register_commands(root, backends)
    return root


app = build_app(BACKENDS)

#: ``OSError`` numbers that mean "this path cannot be used", whoever typed it: one line, exit 1.
PATH_ERRNOS = frozenset(
    {
        errno.ENAMETOOLONG,
        errno.ENOTDIR,
        errno.EISDIR,
        errno.EEXIST,
        errno.EACCES,
        errno.EROFS,
        errno.ENOSPC,
        errno.ELOOP,
    }
)


def main() -> None:
    """Entry point of the console script; a :class:`UserError` becomes one line and exit 1.

    Example:
        $ videorl-kit validate task_specs/*.yaml
    """
    for stream in (sys.stdout, sys.stderr):  # a lone surrogate is escaped, never a crash
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        app()  # standalone mode: Click handles --help, usage errors and typer.Exit
    except UserError as exc:
        typer.secho(f"error: {terminal_text(str(exc))}", err=True, fg=typer.colors.RED)
        raise SystemExit(1) from None
    except OSError as exc:
        if exc.errno not in PATH_ERRNOS or exc.filename is None:
            raise
        # a path given by the user (flag, recipe, spec) that the file system refuses: a name
        # longer than NAME_MAX, a file where a folder must be, a read-only or full disk
        message = f"{exc.filename}: {exc.strerror}"
        typer.secho(f"error: {terminal_text(message)}", err=True, fg=typer.colors.RED)
        raise SystemExit(1) from None
