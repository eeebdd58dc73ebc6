"""The one lazy-loading mechanism of the kit's packages: names load from submodules on first use.

A package lists its public names and the module each comes from, and sets::

    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
    __all__ = sorted(_EXPORTS)

so ``import videorl_kit`` (or ``videorl_kit.store``) stays cheap: nothing heavy (Lance,
torch, pyarrow, pydantic models) is imported until a name is used.

Example:
    >>> exports = {"ProblemType": "videorl_kit.core.problem_types"}
    >>> getattr_, dir_ = lazy_exports("videorl_kit", exports)
    >>> getattr_("ProblemType").OCR.value
    'ocr'
    >>> getattr_("nothing")
    Traceback (most recent call last):
    ...
    AttributeError: module 'videorl_kit' has no attribute 'nothing'
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose names come from ``exports[name]`` modules.

    A loaded name is stored on the package, so later lookups are plain attribute reads.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
