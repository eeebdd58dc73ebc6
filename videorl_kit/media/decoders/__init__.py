"""The video decoders, found by name: one module of this package per decoder.

A decoder is a module of this package whose name is the decoder's name (``pyav.py`` is
``"pyav"``). It defines two functions, which make it a :class:`VideoDecoder`:

* ``version() -> str``: the library, its codec library and ``SAMPLER_VERSION``; it is part of
  every cache key, so frames from different decoders (or versions) never share a row. It
  raises :class:`~videorl_kit.media.errors.DecoderUnavailableError` when the library is
  missing or cannot load.
* ``decode(path, params, options) -> DecodedVideo``: sample and resize the frames of
  ``path`` under ``params`` (a :class:`~videorl_kit.core.budget.VideoBudget`), with
  the :class:`DecodeOptions` that apply to it; bad input raises a
  :class:`~videorl_kit.media.errors.MediaError` subclass naming the file.

Nothing is imported until a decoder is asked for by name (:func:`get_decoder`), and a
decoder imports its library only inside those functions, so a missing optional package
(decord, torchcodec) costs nothing until it is chosen, and then is one clear line
(:func:`unavailable`: what failed and how to install it). PyAV (``"pyav"``) is the
default; ``docs/extending.md`` adds a decoder, with a worked example.

Example:
    >>> decoder_names()
    ('pyav', 'decord', 'torchcodec')
    >>> get_decoder("pyav").version().startswith("av ")
    True
    >>> get_decoder("opencv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    videorl_kit.media.errors.DecoderUnavailableError: decoder 'opencv' is unknown; choose ...
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, cast

from videorl_kit.media.errors import DecoderUnavailableError

if TYPE_CHECKING:
    from videorl_kit.core.budget import VideoBudget
    from videorl_kit.media.decoded import DecodedVideo

__all__ = [
    "DEFAULT_DECODER",
    "DecodeOptions",
    "VideoDecoder",
    "decoder_names",
    "get_decoder",
    "unavailable",
]

DEFAULT_DECODER = "pyav"


@dataclass(frozen=True)
class DecodeOptions:
    """How to decode, beyond the budget. A decoder uses the options that apply to it.

    ``threads`` is the decoder's thread count (0: the library decides). The others concern
    PyAV only: ``thread_type`` (``"SLICE"``, ``"FRAME"``, ``"AUTO"``; None: FFmpeg's
    choice, same frames either way), ``allow_truncated`` (sample the readable frames of a
    cut-short file instead of failing), ``seek`` (seek to keyframes instead of decoding
    sequentially; same frames) and ``skip_nonreference`` (skip unused non-reference
    pictures; same frames, faster).

    Example:
        >>> DecodeOptions(threads=0).seek
        True
    """

    threads: int = 1
    thread_type: Literal["SLICE", "FRAME", "AUTO"] | None = None
    allow_truncated: bool = False
    seek: bool = True
    skip_nonreference: bool = True


class VideoDecoder(Protocol):
    """What a decoder module provides (see the module notes)."""

    def version(self) -> str:
        """The version string recorded with its frames (part of the cache key)."""
        ...

    def decode(self, path: Path, params: VideoBudget, options: DecodeOptions) -> DecodedVideo:
        """Sample and resize ``path``'s frames under ``params``."""
        ...


def decoder_names() -> tuple[str, ...]:
    """Every decoder of this package: the default first, then the others by name."""
    found = {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}
    return (DEFAULT_DECODER, *sorted(found - {DEFAULT_DECODER}))


def get_decoder(name: str) -> VideoDecoder:
    """The decoder called ``name``, imported on first use.

    Raises :class:`DecoderUnavailableError` for a name that is not a decoder.
    """
    names = decoder_names()
    if name not in names:
        raise DecoderUnavailableError(
            f"decoder {name!r} is unknown; choose one of {', '.join(names)}"
        )
    module = importlib.import_module(f"{__name__}.{name}")
    for attribute in ("version", "decode"):
        if not callable(getattr(module, attribute, None)):
            raise DecoderUnavailableError(
                f"decoder {name!r} ({module.__file__}) does not define {attribute}()"
            )
    return cast("VideoDecoder", module)


def unavailable(name: str, exc: BaseException, install: str) -> DecoderUnavailableError:
    """The error a decoder raises when its library cannot be imported or loaded.

    Example:
        >>> print(unavailable("decord", ImportError("No module named 'decord'"),
        ...                   "pip install 'videorl-kit[video]'"))
        decoder 'decord' is unavailable (ImportError: No module named 'decord'); install it
        with pip install 'videorl-kit[video]'
    """
    reason = f"{type(exc).__name__}: {str(exc).strip() or repr(exc)}".splitlines()[0]
    return DecoderUnavailableError(
        f"decoder {name!r} is unavailable ({reason}); install it with {install}"
    )
