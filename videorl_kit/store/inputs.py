"""What a cache build has to do: the inputs collected from the specs' rows.

**Definition of an input** (the unit of ``n_input == n_ok + n_failed + n_skipped``):

1. a *media item*: one distinct pair (media file, budget) referenced by a well-formed row
   of any of the specs (a video may be a folder of numbered frames, with the spec's
   ``data.frames_fps``: the same folder at another fps is another item). The file is
   identified by its absolute path; the budget is the spec's video budget for entries of
   the row's ``videos`` list and its image budget for
   ``images`` (the modality is part of the budget). The same file used by many rows or
   specs under the same budget is *one* input; under two budgets it is two inputs. Each
   media item ends ``ok`` (a ``frames`` row holds it), ``failed`` (a ``failures`` row
   says why) or ``skipped`` by a named rule (``over_token_budget``).
2. a *skipped row*: a row the spec loader could not use (``Sample.skip_rule``: malformed,
   unknown or missing problem type, a type other than the spec's, a ``data_type`` that
   contradicts the row's media) or a second row with an already used sample id (rule
   ``duplicate_id``). It has no trustworthy media, so it is one input that always ends
   ``skipped`` with its row rule (:data:`videorl_kit.core.skip_rules.ROW_RULES`).

Well-formed rows without media (text-only) are not inputs: there is nothing to cache.
They still get a ``samples`` row. Two paths with identical content under one budget are
two inputs that share one ``frames`` row (the cache key hashes the content).

Example:
    >>> from videorl_kit.spec.models import VideoBudget
    >>> item = MediaItem.video("/data/a.mp4", VideoBudget(max_frames=8))
    >>> item.modality, item.budget["max_frames"], len(item.budget_hash)
    ('video', 8, 16)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from videorl_kit.core.errors import UserError
from videorl_kit.core.skip_rules import RULE_DUPLICATE_ID
from videorl_kit.spec.data import duplicate_id_reason, iter_samples
from videorl_kit.store.provenance import SpecSource, pin_hub_data
from videorl_kit.store.schema import budget_hash

if TYPE_CHECKING:
    from videorl_kit.spec.data import Sample
    from videorl_kit.spec.models import ImageBudget, TaskSpec, VideoBudget

Modality = Literal["video", "image"]


@dataclass(frozen=True)
class MediaItem:
    """One distinct (media file, budget) pair: the unit the builder decodes."""

    source_uri: str
    modality: Modality
    budget: dict[str, Any] = field(hash=False, compare=False)
    budget_hash: str
    frames_fps: float | None = None  # a folder of numbered frames played at this fps

    @classmethod
    def video(
        cls, path: str | Path, budget: VideoBudget, frames_fps: float | None = None
    ) -> MediaItem:
        """The media item of a video file (or, with ``frames_fps``, a folder of numbered
        frames) under a video budget."""
        data = budget.model_dump(mode="json")
        return cls(_absolute(path), "video", data, budget_hash("video", data), frames_fps)

    @classmethod
    def image(cls, path: str | Path, budget: ImageBudget) -> MediaItem:
        """The media item of an image file under an image budget."""
        data = budget.model_dump(mode="json")
        return cls(_absolute(path), "image", data, budget_hash("image", data))


@dataclass(frozen=True)
class RowRef:
    """One data row of one spec, with the media items it references and the spec's source."""

    spec: TaskSpec
    sample: Sample
    videos: tuple[MediaItem, ...]
    images: tuple[MediaItem, ...]
    skip_rule: str | None = None
    skip_reason: str | None = None
    source: SpecSource | None = None


@dataclass
class BuildInputs:
    """Everything a build works on: distinct media items and every row of every spec."""

    items: list[MediaItem]
    rows: list[RowRef]

    @property
    def skipped_rows(self) -> list[RowRef]:
        """Rows that are inputs of their own, skipped by a row rule."""
        return [r for r in self.rows if r.skip_rule is not None]

    @property
    def n_input(self) -> int:
        """Media items plus skipped rows (see the module docstring)."""
        return len(self.items) + len(self.skipped_rows)


def _absolute(path: str | Path) -> str:
    return os.path.abspath(os.fspath(path))


def _frames_fps(spec: TaskSpec, path: Path) -> float | None:
    """The spec's ``data.frames_fps`` when ``path`` is a folder (a video stored as frames)."""
    return spec.data.frames_fps if os.path.isdir(path) else None


def collect_inputs(specs: Iterable[TaskSpec]) -> BuildInputs:
    """Read every spec's rows and collect the distinct media items, in first-seen order.

    Raises :class:`UserError` when two different spec files share one task id (their
    samples would collide in the ``samples`` table). The same spec file given twice is
    read once. Hub data is read at the commit its revision resolves to now
    (:func:`~videorl_kit.store.provenance.pin_hub_data`), and every row carries its spec's
    :class:`~videorl_kit.store.provenance.SpecSource`.

    Example:
        >>> collect_inputs([]).n_input
        0
    """
    items: dict[MediaItem, MediaItem] = {}
    rows: list[RowRef] = []
    seen_specs: dict[str, Path | None] = {}
    for spec in specs:
        if spec.id in seen_specs:
            if seen_specs[spec.id] == spec.source_file and spec.source_file is not None:
                continue
            raise UserError(
                f"task id {spec.id!r} is used by two specs ({seen_specs[spec.id]} and "
                f"{spec.source_file}); task ids must be unique within one build"
            )
        seen_specs[spec.id] = spec.source_file
        pinned, data_record = pin_hub_data(spec)
        source = SpecSource.of(spec, data_record)
        first_row_of: dict[str, int] = {}
        for sample in iter_samples(pinned):
            rule, reason = sample.skip_rule, sample.skip_reason
            if rule is None and sample.sample_id in first_row_of:
                rule, reason = RULE_DUPLICATE_ID, duplicate_id_reason(sample, first_row_of)
            if rule is not None:
                rows.append(RowRef(pinned, sample, (), (), rule, reason, source))
                continue
            first_row_of[sample.sample_id] = sample.row_index
            videos = tuple(
                items.setdefault(m, m)
                for m in (
                    MediaItem.video(p, spec.budget.video, _frames_fps(spec, p))
                    for p in sample.videos
                )
            )
            images = tuple(
                items.setdefault(m, m)
                for m in (MediaItem.image(p, spec.budget.image) for p in sample.images)
            )
            rows.append(RowRef(pinned, sample, videos, images, source=source))
    return BuildInputs(items=list(items), rows=rows)
