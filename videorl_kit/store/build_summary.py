"""What a cache build reports: :class:`BuildProgress` as it runs, :class:`BuildSummary` after.

Example:
    >>> summary = BuildSummary(n_input=2, n_ok=1, n_failed=1)
    >>> summary.invariant_holds, summary.exit_code(), summary.exit_code(fail_on_error=True)
    (True, 0, 3)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from videorl_kit.store.defaults import EXIT_BUILD_FAILED
from videorl_kit.store.samples import SampleLedger
from videorl_kit.store.schema import CACHE_SCHEMA_VERSION

__all__ = ["BuildProgress", "BuildSummary", "ProgressFn"]


@dataclass(frozen=True)
class BuildProgress:
    """A progress report: ``done`` of ``total`` inputs settled so far, in ``phase``."""

    phase: str  # "hashing" | "decoding" | "samples" | "done"
    done: int
    total: int
    n_ok: int
    n_failed: int
    n_skipped: int
    n_already_cached: int
    current: str | None = None


ProgressFn = Callable[[BuildProgress], None]


@dataclass
class BuildSummary:
    """What a build did. ``n_input == n_ok + n_failed + n_skipped`` always holds.

    ``n_already_cached`` counts the ok inputs that were already in the store before this
    build (a subset of ``n_ok``); ``n_decoded`` the distinct items decoded now.
    ``failed_files`` names each file an input failed on, with why (the error class and
    message its ``failures`` row holds). With
    ``engine="ray"``, ``engine_fallback`` says why the local engine finished the build
    (None when Ray did all of it) and ``engine_stats`` what Ray did.

    Example:
        >>> s = BuildSummary(n_input=3, n_ok=1, n_failed=1, n_skipped=1)
        >>> s.invariant_holds, list(s.as_dict())[:6]
        (True, ['n_input', 'n_ok', 'n_failed', 'n_skipped', 'n_already_cached', 'seconds'])
    """

    n_input: int = 0
    n_ok: int = 0
    n_failed: int = 0
    n_skipped: int = 0
    n_already_cached: int = 0
    seconds: float = 0.0
    n_media_items: int = 0
    n_skipped_rows: int = 0
    n_decoded: int = 0
    n_new_failures: int = 0
    n_known_failures: int = 0
    n_retried: int = 0
    decode_warnings: dict[str, list[str]] = field(default_factory=dict)  # source -> warnings
    # source -> why it looks cut short: cached from the frames before the cut
    truncated: dict[str, str] = field(default_factory=dict)
    skipped_by_rule: dict[str, int] = field(default_factory=dict)
    failed_by_class: dict[str, int] = field(default_factory=dict)
    # source -> why it failed ("ErrorClass: message"), every failed input's file once
    failed_files: dict[str, str] = field(default_factory=dict)
    samples: SampleLedger = field(default_factory=SampleLedger)
    store: str = ""
    engine: str = "local"
    decoder: str = "pyav"
    workers: int = 1
    item_timeout_s: float | None = None
    n_commits: int = 0
    bytes_committed: int = 0
    frames_version: int = 0
    cache_schema_version: int = CACHE_SCHEMA_VERSION
    engine_fallback: str | None = None  # engine="ray": why (some) items were decoded locally
    engine_stats: dict[str, Any] = field(default_factory=dict)  # engine="ray": RayBuildStats

    @property
    def invariant_holds(self) -> bool:
        """``n_input == n_ok + n_failed + n_skipped``."""
        return self.n_input == self.n_ok + self.n_failed + self.n_skipped

    def exit_code(self, *, fail_on_error: bool = False) -> int:
        """0, or :data:`EXIT_BUILD_FAILED` when no input ended ok (every one failed or was
        skipped) or, with ``fail_on_error``, when any input failed to decode.

        A build with no inputs (text-only data) is a success.

        Example:
            >>> BuildSummary(n_input=2, n_ok=0, n_failed=2).exit_code()
            3
            >>> BuildSummary(n_input=2, n_ok=1, n_failed=1).exit_code()
            0
            >>> BuildSummary(n_input=2, n_ok=1, n_failed=1).exit_code(fail_on_error=True)
            3
        """
        nothing_usable = self.n_input > 0 and self.n_ok == 0
        return EXIT_BUILD_FAILED if nothing_usable or (fail_on_error and self.n_failed) else 0

    def as_dict(self) -> dict[str, Any]:
        """JSON form; the first six keys are the fixed contract of ``build-cache --json``."""
        return {
            "n_input": self.n_input,
            "n_ok": self.n_ok,
            "n_failed": self.n_failed,
            "n_skipped": self.n_skipped,
            "n_already_cached": self.n_already_cached,
            "seconds": round(self.seconds, 3),
            "invariant": "n_input == n_ok + n_failed + n_skipped",
            "invariant_holds": self.invariant_holds,
            "n_media_items": self.n_media_items,
            "n_skipped_rows": self.n_skipped_rows,
            "n_decoded": self.n_decoded,
            "n_new_failures": self.n_new_failures,
            "n_known_failures": self.n_known_failures,
            "n_retried": self.n_retried,
            "decode_warnings": self.decode_warnings,
            "truncated": self.truncated,
            "skipped_by_rule": dict(sorted(self.skipped_by_rule.items())),
            "failed_by_class": dict(sorted(self.failed_by_class.items())),
            "failed_files": dict(sorted(self.failed_files.items())),
            "samples": self.samples.as_dict(),
            "store": self.store,
            "engine": self.engine,
            "engine_fallback": self.engine_fallback,
            "decoder": self.decoder,
            "workers": self.workers,
            "item_timeout_s": self.item_timeout_s,
            "n_commits": self.n_commits,
            "bytes_committed": self.bytes_committed,
            "frames_version": self.frames_version,
            "cache_schema_version": self.cache_schema_version,
            "engine_stats": self.engine_stats,
        }
