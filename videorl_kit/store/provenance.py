"""Where a task spec and its data came from, as recorded on every ``samples`` row.

A build records, per spec:

``spec_file``       the file the spec was loaded from (absolute; None for a spec built in code)
``spec_version``    the spec's declared version (a column of its own in ``samples``)
``spec_sha256``     :func:`spec_sha256`: sha256 of the resolved spec as canonical JSON (sorted
                    keys), so two rows come from the same spec content exactly when it matches
``spec_hub_files``  JSON list of the Hub files the spec was built from (``include:
                    hf://...`` or a top-level ``hf://`` spec): ``uri``, ``repo``, the commit
                    ``revision`` it resolved to, ``path`` and ``sha256``
``data_repo``, ``data_revision``, ``data_file``, ``data_sha256``
                    for Hub data (``data.hub``): the dataset repo, the *commit* the requested
                    revision resolved to for this build, the file and its sha256 (None for
                    local data)

For Hub data, :func:`pin_hub_data` resolves the requested revision (a branch or tag) to a
commit once, and the build reads the rows of that commit: the recorded revision is the one
the rows came from, even if the branch moves during the build.

Example:
    >>> from videorl_kit.spec.models import TaskSpec
    >>> spec = TaskSpec.model_validate({"id": "a", "version": 2, "problem_type": "ocr",
    ...     "data": {"path": "x.jsonl"}, "prompt": {"template": "{{ question }}"}})
    >>> source = SpecSource.of(spec.with_provenance([{"repo": "o/n", "revision": "c0ffee"}]))
    >>> source.columns()["spec_hub_files"], source.data_repo
    ('[{"repo":"o/n","revision":"c0ffee"}]', None)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from videorl_kit.hf.resolve import resolve_hf_uri
from videorl_kit.store.schema import canonical_json, sha256_text

if TYPE_CHECKING:
    from videorl_kit.spec.models import TaskSpec


def spec_sha256(spec: TaskSpec) -> str:
    """sha256 of ``spec.resolved_dict()`` as canonical JSON (sorted keys, no whitespace).

    Loader-only attributes (source file, provenance) are not part of it: the same spec
    content gives the same hash wherever it was loaded from.

    Example:
        >>> from videorl_kit.spec.models import TaskSpec
        >>> data = {"id": "a", "version": 1, "problem_type": "ocr",
        ...         "data": {"path": "x.jsonl"}, "prompt": {"template": "{{ question }}"}}
        >>> spec_sha256(TaskSpec.model_validate(data)) == spec_sha256(
        ...     TaskSpec.model_validate(dict(reversed(list(data.items())))))
        True
    """
    return sha256_text(canonical_json(spec.resolved_dict()))


@dataclass(frozen=True)
class SpecSource:
    """The provenance columns shared by every ``samples`` row of one spec."""

    spec_file: str | None
    spec_sha256: str
    spec_hub_files: tuple[dict[str, Any], ...]
    data_repo: str | None = None
    data_revision: str | None = None
    data_file: str | None = None
    data_sha256: str | None = None

    @classmethod
    def of(cls, spec: TaskSpec, data: dict[str, str] | None = None) -> SpecSource:
        """The source of ``spec``; ``data`` is the Hub data record from :func:`pin_hub_data`.

        Example:
            >>> SpecSource.of(spec).spec_sha256 == spec_sha256(spec)  # doctest: +SKIP
            True
        """
        data = data or {}
        return cls(
            spec_file=os.path.abspath(spec.source_file) if spec.source_file else None,
            spec_sha256=spec_sha256(spec),
            spec_hub_files=tuple(dict(record) for record in spec.provenance),
            data_repo=data.get("repo"),
            data_revision=data.get("revision"),
            data_file=data.get("path"),
            data_sha256=data.get("sha256"),
        )

    def columns(self) -> dict[str, Any]:
        """The ``samples`` columns (``spec_hub_files`` as canonical JSON text).

        Example:
            >>> columns = SpecSource("/s.yaml", "0" * 64, ()).columns()
            >>> columns["spec_hub_files"], columns["data_revision"]
            ('[]', None)
        """
        return {
            "spec_file": self.spec_file,
            "spec_sha256": self.spec_sha256,
            "spec_hub_files": canonical_json(list(self.spec_hub_files)),
            "data_repo": self.data_repo,
            "data_revision": self.data_revision,
            "data_file": self.data_file,
            "data_sha256": self.data_sha256,
        }


def pin_hub_data(spec: TaskSpec) -> tuple[TaskSpec, dict[str, str] | None]:
    """For Hub data, resolve the requested revision to a commit and pin the spec to it.

    Returns the spec to read rows with (``data.hub.revision`` replaced by the commit sha)
    and the data record (``uri``, ``repo``, ``revision``, ``path``, ``sha256``); a spec
    with local data comes back unchanged with ``None``. Hub errors (repo, revision or file
    not found, Hub unreachable) are :class:`~videorl_kit.core.errors.UserError` subclasses.

    Example:
        >>> pinned, record = pin_hub_data(spec)  # doctest: +SKIP
        >>> pinned.data.hub.revision == record["revision"]  # doctest: +SKIP
        True
    """
    hub = spec.data.hub
    if hub is None:
        return spec, None
    resolved = resolve_hf_uri(hub.uri)
    pinned_hub = hub.model_copy(update={"revision": resolved.revision})
    pinned = spec.model_copy(update={"data": spec.data.model_copy(update={"hub": pinned_hub})})
    return pinned, resolved.provenance()


def hub_files_of(column: str | None) -> list[dict[str, Any]]:
    """Parse a ``spec_hub_files`` cell back into its records.

    Example:
        >>> hub_files_of('[{"repo":"o/n","revision":"abc"}]')[0]["revision"]
        'abc'
        >>> hub_files_of(None)
        []
    """
    return list(json.loads(column)) if column else []
