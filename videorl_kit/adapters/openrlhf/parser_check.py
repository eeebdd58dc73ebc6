"""Run OpenRLHF's own argument parser and post-parse checks on an argv, without Ray or vLLM.

``openrlhf/cli/train_ppo_ray.py`` builds its parser inside ``if __name__ == "__main__":``,
then checks and rewrites the parsed arguments (asserts, forced flags, printed warnings) and
calls ``train(args)``; importing the module needs Ray and vLLM. This module reads the file
with :mod:`ast`, compiles the body of that block and runs it with ``sys.argv`` set to the
argv under test and a stand-in ``train``. The stand-in runs the asserts of the real
``train()`` that read only ``args`` (its GPU-sizing checks: colocated actor and reference
must match, hybrid-engine vLLM GPUs must equal actor GPUs) and records the arguments. So an
argv is checked by the installed OpenRLHF's own code, flag for flag and assert for assert.

Example (a stand-in source file with the same shape as OpenRLHF's):
    >>> import pathlib, tempfile
    >>> source = pathlib.Path(tempfile.mkdtemp()) / "train_ppo_ray.py"
    >>> _ = source.write_text('''
    ... import argparse
    ... def train(args):
    ...     assert args.n >= 1, "n must be positive"
    ...     start_the_cluster()
    ... if __name__ == "__main__":
    ...     parser = argparse.ArgumentParser()
    ...     parser.add_argument("--n", type=int, default=1)
    ...     args = parser.parse_args()
    ...     if args.n > 8:
    ...         print("[Warning] n is large")
    ...     train(args)
    ... ''')
    >>> parser = OpenRLHFParser(source)
    >>> parser.check(["--n", "9"]).warnings
    ('[Warning] n is large',)
    >>> parser.check(["--n", "0"]).error
    'n must be positive'
    >>> parser.check(["--m", "1"]).error
    'unrecognized arguments: --m 1'
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import importlib.util
import io
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ENTRY_MODULE = "openrlhf.cli.train_ppo_ray"
"""The module ``launch.sh`` runs with ``python -m``."""

_ARGV_LOCK = threading.Lock()  # sys.argv and stdout/stderr are process-wide


@dataclass(frozen=True)
class ParserVerdict:
    """What OpenRLHF's parser and post-parse checks made of one argv.

    ``kind`` is ``ok``, ``usage`` (argparse refused a flag or value), ``assertion`` (a
    post-parse or launch check failed) or ``exception`` (the checks crashed on the
    combination). ``warnings`` are the lines the checks printed (OpenRLHF reports flags it
    overrides this way); ``args`` are the final arguments as nested dicts when accepted.
    """

    argv: tuple[str, ...]
    kind: str
    error: str | None = None
    warnings: tuple[str, ...] = ()
    args: dict[str, Any] | None = None

    @property
    def accepted(self) -> bool:
        """True when OpenRLHF would start training with this argv."""
        return self.kind == "ok"


def entry_source() -> Path:
    """Path of the installed ``openrlhf/cli/train_ppo_ray.py`` (found without importing it).

    Raises ``ModuleNotFoundError`` when OpenRLHF is not installed (run ``make openrlhf-env``).

    Example:
        >>> try:
        ...     name = entry_source().name
        ... except ModuleNotFoundError:  # OpenRLHF lives in .venv-openrlhf, not in .venv
        ...     name = "train_ppo_ray.py"
        >>> name
        'train_ppo_ray.py'
    """
    spec = importlib.util.find_spec("openrlhf")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            "openrlhf is not installed in this environment; `make openrlhf-env` creates "
            ".venv-openrlhf with openrlhf 0.11.2"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "cli" / "train_ppo_ray.py"


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _args_only(statements: list[ast.stmt]) -> list[ast.stmt]:
    """The asserts of ``statements`` (and the ifs around them) that read nothing but ``args``."""
    kept: list[ast.stmt] = []
    for statement in statements:
        if isinstance(statement, ast.Assert) and _names(statement) <= {"args"}:
            kept.append(statement)
        elif isinstance(statement, ast.If) and _names(statement.test) <= {"args"}:
            body, orelse = _args_only(statement.body), _args_only(statement.orelse)
            if body or orelse:
                kept.append(ast.If(statement.test, body or [ast.Pass()], orelse))
    return kept


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    return (
        isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _as_dict(value: Any) -> Any:
    if isinstance(value, SimpleNamespace):
        return {key: _as_dict(item) for key, item in vars(value).items()}
    if isinstance(value, tuple):
        return [_as_dict(item) for item in value]
    if isinstance(value, list):
        return [_as_dict(item) for item in value]
    return value


class _Accepted(Exception):
    """Raised by the stand-in ``train`` to stop at the point where training would start."""

    def __init__(self, args: Any) -> None:
        super().__init__("accepted")
        self.parsed = args


class OpenRLHFParser:
    """OpenRLHF's ``train_ppo_ray`` parser and checks, compiled once, run per argv.

    ``source`` defaults to the installed OpenRLHF's file (:func:`entry_source`). Checks are
    serialised by a lock (they set ``sys.argv`` and capture ``stdout``/``stderr``).
    """

    def __init__(self, source: str | Path | None = None) -> None:
        self.source = Path(source) if source is not None else entry_source()
        tree = ast.parse(self.source.read_text(encoding="utf-8"), filename=str(self.source))
        mains = [node for node in tree.body if _is_main_guard(node)]
        if len(mains) != 1:
            raise ValueError(f"{self.source}: expected one `if __name__ == '__main__':` block")
        main_body = mains[0].body
        trains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "train"]
        if len(trains) != 1:
            raise ValueError(f"{self.source}: expected one top-level `def train(args)`")
        checks = _args_only(trains[0].body) or [ast.Pass()]
        used = set().union(*(_names(node) for node in main_body))
        imports = [
            node
            for node in tree.body
            if isinstance(node, ast.Import | ast.ImportFrom)
            and {(alias.asname or alias.name).split(".")[0] for alias in node.names} & used
        ]
        self._main = compile(
            ast.fix_missing_locations(ast.Module(body=imports + main_body, type_ignores=[])),
            str(self.source),
            "exec",
        )
        launch = copy.copy(trains[0])  # same signature, only the args-reading asserts
        launch.name, launch.body, launch.decorator_list = "launch_checks", checks, []
        self._checks = compile(
            ast.fix_missing_locations(ast.Module(body=[launch], type_ignores=[])),
            str(self.source),
            "exec",
        )

    def _stand_in_train(self) -> Any:
        namespace: dict[str, Any] = {}
        exec(self._checks, namespace)
        launch_checks = namespace["launch_checks"]

        def train(args: Any) -> None:
            launch_checks(args)
            raise _Accepted(args)

        return train

    def argument_parser(self) -> argparse.ArgumentParser:
        """OpenRLHF's own :class:`argparse.ArgumentParser`, as its ``__main__`` block builds it
        (run up to ``parse_args``, which ``--help`` ends); the kit's table of its flags
        (:data:`~videorl_kit.adapters.openrlhf.flags.OPENRLHF_FLAGS`) is tested against it."""
        namespace: dict[str, Any] = {"__name__": "__main__", "train": self._stand_in_train()}
        with _ARGV_LOCK:
            saved = sys.argv
            sys.argv = [self.source.name, "--help"]
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(self._main, namespace)
            except SystemExit:
                pass
            finally:
                sys.argv = saved
        parser = namespace.get("parser")
        if not isinstance(parser, argparse.ArgumentParser):
            raise ValueError(f"{self.source}: its __main__ block builds no `parser`")
        return parser

    def check(self, argv: Sequence[str]) -> ParserVerdict:
        """Parse and check ``argv`` (without the program name) the way OpenRLHF would."""
        argv = tuple(str(a) for a in argv)
        namespace: dict[str, Any] = {"__name__": "__main__", "train": self._stand_in_train()}
        out, err = io.StringIO(), io.StringIO()
        kind, error, args = "exception", None, None
        with _ARGV_LOCK:
            saved = sys.argv
            sys.argv = [self.source.name, *argv]
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    exec(self._main, namespace)
                error = "the checks ended without reaching train()"
            except _Accepted as accepted:
                kind, args = "ok", _as_dict(accepted.parsed)
            except SystemExit:
                kind = "usage"
                lines = [ln for ln in err.getvalue().splitlines() if ": error: " in ln]
                error = lines[-1].split(": error: ", 1)[1] if lines else err.getvalue().strip()
            except AssertionError as exc:
                kind, error = "assertion", str(exc) or "assertion failed"
            except Exception as exc:  # the checks crash on some combinations
                error = f"{type(exc).__name__}: {exc}"
            finally:
                sys.argv = saved
        warnings = tuple(line for line in out.getvalue().splitlines() if line.strip())
        return ParserVerdict(argv, kind, error, warnings, args)
