"""From spec paths to evaluation tasks: resolved specs, their rows and where the rows came from.

For each spec, in order: the protocol (``--protocol``: the spec as written, or its
``eval.protocols.official`` merged in), ``--set`` overrides, the shipped fixture instead of
the real annotations (``--fixture``), the ``--variant`` override, ``--limit`` (the first N rows, as
``data.limit``), the annotation file checked against ``eval.source.sha256``, Hub data pinned
to the commit its revision resolves to now, and the rows read. A row that cannot be used
(malformed, a duplicate id) is kept as a named skip; it is reported, never scored.

Example:
    >>> tasks = load_tasks(["task_specs/eval/video-mme.yaml"], fixture=True)
    >>> tasks[0].data.kind, len(tasks[0].samples), tasks[0].samples[0].answer
    ('fixture', 3, 'B')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from videorl_kit.core.errors import UserError
from videorl_kit.eval.results import DataSource, SkippedSample
from videorl_kit.media.hashing import file_content_hash
from videorl_kit.spec import load_specs
from videorl_kit.spec.data import Sample, data_file, duplicate_id_reason, iter_samples
from videorl_kit.spec.eval_section import EvalSection, Variant
from videorl_kit.spec.loader import discover_spec_paths
from videorl_kit.spec.models import TaskSpec
from videorl_kit.spec.overrides import apply_overrides
from videorl_kit.spec.protocols import apply_protocol
from videorl_kit.store.provenance import pin_hub_data


@dataclass
class EvalTask:
    """One benchmark ready to run: its resolved spec, usable samples and skipped rows."""

    spec: TaskSpec
    samples: list[Sample]
    skipped: list[SkippedSample]
    data: DataSource
    n_rows: int
    hub_files: list[dict[str, str]] = field(default_factory=list)

    @property
    def id(self) -> str:
        """The task id."""
        return self.spec.id

    @property
    def protocol(self) -> str:
        """The protocol the task runs (``reasoning`` or ``official``)."""
        return self.section.protocol

    @property
    def section(self) -> EvalSection:
        """The spec's eval section (every loaded task has one)."""
        assert self.spec.eval is not None
        return self.spec.eval


def _with(spec: TaskSpec, **update: object) -> TaskSpec:
    copy = spec.model_copy(update=update)
    copy._source_file = spec.source_file
    return copy.with_provenance(spec.provenance)


def use_fixture(spec: TaskSpec) -> TaskSpec:
    """``spec`` reading its shipped fixture (``eval.fixture``) instead of the real annotations.

    Raises :class:`UserError` for a spec without a fixture.
    """
    fixture = spec.eval.fixture if spec.eval is not None else None
    if fixture is None:
        raise UserError(f"{spec.id}: --fixture given but the spec declares no eval.fixture")
    data = spec.data.model_copy(
        update={"path": fixture.path, "hub": None, "media_root": fixture.media_root}
    )
    return _with(spec, data=data)


def _resolve(
    spec: TaskSpec,
    overrides: list[str],
    fixture: bool,
    limit: int | None,
    variant: Variant | None,
    protocol: str,
) -> TaskSpec:
    spec = apply_protocol(spec, protocol)
    spec = apply_overrides(spec, overrides)
    section = spec.eval or EvalSection()
    if variant is not None:
        section = section.model_copy(update={"variant": variant})
    spec = _with(spec, eval=section)
    if fixture:
        spec = use_fixture(spec)
    if limit is not None:
        spec = _with(spec, data=spec.data.model_copy(update={"limit": limit}))
    return spec


def _data_source(spec: TaskSpec, fixture: bool, record: dict[str, str] | None) -> DataSource:
    source = spec.eval.source if spec.eval is not None else None
    try:
        path = data_file(spec)
    except UserError as exc:
        raise UserError(f"{spec.id}: {exc}") from None
    if not path.is_file():
        where = f" (data.path in {spec.source_file})" if spec.source_file else ""
        raise UserError(
            f"{spec.id}: annotation file {path} not found{where}; put the benchmark's annotations "
            "there (the spec's header says where they come from), override the path with "
            f"--set {spec.id}:data.path=FILE, or run the shipped fixture with --fixture"
        )
    digest = file_content_hash(path)
    declared = None if fixture or source is None else source.sha256
    if declared is not None and digest != declared:
        raise UserError(
            f"{spec.id}: annotation file {path} has sha256 {digest[:12]}..., but the spec "
            f"pins {declared[:12]}... ({source.origin if source else ''}); evaluating another "
            "version would not be comparable: fetch the pinned file, or (knowingly) drop the "
            f"pin with --set {spec.id}:eval.source.sha256=null"
        )
    kind = "fixture" if fixture else ("hub" if record is not None else "local")
    return DataSource(
        kind=kind,
        path=str(path),
        sha256=digest,
        repo=record.get("repo") if record else None,
        revision=record.get("revision") if record else None,
        file=record.get("path") if record else None,
        declared_origin=None if fixture or source is None else source.origin,
        declared_sha256=declared,
        source_verified=None if fixture or source is None else source.verified,
    )


def _read(spec: TaskSpec) -> tuple[list[Sample], list[SkippedSample], int]:
    samples: list[Sample] = []
    skipped: list[SkippedSample] = []
    first_row: dict[str, int] = {}
    n_rows = 0
    for sample in iter_samples(spec):
        n_rows += 1
        reason = sample.skip_reason
        if reason is None and sample.sample_id in first_row:
            reason = duplicate_id_reason(sample, first_row)
        if reason is not None:
            sample_id = sample.sample_id
            if sample.skip_reason is None:  # a duplicate: name it as the store does
                sample_id = f"{sample_id}#row{sample.row_index}"
            skipped.append(SkippedSample(sample_id=sample_id, reason=reason))
            continue
        first_row[sample.sample_id] = sample.row_index
        samples.append(sample)
    return samples, skipped, n_rows


def load_tasks(
    spec_paths: list[str | Path],
    *,
    overrides: list[str] | None = None,
    fixture: bool = False,
    limit: int | None = None,
    variant: Variant | None = None,
    protocol: str = "reasoning",
) -> list[EvalTask]:
    """Resolve and read every spec (files, folders or ``hf://`` URIs) under ``protocol``.

    All spec problems of all files are reported at once (:class:`~videorl_kit.spec.SpecError`);
    a missing or mismatching annotation file raises a :class:`UserError` naming the spec.
    """
    if limit is not None and limit < 1:
        raise UserError(f"--limit must be at least 1, not {limit}")
    paths = discover_spec_paths(list(spec_paths))
    if not paths:
        raise UserError("no spec files given (base files starting with '_' are skipped)")
    tasks = []
    for loaded in load_specs(paths):
        spec = _resolve(loaded, list(overrides or []), fixture, limit, variant, protocol)
        pinned, record = pin_hub_data(spec)
        data = _data_source(pinned, fixture, record)
        samples, skipped, n_rows = _read(pinned)
        tasks.append(EvalTask(pinned, samples, skipped, data, n_rows, list(loaded.provenance)))
    return tasks
