"""Which verifier a check is about: a registered name, an import path, a class or an instance.

:func:`resolve_verifier` turns what a user names into a :class:`Subject`: the registry entry
(:class:`~videorl_kit.core.verifiers.VerifierInfo`), validated params and the problem type it
is checked for. A subject builds the reward function the kit would use for it (extraction,
compatibility folding, the verifier, the router's error containment), so every property is
checked on the path a trainer calls. It also knows how another process rebuilds it
(:meth:`Subject.reference`): the checker's child process imports the verifier's module by
its import path and looks the verifier up by name and version.

Example:
    >>> subject = resolve_verifier("numeric@2")
    >>> subject.label, subject.problem_type.value
    ('numeric@2', 'numerical')
    >>> subject.reward_function()("<answer>12</answer>", "12").accuracy
    1.0
    >>> resolve_verifier("mra").problem_type.value  # the type mra is the default verifier of
    'regression'
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from videorl_kit.core.errors import UserError
from videorl_kit.core.problem_types import (
    ProblemType,
    canonical_problem_type,
    problem_type_info,
)
from videorl_kit.core.verifiers import VerifierInfo, get_verifier
from videorl_kit.rewards.router import RewardFunction, reward_function_for

_NAME_AT_VERSION = re.compile(r"^(?P<name>[A-Za-z_][\w.-]*)(?:@(?P<version>\d+))?$")
_IMPORT_PATH = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)$")


class VerifierNotFoundError(UserError, LookupError):
    """What was named is not a verifier the checker can load (the message says why)."""


@dataclass(frozen=True, slots=True)
class Subject:
    """One verifier, with its params and the problem type it is checked for.

    Example:
        >>> s = resolve_verifier("choice")
        >>> s.reference()["verifier"], s.reference()["version"]
        ('choice', 2)
    """

    info: VerifierInfo
    params: BaseModel
    problem_type: ProblemType

    @property
    def label(self) -> str:
        """``name@version``, as the router records it in ``details["verifier"]``."""
        return f"{self.info.name}@{self.info.version}"

    def reward_function(self) -> RewardFunction:
        """A fresh reward function (``answer_tag`` format rule, weights 0.9 / 0.1) for it."""
        return reward_function_for(
            self.problem_type, (self.info.name, self.info.version, self.params)
        )

    def verifier(self) -> Any:
        """A fresh verifier instance (what a trainer pickles to its workers)."""
        return self.info.create(self.params)

    def import_path(self) -> str | None:
        """``module:QualName`` of the verifier's class, or None where another process
        cannot import it (defined in ``__main__`` or inside a function)."""
        factory = self.info.factory
        module = getattr(factory, "__module__", None)
        qualname = getattr(factory, "__qualname__", None)
        if not module or not qualname or module == "__main__" or "<locals>" in qualname:
            return None
        return f"{module}:{qualname}"

    def reference(self) -> dict[str, Any]:
        """What another process needs to rebuild this subject (plain JSON data)."""
        return {
            "verifier": self.info.name,
            "version": self.info.version,
            "import_path": self.import_path(),
            "params": self.params.model_dump(mode="json"),
            "problem_type": self.problem_type.value,
        }


def subject_from_reference(reference: Mapping[str, Any]) -> Subject:
    """Rebuild a :class:`Subject` from :meth:`Subject.reference` (in another process).

    Example:
        >>> subject_from_reference(resolve_verifier("numeric").reference()).label
        'numeric@2'
    """
    path = reference.get("import_path")
    if path:
        _import(path)  # registers the verifier in this process
    info = get_verifier(str(reference["verifier"]), int(reference["version"]))
    return Subject(
        info, info.validate_params(reference.get("params")), ProblemType(reference["problem_type"])
    )


def _import(path: str) -> Any:
    module_name, _, attr = path.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise VerifierNotFoundError(f"{path}: cannot import {module_name!r} ({exc})") from None
    for part in attr.split(".") if attr else []:
        if not hasattr(target, part):
            raise VerifierNotFoundError(f"{path}: module {module_name!r} has no {attr!r}")
        target = getattr(target, part)
    return target


def _info_of(obj: Any, named: str) -> VerifierInfo:
    if isinstance(obj, VerifierInfo):
        return obj
    info = getattr(obj, "__verifier_info__", None)
    if isinstance(info, VerifierInfo):
        return info
    raise VerifierNotFoundError(
        f"{named} is not a verifier: decorate its class with @register_verifier "
        "(videorl_kit.core.verifiers)"
    )


def _lookup(verifier: Any) -> tuple[VerifierInfo, Any]:
    """The registry entry of ``verifier`` and, for an instance, its own params."""
    if isinstance(verifier, str):
        text = verifier.strip()
        if match := _IMPORT_PATH.match(text):
            return _info_of(_import(text), text), None
        if match := _NAME_AT_VERSION.match(text):
            version = match["version"]
            try:
                return get_verifier(match["name"], int(version) if version else None), None
            except LookupError as exc:
                raise VerifierNotFoundError(str(exc)) from None
        raise VerifierNotFoundError(
            f"{verifier!r}: name a registered verifier (numeric, numeric@2) or a class "
            "by its import path (mypkg.verifiers:Ordering)"
        )
    if isinstance(verifier, VerifierInfo | type):
        return _info_of(verifier, repr(verifier)), None
    info = _info_of(type(verifier), f"an instance of {type(verifier).__qualname__}")
    return info, getattr(verifier, "params", None)


def _problem_type(info: VerifierInfo, problem_type: str | ProblemType | None) -> ProblemType:
    handled = sorted(info.problem_types, key=lambda t: t.value)
    if problem_type is not None:
        try:
            ptype = canonical_problem_type(str(problem_type))
        except ValueError as exc:
            raise VerifierNotFoundError(str(exc)) from None
        if ptype not in info.problem_types:
            raise VerifierNotFoundError(
                f"verifier {info.name!r} does not handle problem type {ptype.value!r} "
                f"(it handles: {', '.join(t.value for t in handled)})"
            )
        return ptype
    if len(handled) == 1:
        return handled[0]
    defaults = [t for t in handled if problem_type_info(t).default_verifier == info.name]
    if len(defaults) == 1:
        return defaults[0]
    raise VerifierNotFoundError(
        f"verifier {info.name!r} handles several problem types "
        f"({', '.join(t.value for t in handled)}): give one (--problem-type)"
    )


def resolve_verifier(
    verifier: Any,
    problem_type: str | ProblemType | None = None,
    params: Mapping[str, Any] | BaseModel | None = None,
) -> Subject:
    """The :class:`Subject` for ``verifier``: a registered name (``"numeric"``,
    ``"numeric@2"``), an import path (``"mypkg.verifiers:Ordering"``, a class decorated with
    ``@register_verifier``), such a class, its :class:`VerifierInfo`, or an instance (checked
    with its own ``params`` unless ``params`` is given).

    ``problem_type`` may be left out when the verifier handles one type, or is the default
    verifier of exactly one of its types. Raises :class:`VerifierNotFoundError` (a
    ``UserError``) with one line that says what is wrong.

    Example:
        >>> resolve_verifier("numeric", params={"abs_tol": 0.5}).params.abs_tol
        0.5
        >>> resolve_verifier("videorl_kit.rewards.boolean:BooleanVerifier").label
        'boolean@2'
        >>> resolve_verifier("numric")
        Traceback (most recent call last):
        ...
        videorl_kit.testing.subject.VerifierNotFoundError: unknown verifier 'numric'; ...
    """
    info, own_params = _lookup(verifier)
    chosen = params if params is not None else own_params
    try:
        validated = info.validate_params(chosen)
    except ValueError as exc:
        raise VerifierNotFoundError(str(exc)) from None
    return Subject(info, validated, _problem_type(info, problem_type))
