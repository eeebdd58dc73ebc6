"""How a build's decoding runs: the :class:`DecodeEngine` protocol.

An engine turns the build's decode tasks into results, one per task, and gets the frames
row of every ok result into the frames table through the build's committer (the one commit
path, :class:`~videorl_kit.store.commit.BatchCommitter`). The builder then settles each
result the same way whatever the engine: ok, failed (a failures row) or skipped.

* ``"local"`` (:class:`~videorl_kit.store.engine_local.LocalEngine`): supervised worker
  processes on this machine; the committer buffers their rows.
* ``"ray"`` (:class:`~videorl_kit.store.engine_ray.RayEngine`): Ray workers decode and
  write the frames data files; the committer commits them per chunk.

``build_cache`` picks the engine its config names
(:func:`~videorl_kit.store.builder.make_engine`).

Example:
    >>> EngineReport()
    EngineReport(fallback=None, stats={})
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from videorl_kit.store.commit import BatchCommitter
from videorl_kit.store.worker import DecodeResult, DecodeTask

__all__ = ["DecodeEngine", "EngineReport"]


@dataclass(frozen=True)
class EngineReport:
    """What an engine says about its run: why it fell back to the local engine (None when it
    did not) and its own figures (``BuildSummary.engine_stats``)."""

    fallback: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)


class DecodeEngine(Protocol):
    """Decodes tasks and commits their frames rows through the build's committer."""

    def run(self, tasks: Sequence[DecodeTask], committer: BatchCommitter) -> Iterator[DecodeResult]:
        """Yield one result per task; every ok one's frames row is committed or buffered."""
        ...

    def report(self) -> EngineReport:
        """What this engine did (after :meth:`run`)."""
        ...
