"""Versioned registry of verifiers: ``(name, version) -> VerifierInfo``.

What a spec may name: each verifier's name, version, the problem types it scores and its
params model. Spec validation reads it here, below the reward code: the implementations in
:mod:`videorl_kit.rewards` register themselves with :func:`register_verifier` when their
module is imported. This module names no verifier: a registration module
(``videorl_kit.rewards.registry`` for the kit's own, found through the entry-point group
``videorl_kit.problem_types``) tells where each one lives with
:func:`register_verifier_location`, and that module is imported the first time one of its
names is asked for (so a module that fails to import breaks only its own verifier); retired
versions are declared with :func:`register_retired_verifier`. Third-party verifiers also
load through the entry-point group ``videorl_kit.verifiers``; an entry point's *name* is the
verifier name and its *value* points at the decorated class (``pkg.module:MyVerifier``) or at
a module that registers on import.

Example:
    >>> from videorl_kit.core.verifiers import get_verifier, default_verifier_name
    >>> default_verifier_name("numerical")
    'numeric'
    >>> info = get_verifier("numeric", version=2)
    >>> info.name, info.version
    ('numeric', 2)
    >>> info.create({"abs_tol": 0.5}).score("3.4", "3").accuracy
    1.0
    >>> try:
    ...     get_verifier("numric")
    ... except UnknownVerifierError as exc:
    ...     print(str(exc)[:56])
    unknown verifier 'numric'; did you mean 'numeric'? avail
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.metadata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.core.problem_types import (
    REGISTRY_LOCK,
    ProblemType,
    canonical_problem_type,
    ensure_registrations,
    problem_type_info,
)
from videorl_kit.core.strict_model import StrictModel

ENTRY_POINT_GROUP = "videorl_kit.verifiers"

#: Versions that were replaced, with why (:func:`register_retired_verifier`): asking for one
#: is an error that says so, and registering one again is refused.
RETIRED_VERIFIERS: dict[tuple[str, int], str] = {}


class NoParams(StrictModel):
    """Params model of a verifier without parameters (any key is an error).

    Example:
        >>> NoParams().model_dump()
        {}
    """


class UnknownVerifierError(VideoRLKitError, LookupError):
    """No verifier with that name/version; the message suggests close names."""

    def __str__(self) -> str:  # LookupError would repr() a single argument
        return str(self.args[0]) if self.args else ""


class VerifierLoadError(UnknownVerifierError):
    """The verifier is known but its module (or entry point) failed to import."""


class VerifierParamsError(VideoRLKitError, ValueError):
    """Params given for a verifier do not match its params model."""


@dataclass(frozen=True, slots=True)
class VerifierInfo:
    """Registry entry of one verifier version.

    ``factory(params_model_instance)`` builds a :class:`~videorl_kit.rewards.base.Verifier`;
    use :meth:`create` to validate raw params and build in one step. ``raw_text``: the router
    hands the verifier the answer, ground truth and options as written, without folding
    compatibility forms (code, where a full-width string literal is part of the program).

    Example:
        >>> info = get_verifier("choice")
        >>> sorted(info.problem_types)
        [<ProblemType.MULTIPLE_CHOICE: 'multiple_choice'>]
        >>> info.create().score("B", "B").accuracy
        1.0
    """

    name: str
    version: int
    problem_types: frozenset[ProblemType]
    params_model: type[BaseModel]
    description: str
    factory: Callable[[Any], Any]
    raw_text: bool = False

    def validate_params(self, params: Mapping[str, Any] | BaseModel | None = None) -> BaseModel:
        """Validate ``params`` against :attr:`params_model`; raises :class:`VerifierParamsError`.

        Example:
            >>> get_verifier("numeric").validate_params({"abs_tol": 1}).abs_tol
            1.0
        """
        if isinstance(params, self.params_model):
            return params
        if isinstance(params, BaseModel):
            params = params.model_dump()
        try:
            return self.params_model.model_validate(dict(params or {}))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(params)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise VerifierParamsError(
                f"invalid params for verifier {self.name!r} v{self.version}: {problems}"
            ) from None

    def create(self, params: Mapping[str, Any] | BaseModel | None = None) -> Any:
        """Validate ``params`` and build a verifier instance."""
        return self.factory(self.validate_params(params))


_lock = REGISTRY_LOCK
_registry: dict[tuple[str, int], VerifierInfo] = {}
_locations: dict[tuple[str, int], str] = {}
_load_errors: dict[tuple[str, int], str] = {}
_loaded_entry_points: set[tuple[str, str]] = set()

_C = TypeVar("_C")


def _first_doc_line(obj: object) -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0].strip() if doc else ""


def register_verifier(
    *,
    name: str,
    version: int,
    problem_types: Iterable[ProblemType | str],
    params_model: type[BaseModel] = NoParams,
    description: str | None = None,
    raw_text: bool = False,
) -> Callable[[_C], _C]:
    """Class decorator registering a verifier under ``(name, version)``.

    The class's ``__init__`` takes one instance of ``params_model``. The description defaults to
    the first line of the class docstring. The router folds Unicode compatibility forms in the
    answer, ground truth and options before ``score`` sees them
    (:func:`~videorl_kit.rewards.text.fold_compat`), unless ``raw_text`` is true. Registering
    a different class under a taken ``(name, version)`` raises ``ValueError``; re-registering
    the same class (re-import) is fine.

    Example:
        >>> from videorl_kit.rewards.base import VerifyOutcome
        >>> @register_verifier(name="doc_always_one", version=1, problem_types=["open_ended"])
        ... class AlwaysOne:
        ...     '''Scores every answer 1 (documentation example).'''
        ...     def __init__(self, params: NoParams) -> None:
        ...         self.params = params
        ...     def score(self, answer_text, gold, options=None):
        ...         return VerifyOutcome.ok(1.0)
        >>> get_verifier("doc_always_one").description
        'Scores every answer 1 (documentation example).'
    """
    if not name or not isinstance(name, str):
        raise ValueError("verifier name must be a non-empty string")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"verifier {name!r}: version must be an integer >= 1, got {version!r}")
    types = frozenset(canonical_problem_type(str(t)) for t in problem_types)
    if not (isinstance(params_model, type) and issubclass(params_model, BaseModel)):
        raise ValueError(f"verifier {name!r}: params_model must be a pydantic BaseModel class")

    def decorate(cls: _C) -> _C:
        info = VerifierInfo(
            name=name,
            version=version,
            problem_types=types,
            params_model=params_model,
            description=description or _first_doc_line(cls),
            factory=cls,  # type: ignore[arg-type]
            raw_text=raw_text,
        )
        _add(info)
        cls.__verifier_info__ = info  # type: ignore[attr-defined]
        return cls

    return decorate


def _same_origin(a: object, b: object) -> bool:
    return (getattr(a, "__module__", None), getattr(a, "__qualname__", None)) == (
        getattr(b, "__module__", None),
        getattr(b, "__qualname__", None),
    )


def register_verifier_location(name: str, version: int, target: str) -> None:
    """Say where verifier ``name`` v``version`` lives: ``target`` is the module (or
    ``module:Class``) that registers it, imported the first time the verifier is asked for.

    Example (``videorl_kit.rewards.registry`` says this; again is a no-op):
        >>> register_verifier_location("numeric", 2, "videorl_kit.rewards.numeric")
    """
    with _lock:
        known = _locations.get((name, version))
        if known is not None and known != target:
            raise ValueError(f"verifier {name!r} v{version} is already located at {known}")
        _locations[(name, version)] = target


def register_retired_verifier(name: str, version: int, why: str) -> None:
    """Declare verifier ``name`` v``version`` retired: asking for it is an error giving
    ``why``, and no class may register under it again.

    Example:
        >>> RETIRED_VERIFIERS[("code_exec", 1)]
        'withdrawn: its verdicts could be forged (issue 11)'
    """
    with _lock:
        RETIRED_VERIFIERS[(name, version)] = why


def _add(info: VerifierInfo) -> None:
    key = (info.name, info.version)
    ensure_registrations()
    if key in RETIRED_VERIFIERS:
        raise ValueError(
            f"verifier {info.name!r} v{info.version} is a retired built-in version "
            f"({RETIRED_VERIFIERS[key]}): register a new name or version"
        )
    with _lock:
        existing = _registry.get(key)
        if existing is not None and not _same_origin(existing.factory, info.factory):
            raise ValueError(
                f"verifier {info.name!r} v{info.version} is already registered by "
                f"{existing.factory.__module__}.{getattr(existing.factory, '__qualname__', '?')}"
            )
        _registry[key] = info
        _load_errors.pop(key, None)


def _import_target(target: str) -> object:
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attr) if attr else module


def _ensure_located(name: str) -> None:
    """Import the modules located for verifiers called ``name`` (once; errors remembered).

    Called without the registry's lock, which is taken only to record what happened: a
    module registers under that lock, and a thread importing it meanwhile holds the import
    system's lock of the module (two locks taken in two orders would deadlock).
    """
    for (bname, bversion), target in list(_locations.items()):
        key = (bname, bversion)
        if bname != name or key in _registry or key in _load_errors:
            continue
        try:
            _register_loaded(_import_target(target))
        except Exception as exc:  # a broken module must only break its own verifier
            with _lock:
                _load_errors[key] = f"{type(exc).__name__}: {exc}"
            continue
        if key not in _registry:
            with _lock:
                _load_errors[key] = f"{target} did not register verifier {bname!r} v{bversion}"


def _register_loaded(obj: object) -> None:
    """Register what an entry point or placeholder loaded (module, class or VerifierInfo)."""
    if isinstance(obj, VerifierInfo):
        _add(obj)
        return
    info = getattr(obj, "__verifier_info__", None)
    if isinstance(info, VerifierInfo):
        _add(info)
        return
    if not hasattr(obj, "__path__") and not hasattr(obj, "__file__"):  # not a module
        raise TypeError(
            f"{obj!r} is neither a module nor a class decorated with @register_verifier"
        )


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def _ensure_entry_points(name: str | None) -> None:
    """Load entry points named ``name`` (all of them when ``name`` is None), without the
    registry's lock (see :func:`_ensure_located`)."""
    for ep in _entry_points():
        if name is not None and ep.name != name:
            continue
        ident = (ep.name, ep.value)
        if ident in _loaded_entry_points:
            continue
        try:
            _register_loaded(ep.load())
        except Exception as exc:
            with _lock:
                _load_errors[(ep.name, 0)] = f"entry point {ep.name} = {ep.value}: {exc}"
        with _lock:
            _loaded_entry_points.add(ident)


def _known_names() -> set[str]:
    names = {n for n, _ in _registry} | {n for n, _ in _locations}
    with contextlib.suppress(Exception):  # broken metadata must not hide built-in names
        names |= {ep.name for ep in _entry_points()}
    return names


def get_verifier(name: str, version: int | None = None) -> VerifierInfo:
    """Return the registered :class:`VerifierInfo`; ``version=None`` means the highest version.

    Raises :class:`UnknownVerifierError` (with "did you mean ...") for an unknown name or
    version, :class:`VerifierLoadError` when the verifier's module fails to import.

    Example:
        >>> sorted(get_verifier("mra").problem_types)
        [<ProblemType.NUMERICAL: 'numerical'>, <ProblemType.REGRESSION: 'regression'>]
    """
    ensure_registrations()
    _ensure_located(name)
    if not any(n == name for n, _ in list(_registry)):
        _ensure_entry_points(name)
    with _lock:
        versions = sorted(v for n, v in _registry if n == name)
        if version is None and versions:
            return _registry[(name, versions[-1])]
        if version is not None and (name, version) in _registry:
            return _registry[(name, version)]
        load_error = _load_errors.get((name, version or 1)) or _load_errors.get((name, 0))
        if load_error:
            raise VerifierLoadError(f"verifier {name!r} failed to load: {load_error}")
        if versions:
            retired = RETIRED_VERIFIERS.get((name, version or 0))
            why = (
                f" (retired: {retired}; see the changelog in docs/verifiers.md)" if retired else ""
            )
            raise UnknownVerifierError(
                f"verifier {name!r} has no version {version}{why}; "
                f"available versions: {', '.join(map(str, versions))}"
            )
        known = sorted(_known_names())
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
        raise UnknownVerifierError(
            f"unknown verifier {name!r}; {hint}available: {', '.join(known)}"
        )


def default_verifier_name(problem_type: ProblemType | str) -> str:
    """Name of the verifier a problem type uses by default (aliases accepted).

    Example:
        >>> default_verifier_name("multiple choice")
        'choice'
    """
    return problem_type_info(str(problem_type)).default_verifier


def verifier_infos() -> list[VerifierInfo]:
    """Every loadable verifier (built-ins and entry points), sorted by name and version.

    Verifiers whose module fails to import are left out; :func:`load_errors` says why.

    Example:
        >>> [(i.name, i.version) for i in verifier_infos() if i.name == "mra"]
        [('mra', 2)]
    """
    ensure_registrations()
    for bname, _ in list(_locations):
        _ensure_located(bname)
    _ensure_entry_points(None)
    with _lock:
        return [_registry[k] for k in sorted(_registry)]


def available_verifiers() -> dict[str, list[int]]:
    """Loadable verifier names mapped to their versions (``name in available_verifiers()``).

    Example:
        >>> available_verifiers()["numeric"]
        [2]
        >>> "numeric" in available_verifiers()
        True
    """
    names: dict[str, list[int]] = {}
    for info in verifier_infos():
        names.setdefault(info.name, []).append(info.version)
    return names


def load_errors() -> dict[str, str]:
    """Why verifiers failed to load, as ``{"name vN": message}`` (``v0``: an entry point)."""
    with _lock:
        return {f"{n} v{v}": msg for (n, v), msg in sorted(_load_errors.items())}
