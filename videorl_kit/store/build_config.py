"""The user options of a cache build: :class:`BuildConfig`.

One frozen dataclass holds every option of ``build_cache`` (the ``build-cache`` flags), each
documented below, checked when the config is made: every problem is reported at once, in
one :class:`~videorl_kit.core.errors.UserError` line that names the flag. Importing this module
is cheap (no Lance, no decoders), so the command line builds its config before any work.

Example:
    >>> config = BuildConfig(workers=2, item_timeout_s=60)
    >>> config.n_workers, config.item_limit_s, config.engine
    (2, 60.0, 'local')
    >>> BuildConfig(workers=0, engine="spark")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    videorl_kit.core.errors.UserError: --workers must be >= 1, not 0; --engine must be ...
"""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from videorl_kit.core.errors import UserError
from videorl_kit.media.decoders import DEFAULT_DECODER, decoder_names
from videorl_kit.store.defaults import (
    DEFAULT_BATCH_BYTES,
    DEFAULT_BATCH_ITEMS,
    DEFAULT_BATCH_SECONDS,
    DEFAULT_ITEM_TIMEOUT_S,
    DEFAULT_MP_CONTEXT,
)

__all__ = ["ENGINES", "BuildConfig"]

ENGINES = ("local", "ray")


@dataclass(frozen=True)
class BuildConfig:
    """Options of one cache build. Every field has a default; ``build-cache`` sets them.

    Args:
        workers: decoding processes (``--workers``; None: the CPU count, see
            :attr:`n_workers`).
        engine: ``"local"`` (a pool of supervised worker processes) or ``"ray"``
            (``--engine``: Ray Data on a local Ray instance started for the build when none
            runs; Ray workers decode and write the frames rows). If the Ray pipeline fails,
            the rest is built locally and ``BuildSummary.engine_fallback`` says why.
        decoder: the video decoder (``--decoder``), a name of
            :func:`~videorl_kit.media.decoders.decoder_names`: ``"pyav"``, the default,
            seeks and skips frames it does not need; ``"decord"`` and ``"torchcodec"`` read
            frames by index as qwen-vl-utils does with them. It is part of the cache key:
            rows from another decoder are not reused.
        retry_failed: decode again the items recorded in ``failures``
            (``--retry-failed``; their ``attempts`` grows).
        rehash: hash every file again even when its size and mtime match a stored row
            (``--rehash``; by default a stored content hash is reused while both are
            unchanged).
        item_timeout_s: wall-clock limit in seconds for decoding one media item
            (``--item-timeout``; None or 0: none). A decoder that hangs past it is killed
            with its worker process, which is replaced; the item fails with
            ``DecodeTimeoutError`` and, like every failure, is retried only with
            ``retry_failed``.
        max_visual_tokens: skip (rule ``over_token_budget``) media items with more visual
            tokens than this (``--max-visual-tokens``).
        max_prompt_tokens: mark samples whose estimated prompt is longer as skipped
            (``--max-prompt-tokens``).
        batch_items: items per commit (``--batch-items``): a crash loses at most one batch.
            The Ray engine commits its frames rows per chunk of this many tasks.
        batch_bytes: bytes of decoded frames that make a batch due for its commit.
        batch_seconds: seconds after which a non-empty batch is committed.
        mp_context: start method of the local worker processes (``"forkserver"`` or
            ``"spawn"``; never ``"fork"``: decoders and Lance start threads).
    """

    workers: int | None = None
    engine: Literal["local", "ray"] = "local"
    decoder: str = DEFAULT_DECODER
    retry_failed: bool = False
    rehash: bool = False
    item_timeout_s: float | None = DEFAULT_ITEM_TIMEOUT_S
    max_visual_tokens: int | None = None
    max_prompt_tokens: int | None = None
    batch_items: int = DEFAULT_BATCH_ITEMS
    batch_bytes: int = DEFAULT_BATCH_BYTES
    batch_seconds: float = DEFAULT_BATCH_SECONDS
    mp_context: str = DEFAULT_MP_CONTEXT

    def __post_init__(self) -> None:
        problems = [
            *_at_least("--workers", self.workers, 1),
            *_at_least("--max-visual-tokens", self.max_visual_tokens, 1),
            *_at_least("--max-prompt-tokens", self.max_prompt_tokens, 1),
            *_at_least("--batch-items", self.batch_items, 1),
            *_at_least("batch_bytes", self.batch_bytes, 1),
        ]
        if self.engine not in ENGINES:
            problems.append(f"--engine must be 'local' or 'ray', not {self.engine!r}")
        names = decoder_names()
        if self.decoder not in names:
            problems.append(
                f"--decoder {self.decoder!r} is unknown; choose one of {', '.join(names)}"
            )
        if self.item_timeout_s is not None and self.item_timeout_s < 0:
            problems.append(
                f"item timeout must be >= 0 seconds (0: no limit), not {self.item_timeout_s}"
            )
        if self.batch_seconds <= 0:
            problems.append(f"batch_seconds must be > 0, not {self.batch_seconds}")
        if self.mp_context == "fork":
            problems.append(
                "mp_context 'fork' is unsafe with decoder and Lance threads; use forkserver "
                "or spawn"
            )
        elif self.mp_context not in multiprocessing.get_all_start_methods():
            problems.append(f"mp_context {self.mp_context!r} is not a start method here")
        if problems:
            raise UserError("; ".join(problems))

    @classmethod
    def with_options(cls, config: BuildConfig | None, options: dict[str, Any]) -> BuildConfig:
        """``config`` (default: all defaults) with ``options`` (field names) replaced.

        Example:
            >>> BuildConfig.with_options(None, {"workers": 3}).workers
            3
            >>> BuildConfig.with_options(None, {"worker": 3})  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            videorl_kit.core.errors.UserError: unknown build option(s) 'worker'; the options are ...
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise UserError(
                f"unknown build option(s) {', '.join(map(repr, unknown))}; the options are "
                f"{', '.join(sorted(known))}"
            )
        return replace(config or cls(), **options)

    @property
    def n_workers(self) -> int:
        """The worker count the build uses: ``workers``, or the CPU count."""
        return self.workers or os.cpu_count() or 1

    @property
    def item_limit_s(self) -> float | None:
        """The per-item time limit in seconds, or None when there is none."""
        return float(self.item_timeout_s) if self.item_timeout_s else None


def _at_least(flag: str, value: int | None, lowest: int) -> list[str]:
    return [] if value is None or value >= lowest else [f"{flag} must be >= {lowest}, not {value}"]
