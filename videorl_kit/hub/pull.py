"""Pull a published spec repo at a pinned revision, verify it, and load its specs.

Every file listed in ``videorl_kit_manifest.json`` must be present with the recorded
sha256; anything else is an error naming the file. Downloads are bounded: the repo tree is
read first and every entry checked (a relative path inside the repo, a known type, a size),
only the files the manifest lists are fetched, and each is cut off as soon as the server
sends more bytes than the manifest declares for it. Each problem is one line naming the
file. A file already present in the destination is not fetched again (it is verified).
Specs are parsed as plain-data YAML (no tags, no aliases, no ``include:``) and validated
like local specs; nothing downloaded
is imported or executed. Each loaded spec records ``hf://ORG/NAME@<sha>/specs/<id>.yaml``
in its provenance, so caches, results and run bundles can name the exact revision.

Example:
    >>> pulled = pull("my-org/video-tasks@v1", dest="specs/video-tasks")  # doctest: +SKIP
    >>> pulled.revision, [s.id for s in pulled.specs]  # doctest: +SKIP
    ('5f2c0c8e...', ['synth-count'])
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from videorl_kit.hf.client import REPO_TYPE, hub_cache_dir, hub_errors, make_api, resolve_commit
from videorl_kit.hf.errors import HubError, HubIntegrityError
from videorl_kit.hf.manifest import MANIFEST_NAME, Manifest, SpecEntry, read_manifest, verify_tree
from videorl_kit.hf.refs import format_hf_uri, normalize_repo_path, parse_repo_ref
from videorl_kit.hf.safety import check_plain_yaml, read_spec_text
from videorl_kit.spec.loader import SpecError, load_spec
from videorl_kit.spec.models import TaskSpec
from videorl_kit.spec.yaml_source import SpecLoadError, parse_yaml_text

if TYPE_CHECKING:
    from huggingface_hub import HfApi

MAX_MANIFEST_BYTES = 16 << 20
"""The largest manifest ``pull`` downloads (a manifest lists paths and hashes: far smaller)."""


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


def _bad_entry(where: str, entry: object, reason: str) -> HubIntegrityError:
    shown = json.dumps(entry, default=str)
    shown = shown if len(shown) <= 160 else shown[:157] + "..."
    return HubIntegrityError(f"{where}: bad entry in the repo tree ({reason}): {shown}")


def tree_files(entries: list[Any], where: str) -> dict[str, int]:
    """``{path: size}`` of the files in a repo tree listing; one line on a bad entry.

    Every entry must be a mapping with a ``type`` of ``file`` or ``directory`` and a
    normalised relative ``path`` inside the repo; a file also needs an integer ``size``.

    Example:
        >>> tree_files([{"type": "file", "path": "a.yaml", "size": 3},
        ...             {"type": "directory", "path": "specs"}], "o/n@abc")
        {'a.yaml': 3}
        >>> tree_files([{"type": "file", "path": "../etc/passwd", "size": 3}], "o/n@abc")
        Traceback (most recent call last):
        ...
        videorl_kit.hf.errors.HubIntegrityError: o/n@abc: bad entry in the repo tree (path \
'../etc/passwd' leaves the repo): {"type": "file", "path": "../etc/passwd", "size": 3}
    """
    files: dict[str, int] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise _bad_entry(where, entry, "not an object")
        kind, path = entry.get("type"), entry.get("path")
        if kind not in ("file", "directory"):
            raise _bad_entry(where, entry, f"type {kind!r} is neither file nor directory")
        if not isinstance(path, str):
            raise _bad_entry(where, entry, "no path")
        try:
            inside = normalize_repo_path(path) == path
        except HubError:
            inside = False
        if not inside:
            raise _bad_entry(where, entry, f"path {path!r} leaves the repo")
        if kind == "file":
            size = entry.get("size")
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise _bad_entry(where, entry, f"size {size!r} is not a byte count")
            files[path] = size
    return files


def _list_tree(api: HfApi, repo: str, sha: str, where: str) -> list[Any]:
    """The raw recursive tree listing of ``repo`` at ``sha`` (all pages)."""
    from urllib.parse import quote

    from huggingface_hub import get_session
    from huggingface_hub.utils import build_hf_headers, hf_raise_for_status

    url: str | None = f"{api.endpoint}/api/{REPO_TYPE}s/{repo}/tree/{quote(sha, safe='')}"
    params: dict[str, str] | None = {"recursive": "true", "expand": "false"}
    entries: list[Any] = []
    with hub_errors(f"listing {where}"):
        while url:
            response = get_session().get(url, params=params, headers=build_hf_headers(
                token=api.token, library_name="videorl-kit"))  # fmt: skip
            hf_raise_for_status(response)
            try:
                page = response.json()
            except ValueError as exc:
                raise HubIntegrityError(f"{where}: the repo tree is not JSON ({exc})") from None
            if not isinstance(page, list):
                raise HubIntegrityError(f"{where}: the repo tree is not a list of entries")
            entries += page
            url, params = response.links.get("next", {}).get("url"), None
    return entries


def download_capped(api: HfApi, repo: str, sha: str, path: str, target: Path, limit: int) -> int:
    """Fetch ``path`` to ``target`` (atomically), refusing more than ``limit`` bytes.

    The download stops as soon as the server sends one byte more than ``limit``; nothing is
    left behind then. Returns the number of bytes written.
    """
    from huggingface_hub import get_session, hf_hub_url
    from huggingface_hub.utils import build_hf_headers, hf_raise_for_status

    url = hf_hub_url(repo, path, repo_type=REPO_TYPE, revision=sha, endpoint=api.endpoint)
    headers = build_hf_headers(token=api.token, library_name="videorl-kit")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")
    written = 0
    try:
        with (
            hub_errors(f"downloading {repo}@{sha[:12]}", path=path),
            get_session().stream("GET", url, headers=headers, follow_redirects=True) as response,
        ):
            hf_raise_for_status(response)
            with partial.open("wb") as out:
                for chunk in response.iter_bytes():
                    written += len(chunk)
                    if written > limit:
                        raise HubIntegrityError(
                            f"{repo}@{sha[:12]}: {path}: the server sent more than the {limit} "
                            "bytes the manifest declares; download stopped"
                        )
                    out.write(chunk)
        os.replace(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    return written


def _default_dir(repo: str, sha: str) -> Path:
    from huggingface_hub import constants

    cache = Path(hub_cache_dir() or constants.HF_HUB_CACHE)
    return cache / "videorl-kit" / f"{REPO_TYPE}s--{repo.replace('/', '--')}" / sha


def _fetch_repo(api: HfApi, repo: str, sha: str, root: Path) -> None:
    """Download the manifest and every file it lists into ``root``, bounded by the manifest."""
    where = f"{repo}@{sha[:12]}"
    manifest_path = root / MANIFEST_NAME
    if manifest_path.is_file():  # pulled before: nothing to fetch when every file is there
        manifest = read_manifest(manifest_path, f"{where}/{MANIFEST_NAME}")
        if all(root.joinpath(*path.split("/")).exists() for path in manifest.files):
            return
    listed = tree_files(_list_tree(api, repo, sha, where), where)
    if MANIFEST_NAME not in listed:
        raise HubIntegrityError(
            f"{where}/{MANIFEST_NAME}: missing; this repo was not published by "
            "`videorl-kit publish` or the manifest was deleted"
        )
    if listed[MANIFEST_NAME] > MAX_MANIFEST_BYTES:
        raise HubIntegrityError(
            f"{where}/{MANIFEST_NAME}: {listed[MANIFEST_NAME]} bytes, more than a manifest "
            f"may have ({MAX_MANIFEST_BYTES})"
        )
    if not manifest_path.is_file():
        download_capped(api, repo, sha, MANIFEST_NAME, manifest_path, listed[MANIFEST_NAME])
    manifest = read_manifest(manifest_path, f"{where}/{MANIFEST_NAME}")
    problems = []
    for path, entry in sorted(manifest.files.items()):
        target = root.joinpath(*path.split("/"))
        if path not in listed:
            problems.append(f"{path}: missing from the repo tree")
        elif listed[path] != entry.size:
            problems.append(f"{path}: size {listed[path]} != {entry.size} in the repo listing")
        elif not target.exists():
            download_capped(api, repo, sha, path, target, entry.size)
    if problems:
        raise HubIntegrityError(
            f"{where}: {len(problems)} file(s) do not match the manifest: " + "; ".join(problems)
        )


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
    ref = parse_repo_ref(repo_ref)
    api = make_api(endpoint, token)
    sha = resolve_commit(api, ref.repo, ref.revision)
    where = f"{ref.repo}@{sha[:12]}"
    if dest is not None:
        dest = Path(dest)
        if dest.exists() and not dest.is_dir():
            raise HubError(f"{dest}: exists and is not a folder")
    root = (dest if dest is not None else _default_dir(ref.repo, sha)).resolve()
    _fetch_repo(api, ref.repo, sha, root)
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
