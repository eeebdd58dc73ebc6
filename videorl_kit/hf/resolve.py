"""Resolve ``hf://ORG/NAME@REV/path`` to a local file pinned to a commit sha.

The spec loader calls :func:`resolve_hf_uri` for ``include: hf://...`` and for top-level
``hf://`` spec paths, and records the returned repo, commit sha, path and sha256 as the
spec's provenance. A branch or tag is resolved to the commit it points to *now*, and that
sha is what gets recorded. When the repo carries a videorl-kit manifest, the file is
checked against it. A downloaded YAML file must be plain data (no tags, no aliases).

Example:
    >>> f = resolve_hf_uri("hf://my-org/video-tasks@main/specs/synth-count.yaml")  # doctest: +SKIP
    >>> f.revision, f.local_path.name  # doctest: +SKIP
    ('5f2c0c8e...', 'synth-count.yaml')
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from videorl_kit.hf.client import REPO_TYPE, hub_cache_dir, hub_errors, make_api, resolve_commit
from videorl_kit.hf.errors import HubError, HubIntegrityError
from videorl_kit.hf.manifest import MANIFEST_NAME, Manifest, read_manifest, sha256_file
from videorl_kit.hf.refs import format_hf_uri, parse_hf_uri
from videorl_kit.hf.safety import check_plain_yaml, read_spec_path

if TYPE_CHECKING:
    from huggingface_hub import HfApi

YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class ResolvedHubFile:
    """A Hub file downloaded at an exact commit."""

    local_path: Path
    repo: str
    revision: str
    path: str
    sha256: str
    uri: str

    def provenance(self) -> dict[str, str]:
        """The record a spec keeps for this file (``uri`` pins the resolved sha).

        Example:
            >>> ResolvedHubFile(Path("x"), "o/n", "a" * 40, "s.yaml", "0" * 64,
            ...                 "hf://o/n@main/s.yaml").provenance()["repo"]
            'o/n'
        """
        return {
            "uri": self.uri,
            "repo": self.repo,
            "revision": self.revision,
            "path": self.path,
            "sha256": self.sha256,
        }


def download_file(api: HfApi, repo: str, sha: str, path: str) -> Path:
    """Download one repo file at commit ``sha`` into the Hub cache; return its local path.

    Example:
        >>> download_file(make_api(), "org/name", "a" * 40, "specs/x.yaml")  # doctest: +SKIP
        PosixPath('/root/.cache/huggingface/hub/datasets--org--name/snapshots/aaaa.../specs/x.yaml')
    """
    with hub_errors(f"fetching {format_hf_uri(repo, sha, path)}", path=path):
        return _hub_download(api, repo, sha, path)


def _hub_download(api: HfApi, repo: str, sha: str, path: str) -> Path:
    """``hf_hub_download`` of one file at ``sha`` into the kit's Hub cache (errors as raised)."""
    from huggingface_hub import hf_hub_download

    return Path(
        hf_hub_download(
            repo,
            path,
            repo_type=REPO_TYPE,
            revision=sha,
            endpoint=api.endpoint,
            token=api.token,
            cache_dir=hub_cache_dir(),
        )
    )


def repo_manifest(api: HfApi, repo: str, sha: str) -> Manifest | None:
    """The repo's videorl-kit manifest at ``sha``, or None if it has none (or it can't be
    fetched offline).

    Example:
        >>> repo_manifest(make_api(), "org/name", "a" * 40)  # doctest: +SKIP
    """
    from huggingface_hub import errors as hf_errors

    with hub_errors(f"fetching {format_hf_uri(repo, sha, MANIFEST_NAME)}"):
        try:
            local = _hub_download(api, repo, sha, MANIFEST_NAME)
        except (hf_errors.RemoteEntryNotFoundError, hf_errors.LocalEntryNotFoundError):
            return None
    return read_manifest(local, format_hf_uri(repo, sha, MANIFEST_NAME))


def resolve_hf_uri(
    uri: str, *, endpoint: str | None = None, token: str | None = None
) -> ResolvedHubFile:
    """Download the file named by ``hf://ORG/NAME@REV/path`` at the commit REV points to.

    Raises :class:`HubError` (repo/revision/file not found, Hub unreachable, a YAML file
    with code tags) or :class:`HubIntegrityError` (file differs from the repo manifest).

    Example:
        >>> resolved = resolve_hf_uri("hf://org/tasks@v1/specs/a.yaml")  # doctest: +SKIP
        >>> resolved.provenance()["revision"]  # doctest: +SKIP
        '0c4d...'
    """
    parsed = parse_hf_uri(uri)
    api = make_api(endpoint, token)
    sha = resolve_commit(api, parsed.repo, parsed.revision)
    local = download_file(api, parsed.repo, sha, parsed.path)
    if not local.is_file():
        raise HubError(f"{uri}: download produced no file")
    digest = sha256_file(local)
    pinned = format_hf_uri(parsed.repo, sha, parsed.path)
    if parsed.path != MANIFEST_NAME:
        manifest = repo_manifest(api, parsed.repo, sha)
        entry = manifest.files.get(parsed.path) if manifest is not None else None
        if entry is not None and entry.sha256 != digest:
            raise HubIntegrityError(
                f"{pinned}: sha256 {digest[:12]}… does not match {entry.sha256[:12]}… in the "
                f"repo's {MANIFEST_NAME} (file changed after publishing?)"
            )
    if parsed.path.endswith(YAML_SUFFIXES):
        text = read_spec_path(local, pinned)
        check_plain_yaml(text, pinned, allow_aliases=False)
    return ResolvedHubFile(
        local_path=local, repo=parsed.repo, revision=sha, path=parsed.path, sha256=digest, uri=uri
    )
