"""Build the folder of a spec repo from local spec files (what ``publish`` uploads).

Layout::

    README.md                          dataset card (front matter: configs, tags, versions)
    specs/<id>.yaml                    resolved spec, pure data
    data/<id>/sample.parquet           first rows of the task's data (no media bytes)
    videorl_kit_manifest.json          sha256 and size of every file above

Example:
    >>> built = build_repo_folder(["task_specs/synth-count.yaml"], "out/repo",
    ...                           repo_id="org/tasks")  # doctest: +SKIP
    >>> sorted(built.manifest.files)  # doctest: +SKIP
    ['README.md', 'data/synth-count/sample.parquet', 'specs/synth-count.yaml']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from videorl_kit import __version__
from videorl_kit.core.errors import UserError
from videorl_kit.core.problem_types import ProblemType
from videorl_kit.hf.errors import HubError
from videorl_kit.hf.manifest import MANIFEST_NAME, Manifest, SpecEntry, hash_tree
from videorl_kit.hf.refs import COMMIT_SHA_RE, HF_SCHEME, check_repo_id
from videorl_kit.hf.safety import check_plain_yaml, read_spec_path
from videorl_kit.hub.card import build_card, dump_yaml
from videorl_kit.hub.sample import DEFAULT_SAMPLE_ROWS, sample_rows, write_sample_parquet
from videorl_kit.spec.loader import SpecError, default_verifier_ref, load_spec
from videorl_kit.spec.models import TaskSpec

DEFAULT_LICENSE = "other"


@dataclass
class BuiltFolder:
    """A spec repo folder on disk, its manifest and anything the publisher should know."""

    root: Path
    manifest: Manifest
    warnings: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        """Repo paths of every file, the manifest last."""
        return [*sorted(self.manifest.files), MANIFEST_NAME]


def resolved_spec_data(spec: TaskSpec) -> dict[str, Any]:
    """The spec as pure JSON-compatible data with the verifier filled in (name + version).

    Example:
        >>> resolved_spec_data(spec)["verifier"]  # doctest: +SKIP
        {'name': 'numeric', 'version': 1, 'params': {'abs_tol': 0.5}}
    """
    data = spec.model_dump(mode="json", exclude={"source_file", "provenance"})
    if spec.routes_per_row:  # pin every problem type's verifier, the defaults included
        given = data.get("verifiers") or {}
        data["verifiers"] = {
            ptype.value: given.get(ptype.value) or default_verifier_ref(ptype).model_dump()
            for ptype in ProblemType
        }
    elif not data.get("verifier"):
        data["verifier"] = default_verifier_ref(spec.problem_type).model_dump()
    return data


def _entry_verifier(resolved: dict[str, Any]) -> dict[str, Any]:
    """The manifest's verifier entry: name and version, or per problem type for from_row."""
    if resolved.get("verifier"):
        return {"name": resolved["verifier"]["name"], "version": resolved["verifier"]["version"]}
    per_type = {t: f"{v['name']}@{v['version']}" for t, v in resolved["verifiers"].items()}
    return {"name": "per-row", "version": 1, "by_problem_type": per_type}


def _spec_yaml(data: dict[str, Any], source_name: str, kit_version: str) -> str:
    header = (
        f"# Resolved videorl-kit task spec (kit {kit_version}, from {source_name}):\n"
        "# includes merged, defaults filled in. Pure data: the verifier is referenced by\n"
        "# registered name and version. data.path/media_root are relative to this file.\n"
    )
    return header + dump_yaml(data)


def _data_source(spec: TaskSpec) -> tuple[dict[str, Any], list[str]]:
    warnings: list[str] = []
    hub = spec.data.hub
    if hub is not None:
        source = {"repo": hub.repo, "revision": hub.revision, "split": hub.split, "file": hub.file}
        if not COMMIT_SHA_RE.fullmatch(hub.revision):
            warnings.append(
                f"spec {spec.id}: data.hub.revision {hub.revision!r} is not a commit sha; "
                "pin a sha so every user reads the same rows"
            )
        return source, warnings
    warnings.append(
        f"spec {spec.id}: data.path {spec.data.path!r} is a local file and is not uploaded; "
        "users need that data next to the pulled spec (or use data.hub for portable specs)"
    )
    return {"path": spec.data.path}, warnings


def _load_spec(path: str | Path) -> TaskSpec:
    shown = str(path)
    if not shown.startswith(HF_SCHEME):
        file = Path(path)
        if not file.is_file():
            raise HubError(f"{shown}: spec file not found")
        check_plain_yaml(read_spec_path(file, shown), shown)
    try:
        return load_spec(path)
    except SpecError as exc:
        raise HubError(f"{shown}: invalid spec, not published:\n{exc}") from None


def _prepare_out_dir(out_dir: Path) -> None:
    if out_dir.exists():
        if not out_dir.is_dir():
            raise HubError(f"{out_dir}: exists and is not a folder")
        if any(out_dir.iterdir()):
            raise HubError(f"{out_dir}: folder is not empty; choose a new or empty folder")
    out_dir.mkdir(parents=True, exist_ok=True)


def build_repo_folder(
    spec_paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    repo_id: str,
    sample_limit: int = DEFAULT_SAMPLE_ROWS,
    license: str = DEFAULT_LICENSE,
) -> BuiltFolder:
    """Validate the specs and write the repo folder (card, specs, samples, manifest).

    Every spec is loaded and validated first; nothing is written if one is invalid or
    carries a non-data YAML tag. ``sample_limit`` rows of each task's data go into its
    sample manifest (0: an empty sample, for data that cannot be read here).

    Example:
        >>> built = build_repo_folder(["task_specs/synth-count.yaml"], "out",
        ...                           repo_id="org/tasks")  # doctest: +SKIP
        >>> built.files[-1]  # doctest: +SKIP
        'videorl_kit_manifest.json'
    """
    check_repo_id(repo_id)
    if not spec_paths:
        raise HubError("no spec files given")
    if sample_limit < 0:
        raise HubError(f"sample rows must be >= 0 (got {sample_limit})")
    specs = [(str(path), _load_spec(path)) for path in spec_paths]
    seen: dict[str, str] = {}
    for shown, spec in specs:
        if spec.id in seen:
            raise HubError(f"{shown}: spec id {spec.id!r} is also used by {seen[spec.id]}")
        seen[spec.id] = shown

    prepared: list[tuple[str, TaskSpec, str, list[dict[str, Any]]]] = []
    for shown, spec in specs:
        data = resolved_spec_data(spec)
        source_name = shown.rsplit("/", 1)[-1]
        text = _spec_yaml(data, source_name, __version__)
        check_plain_yaml(text, f"specs/{spec.id}.yaml", allow_aliases=False)
        if yaml.safe_load(text) != data:
            raise HubError(f"{shown}: the resolved spec does not survive a YAML round trip")
        TaskSpec.model_validate(data)  # the published file must load as it is
        try:
            rows = sample_rows(spec, sample_limit)
        except UserError as exc:
            raise HubError(
                f"{shown}: cannot read the task's data for the sample manifest: {exc} "
                "(pass --sample-rows 0 to publish without sample rows)"
            ) from None
        prepared.append((shown, spec, text, rows))

    root = Path(out_dir)
    _prepare_out_dir(root)
    entries: list[SpecEntry] = []
    warnings: list[str] = []
    for _shown, spec, text, rows in prepared:
        spec_path = f"specs/{spec.id}.yaml"
        sample_path = f"data/{spec.id}/sample.parquet"
        (root / "specs").mkdir(exist_ok=True)
        (root / spec_path).write_text(text, encoding="utf-8")
        write_sample_parquet(rows, root / sample_path)
        source, source_warnings = _data_source(spec)
        warnings.extend(source_warnings)
        verifier = _entry_verifier(yaml.safe_load(text))
        entries.append(
            SpecEntry(
                id=spec.id,
                version=spec.version,
                problem_type=str(spec.problem_type),
                tags=list(spec.tags),
                verifier=verifier,
                spec_path=spec_path,
                sample_path=sample_path,
                sample_rows=len(rows),
                data_source=source,
                provenance=[dict(p) for p in spec.provenance],
            )
        )
    card = build_card(repo_id, entries, kit_version=__version__, license=license)
    (root / "README.md").write_text(card, encoding="utf-8")
    manifest = Manifest(
        kit_version=__version__, repo_id=repo_id, specs=entries, files=hash_tree(root)
    )
    (root / MANIFEST_NAME).write_text(manifest.to_json(), encoding="utf-8")
    return BuiltFolder(root=root, manifest=manifest, warnings=warnings)
