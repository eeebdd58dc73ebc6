"""Problem types: the registry of what a task asks for (the mechanism; no type is defined here).

A problem type is registered with :func:`register_problem_type`: its canonical name
(snake_case), the spellings other projects use for it (aliases) and the name of the verifier
that scores it by default. This module registers none: the kit's own types are registered by
``videorl_kit.rewards.registry``, which the kit finds as it finds a third-party package's
registration module, through the entry-point group ``videorl_kit.problem_types``
(:data:`ENTRY_POINT_GROUP`; every module of the group is imported the first time a type is
looked up, so a registration module imports nothing heavy). Importing ``videorl_kit.rewards``
registers the kit's types too, for a copy of the kit without its installed metadata (the kit
inside a run bundle, on a Ray node). The spec models, the verifier registry and the reward
router read this registry, so a type name means the same thing everywhere; adding a type
edits nothing here (``docs/extending.md``).

:class:`ProblemType` reads like the enum it once was: ``ProblemType.NUMERICAL``,
``ProblemType("numerical")``, ``list(ProblemType)``, ``.value`` and ``.name``. Each type is one
interned ``str``: ``ProblemType.NUMERICAL == "numerical"``, and ``is`` compares types.

Example:
    >>> canonical_problem_type("multiple choice").value
    'multiple_choice'
    >>> canonical_problem_type("Spatial-Temporal Grounding").value
    'spatiotemporal_grounding'
    >>> ProblemType.OCR is ProblemType("ocr") is canonical_problem_type("OCR")
    True
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from videorl_kit.core.safe_text import quoted
from videorl_kit.core.suggest import close_matches, did_you_mean

ENTRY_POINT_GROUP = "videorl_kit.problem_types"
"""Entry-point group of registration modules: each entry's value is a module that registers
problem types (and where their verifiers live) when imported."""

FROM_ROW = "from_row"
"""A spec's ``problem_type`` when each data row's own problem type picks its verifier."""

REGISTRY_LOCK = threading.RLock()
"""One lock for the problem-type and verifier registries (a registration module fills both)."""

_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")


@dataclass(frozen=True)
class ProblemTypeInfo:
    """A registered problem type: its default verifier, aliases and where it was registered."""

    problem_type: ProblemType
    default_verifier: str
    aliases: tuple[str, ...]
    module: str


class _ProblemTypeMeta(type):
    """Enum-like access to the registry: iteration, ``len``, ``in``, attributes, calls."""

    def __iter__(cls) -> Iterator[ProblemType]:
        return iter(problem_types())

    def __len__(cls) -> int:
        return len(problem_types())

    def __contains__(cls, value: object) -> bool:
        return isinstance(value, str) and _exact(value) is not None

    def __getattr__(cls, attribute: str) -> ProblemType:
        if attribute.startswith("_") or attribute != attribute.upper():
            raise AttributeError(attribute)
        found = _exact(attribute.lower())
        if found is None:
            raise AttributeError(f"no problem type {attribute.lower()!r} is registered{_hint()}")
        return found

    def __call__(cls, value: object) -> ProblemType:
        found = _exact(str(value)) if isinstance(value, str) else None
        if found is None:
            raise ValueError(f"{value!r} is not a registered problem type{_hint()}")
        return found


class ProblemType(str, metaclass=_ProblemTypeMeta):
    """A registered problem type (see the module doc); instances come from the registry only.

    Example:
        >>> ProblemType.NUMERICAL, ProblemType.NUMERICAL.name, f"{ProblemType.NUMERICAL}"
        (<ProblemType.NUMERICAL: 'numerical'>, 'NUMERICAL', 'numerical')
        >>> ProblemType("numerical") == "numerical", "poetry" in ProblemType
        (True, False)
    """

    __slots__ = ()

    @property
    def value(self) -> str:
        """The canonical name, as a plain ``str``."""
        return str.__str__(self)

    @property
    def name(self) -> str:
        """The attribute name: ``NUMERICAL`` for ``numerical``."""
        return self.value.upper()

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"<ProblemType.{self.name}: {self.value!r}>"

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return _restore, (self.value,)

    def __copy__(self) -> ProblemType:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ProblemType:
        return self

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """Pydantic: a registered type's canonical name in, the name as ``str`` out."""
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            _validate,
            serialization=core_schema.plain_serializer_function_ser_schema(
                str, return_schema=core_schema.str_schema()
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: Any) -> dict[str, Any]:
        return {"type": "string", "enum": [t.value for t in problem_types()]}


_types: dict[str, ProblemType] = {}
_infos: dict[str, ProblemTypeInfo] = {}
_aliases: dict[str, ProblemType] = {}
_loaded_entry_points: set[tuple[str, str]] = set()
_load_errors: dict[str, str] = {}
_scanned = False


def _restore(value: str) -> ProblemType:
    """Unpickle a type: the registered one, else the same name unregistered (a process that
    has not loaded the registration still compares it equal by name)."""
    found = _exact(value)
    return found if found is not None else str.__new__(ProblemType, value)


def _validate(value: Any) -> ProblemType:
    if isinstance(value, str):
        found = _exact(value)
        if found is not None:
            return found
        raise ValueError(f"{value!r} is not a registered problem type{_hint()}")
    raise ValueError(f"a problem type is a name, not {type(value).__name__}")


def _hint() -> str:
    if _types:
        return f" (registered: {', '.join(_types)})"
    return (
        " (no problem type is registered: install videorl-kit so that its entry points are "
        "found, or import videorl_kit.rewards first)"
    )


def load_registrations() -> None:
    """Import every module of :data:`ENTRY_POINT_GROUP` not imported yet (errors are kept
    by :func:`registration_errors`, never raised: one broken plugin breaks only itself).

    Example:
        >>> load_registrations(); "numerical" in ProblemType
        True
    """
    global _scanned
    try:
        entry_points = list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
    except Exception as exc:  # broken metadata must not hide what is registered
        with REGISTRY_LOCK:
            _load_errors["(metadata)"] = f"{type(exc).__name__}: {exc}"
        entry_points = []
    for entry in entry_points:
        ident = (entry.name, entry.value)
        if ident in _loaded_entry_points:
            continue
        # Imported without REGISTRY_LOCK: the module registers under that lock, and a thread
        # importing it meanwhile holds the import system's lock of the module (two locks
        # taken in two orders would deadlock). A second thread here waits on the import.
        try:
            entry.load()
        except Exception as exc:
            message = f"entry point {entry.name} = {entry.value}: {type(exc).__name__}: {exc}"
            with REGISTRY_LOCK:
                _load_errors[entry.name] = message
        with REGISTRY_LOCK:
            _loaded_entry_points.add(ident)
    _scanned = True


def ensure_registrations() -> None:
    """:func:`load_registrations` once per process (later look-ups that miss load again)."""
    if not _scanned:
        load_registrations()


def _exact(name: str) -> ProblemType | None:
    if not _scanned:
        load_registrations()
    return _types.get(name)


def _find(key: str) -> ProblemType | None:
    if not _scanned:
        load_registrations()
    return _aliases.get(key) or _types.get(key.replace("-", "_").replace(" ", "_"))


def register_problem_type(
    name: str, *, default_verifier: str, aliases: Iterable[str] = ()
) -> ProblemType:
    """Register the problem type ``name`` (snake_case) and return it.

    ``default_verifier`` names the verifier a spec gets when it names none (registered with
    :func:`~videorl_kit.core.verifiers.register_verifier` or located with
    :func:`~videorl_kit.core.verifiers.register_verifier_location`); ``aliases`` are other
    spellings (matched ignoring case). Registering the same type again the same way is fine;
    another default verifier, or an alias another type has, raises ``ValueError``.

    Example (``videorl_kit.rewards.registry`` registers ``ocr``; again is a no-op):
        >>> register_problem_type("ocr", default_verifier="wer", aliases=["OCR"])
        <ProblemType.OCR: 'ocr'>
        >>> register_problem_type("ocr", default_verifier="rouge")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: problem type 'ocr' is already registered by ... with default verifier 'wer'
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name == FROM_ROW:
        raise ValueError(f"problem type name {name!r} must be snake_case (and not {FROM_ROW!r})")
    if not isinstance(default_verifier, str) or not default_verifier:
        raise ValueError(f"problem type {name!r}: default_verifier must name a verifier")
    keys = tuple(dict.fromkeys(str(a).strip().lower() for a in aliases))
    with REGISTRY_LOCK:
        existing = _infos.get(name)
        if existing is not None and existing.default_verifier != default_verifier:
            raise ValueError(
                f"problem type {name!r} is already registered by {existing.module} with default "
                f"verifier {existing.default_verifier!r}"
            )
        ptype = _types.get(name) or str.__new__(ProblemType, name)
        for key in keys:
            other = _aliases.get(key) or _types.get(key.replace("-", "_").replace(" ", "_"))
            if other is not None and other != name:
                raise ValueError(f"alias {key!r} of {name!r} already names problem type {other!r}")
        module = existing.module if existing else _caller_module()
        every = tuple(dict.fromkeys((*(existing.aliases if existing else ()), *keys)))
        _types[name] = ptype
        _infos[name] = ProblemTypeInfo(ptype, default_verifier, every, module)
        _aliases.update(dict.fromkeys(keys, ptype))
        return ptype


def _caller_module() -> str:
    frame = sys._getframe(2)
    return str(frame.f_globals.get("__name__", "?"))


def problem_types() -> list[ProblemType]:
    """Every registered problem type, in registration order.

    Example:
        >>> [t.value for t in problem_types()][:3]
        ['multiple_choice', 'numerical', 'regression']
    """
    if not _scanned:
        load_registrations()
    return list(_types.values())


def canonical_problem_type(name: str) -> ProblemType:
    """Return the registered :class:`ProblemType` for ``name`` or one of its aliases.

    Matching ignores case and surrounding whitespace; ``-``, ``_`` and space variants of
    canonical names are accepted. Raises ``ValueError`` naming the valid types.

    Example:
        >>> canonical_problem_type("OCR")
        <ProblemType.OCR: 'ocr'>
    """
    if isinstance(name, ProblemType) and _types.get(name.value) is name:
        return name
    key = str(name).strip().lower()
    found = _find(key)
    if found is None:
        load_registrations()  # a registration installed since the first look-up
        found = _find(key)
    if found is None:
        valid = ", ".join(_types) or "(none registered)"
        raise ValueError(f"unknown problem type {name!r}; valid types: {valid}{_errors_hint()}")
    return found


def _errors_hint() -> str:
    if not _load_errors:
        return "" if _types else _hint()
    return f" (registrations that failed to load: {'; '.join(_load_errors.values())})"


def problem_type_info(name: str) -> ProblemTypeInfo:
    """The registration of a problem type (aliases accepted; ``ValueError`` when unknown).

    Example:
        >>> problem_type_info("multiple choice").default_verifier
        'choice'
    """
    return _infos[canonical_problem_type(name).value]


def problem_type_aliases() -> dict[str, ProblemType]:
    """Every registered alias (lower case) and the type it names.

    Example:
        >>> problem_type_aliases()["llava"]
        <ProblemType.CRITIC: 'critic'>
    """
    if not _scanned:
        load_registrations()
    return dict(_aliases)


def unknown_problem_type_message(given: object, *, from_row: bool = False) -> str:
    """The message for an unknown problem type: what was given, the close names and every
    accepted canonical name (``from_row`` too where a spec's ``problem_type`` may say it).

    Aliases are suggested as well as canonical names; the list names the canonical ones.

    Example:
        >>> print(unknown_problem_type_message("multple choice"))  # doctest: +ELLIPSIS
        unknown problem type 'multple choice'; did you mean 'multiple choice'? (valid: ...)
    """
    names = [t.value for t in problem_types()]
    spellings = {**{name: name for name in names}, **problem_type_aliases()}
    if from_row:
        spellings[FROM_ROW] = FROM_ROW
    kept: dict[str, str] = {}  # one spelling per type, the closest first
    for spelling in close_matches(str(given), spellings, n=len(spellings)):
        kept.setdefault(str(spellings[spelling]), spelling)
    hint = did_you_mean(str(given), list(kept.values())[:3])
    valid = ", ".join(names) + (f", or {FROM_ROW}" if from_row else "")
    return f"unknown problem type {quoted(given)}{hint} (valid: {valid})"


def registration_errors() -> dict[str, str]:
    """Registration modules that failed to import, by entry-point name, with why."""
    with REGISTRY_LOCK:
        return dict(_load_errors)
