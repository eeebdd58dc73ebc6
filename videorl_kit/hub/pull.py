"""Pull a published spec repo at a pinned revision, verify it, and load its specs.

Every file listed in ``videorl_kit_manifest.json`` must be present with the recorded
sha256; anything else is an error naming the file. Specs are parsed as plain-data YAML
(no tags, no aliases, no ``include:``) and validated like local specs; nothing downloaded
is imported or executed. Each loaded spec records ``hf://ORG/NAME@<sha>/specs/<id>.yaml``
in its provenance, so caches, results and run bundles can name the exact revision.

Example:
    >>> pulled = pull("my-org/video-tasks@v1", dest="specs/video-tasks")  # doctest: +SKIP
    >>> pulled.revision, [s.id for s in pulled.specs]  # doctest: +SKIP
    ('5f2c0c8e...', ['synth-count'])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from videorl_kit.hub.client import REPO_TYPE, hub_cache_dir, hub_errors, make_api, resolve_commit
from videorl_kit.hub.errors import HubError, HubIntegrityError
from videorl_kit.hub.manifest import MANIFEST_NAME, Manifest, SpecEntry, read_manifest, verify_tree
from videorl_kit.hub.refs import format_hf_uri, parse_repo_ref
from videorl_kit.hub.safety import check_plain_yaml, read_spec_text

if TYPE_CHECKING:
    from videorl_kit.spec import TaskSpec


@dataclass
class PulledRepo:
    """A verified local copy of a spec repo at one commit, with its specs loaded."""

    local_dir: Path
    repo: str
    revision: str
    specs: list[TaskSpec]
    manifest: Manifest
    requested: str | None = None
    warnings: list[str] = field(default_factory=list)

    def spec_path(self, spec_id: str) -> Path:
        """Local path of the spec ``spec_id``.

        Example:
            >>> pulled.spec_path("synth-count").name  # doctest: +SKIP
            'synth-count.yaml'
        """
        for entry in self.manifest.specs:
            if entry.id == spec_id:
                return self.local_dir.joinpath(*entry.spec_path.split("/"))
        raise HubError(f"{self.repo}@{self.revision[:12]}: no spec {spec_id!r}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible summary (used by ``--json``).

        Example:
            >>> pulled.to_dict()["revision"]  # doctest: +SKIP
            '5f2c0c8e...'
        """
        return {
            "repo": self.repo,
            "requested_revision": self.requested,
            "revision": self.revision,
            "local_dir": str(self.local_dir),
            "files": sorted(self.manifest.files),
            "specs": [
                {
                    "id": entry.id,
                    "version": entry.version,
                    "path": str(self.spec_path(entry.id)),
                    "uri": format_hf_uri(self.repo, self.revision, entry.spec_path),
                    "verifier": entry.verifier,
                }
                for entry in self.manifest.specs
            ],
            "warnings": list(self.warnings),
        }


def _load_entry(root: Path, entry: SpecEntry, manifest: Manifest, repo: str, sha: str) -> TaskSpec:
    from videorl_kit.spec import SpecError, load_spec
    from videorl_kit.spec.yaml_source import SpecLoadError, parse_yaml_text

    uri = format_hf_uri(repo, sha, entry.spec_path)
    for needed in (entry.spec_path, entry.sample_path):
        if needed not in manifest.files:
            raise HubIntegrityError(f"{uri}: {needed} is not covered by {MANIFEST_NAME}")
    path = root.joinpath(*entry.spec_path.split("/"))
    text = read_spec_text(path.read_bytes(), uri)
    check_plain_yaml(text, uri, allow_aliases=False)
    try:
        data, _ = parse_yaml_text(text, uri)  # bounded nesting, no recursion
    except SpecLoadError as exc:
        raise HubError(str(exc)) from None
    if not isinstance(data, dict):
        raise HubError(f"{uri}: a spec must be a YAML mapping")
    if "include" in data:
        raise HubError(f"{uri}: published specs are resolved; 'include:' is not allowed")
    if data.get("id") != entry.id:
        raise HubIntegrityError(
            f"{uri}: spec id {data.get('id')!r} does not match {entry.id!r} in {MANIFEST_NAME}"
        )
    try:
        spec = load_spec(path)
    except SpecError as exc:
        raise HubError(f"{uri}: invalid spec:\n{exc}") from None
    record = {
        "uri": uri,
        "repo": repo,
        "revision": sha,
        "path": entry.spec_path,
        "sha256": manifest.files[entry.spec_path].sha256,
    }
    return spec.with_provenance([record])


def pull(
    repo_ref: str,
    dest: str | Path | None = None,
    *,
    token: str | None = None,
    endpoint: str | None = None,
) -> PulledRepo:
    """Download ``ORG/NAME[@REV]`` at the commit REV points to, verify it, load its specs.

    ``dest`` is a folder to place the files in (default: the Hub cache). Raises
    :class:`HubIntegrityError` naming every missing or changed file, :class:`HubError`
    for an unknown repo or revision, an unreachable Hub or an invalid spec.

    Example:
        >>> pulled = pull("my-org/video-tasks@0c4d...")  # doctest: +SKIP
        >>> pulled.specs[0].provenance[0]["revision"]  # doctest: +SKIP
        '0c4d...'
    """
    from huggingface_hub import snapshot_download

    ref = parse_repo_ref(repo_ref)
    api = make_api(endpoint, token)
    sha = resolve_commit(api, ref.repo, ref.revision)
    where = f"{ref.repo}@{sha[:12]}"
    if dest is not None:
        dest = Path(dest)
        if dest.exists() and not dest.is_dir():
            raise HubError(f"{dest}: exists and is not a folder")
    with hub_errors(f"downloading {where}"):
        local = snapshot_download(
            ref.repo,
            repo_type=REPO_TYPE,
            revision=sha,
            local_dir=str(dest) if dest is not None else None,
            cache_dir=hub_cache_dir(),
            endpoint=api.endpoint,
            token=token,
        )
    root = Path(local)
    manifest = read_manifest(root / MANIFEST_NAME, f"{where}/{MANIFEST_NAME}")
    if manifest.repo_id != ref.repo:
        warning = f"{where}: published as {manifest.repo_id} (copied or renamed repo)"
    else:
        warning = None
    try:
        verify_tree(root, manifest)
    except HubIntegrityError as exc:
        raise HubIntegrityError(f"{where} ({root}): {exc}") from None
    specs = [_load_entry(root, entry, manifest, ref.repo, sha) for entry in manifest.specs]
    return PulledRepo(
        local_dir=root,
        repo=ref.repo,
        revision=sha,
        specs=specs,
        manifest=manifest,
        requested=ref.revision,
        warnings=[warning] if warning else [],
    )
