"""Publish task specs as a Hub dataset repo, in one commit.

The folder from :func:`~videorl_kit.hub.folder.build_repo_folder` is uploaded with a single
``create_commit`` so the card, the specs, the samples and the manifest never diverge. A
publish defines the whole spec set: files listed by the repo's previous manifest that are
not part of the new set are deleted in the same commit; other files in the repo are left
alone. Publishing identical content again creates no commit.

Example:
    >>> result = publish(["task_specs/synth-count.yaml"], "my-org/video-tasks",
    ...                  dry_run_dir="out/video-tasks")  # doctest: +SKIP
    >>> result.dry_run, result.files[0]  # doctest: +SKIP
    (True, 'README.md')
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from videorl_kit.hf.client import REPO_TYPE, hub_endpoint, hub_errors, make_api
from videorl_kit.hf.errors import HubError
from videorl_kit.hf.manifest import MANIFEST_NAME, Manifest, read_manifest
from videorl_kit.hf.refs import check_repo_id, format_hf_uri
from videorl_kit.hf.resolve import download_file
from videorl_kit.hub.folder import DEFAULT_LICENSE, BuiltFolder, build_repo_folder
from videorl_kit.hub.sample import DEFAULT_SAMPLE_ROWS

if TYPE_CHECKING:
    from huggingface_hub import HfApi


@dataclass
class PublishResult:
    """What ``publish`` did: the commit (None for a dry run), files and specs."""

    repo_id: str
    dry_run: bool
    revision: str | None
    commit_url: str | None
    folder: Path | None
    files: list[str]
    specs: list[dict[str, Any]]
    deleted: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    created_commit: bool = True

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form (used by ``--json``).

        Example:
            >>> PublishResult("o/n", True, None, None, None, [], []).to_dict()["dry_run"]
            True
        """
        data = asdict(self)
        data["folder"] = str(self.folder) if self.folder is not None else None
        return data


def _spec_summaries(built: BuiltFolder, repo_id: str, revision: str | None) -> list[dict]:
    return [
        {
            "id": entry.id,
            "version": entry.version,
            "path": entry.spec_path,
            "verifier": entry.verifier,
            "sample_rows": entry.sample_rows,
            "uri": format_hf_uri(repo_id, revision, entry.spec_path) if revision else None,
        }
        for entry in built.manifest.specs
    ]


def _previous_state(api: HfApi, repo_id: str) -> tuple[str | None, set[str], Manifest | None]:
    """Head commit, files at head, and the manifest of the previous publish (if any)."""
    from huggingface_hub.hf_api import RepoFile

    with hub_errors(f"reading {repo_id}"):
        info = api.repo_info(repo_id=repo_id, repo_type=REPO_TYPE)
        head = getattr(info, "sha", None)
        if not head:
            return None, set(), None
        tree = {
            item.path
            for item in api.list_repo_tree(
                repo_id, recursive=True, revision=head, repo_type=REPO_TYPE
            )
            if isinstance(item, RepoFile)
        }
    if MANIFEST_NAME not in tree:
        return head, tree, None
    local = download_file(api, repo_id, head, MANIFEST_NAME)
    try:
        previous = read_manifest(Path(local), f"{repo_id}@{head[:12]}/{MANIFEST_NAME}")
    except HubError:
        previous = None  # a broken old manifest must not block a fresh publish
    return head, tree, previous


def publish(
    spec_paths: Sequence[str | Path],
    repo_id: str,
    *,
    private: bool = False,
    dry_run_dir: str | Path | None = None,
    token: str | None = None,
    endpoint: str | None = None,
    sample_limit: int = DEFAULT_SAMPLE_ROWS,
    license: str = DEFAULT_LICENSE,
    commit_message: str | None = None,
) -> PublishResult:
    """Publish ``spec_paths`` to the dataset repo ``repo_id`` (or only write the folder).

    With ``dry_run_dir`` the repo folder is written there and nothing is uploaded.
    Otherwise the repo is created if needed (``private`` applies to a new repo) and
    everything is uploaded in one commit. ``endpoint``/``token`` default to
    ``HF_ENDPOINT``/``HF_TOKEN``.

    Example:
        >>> r = publish(["task_specs/synth-count.yaml"], "org/tasks")  # doctest: +SKIP
        >>> r.specs[0]["uri"]  # doctest: +SKIP
        'hf://org/tasks@5f2c.../specs/synth-count.yaml'
    """
    check_repo_id(repo_id)
    if dry_run_dir is not None:
        built = build_repo_folder(
            spec_paths, dry_run_dir, repo_id=repo_id, sample_limit=sample_limit, license=license
        )
        return PublishResult(
            repo_id=repo_id,
            dry_run=True,
            revision=None,
            commit_url=None,
            folder=built.root,
            files=built.files,
            specs=_spec_summaries(built, repo_id, None),
            warnings=built.warnings,
            created_commit=False,
        )
    with tempfile.TemporaryDirectory(prefix="videorl-kit-publish-") as tmp:
        built = build_repo_folder(
            spec_paths,
            Path(tmp) / "repo",
            repo_id=repo_id,
            sample_limit=sample_limit,
            license=license,
        )
        return _upload(built, repo_id, private, token, endpoint, commit_message)


def _upload(
    built: BuiltFolder,
    repo_id: str,
    private: bool,
    token: str | None,
    endpoint: str | None,
    commit_message: str | None,
) -> PublishResult:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    api = make_api(endpoint, token)
    where = hub_endpoint(endpoint) or "the Hub"
    with hub_errors(f"creating dataset repo {repo_id} on {where}"):
        api.create_repo(repo_id, repo_type=REPO_TYPE, exist_ok=True, private=private)
    head, tree, previous = _previous_state(api, repo_id)
    new_files = set(built.files)
    stale = sorted(
        path
        for path in (set(previous.files) if previous else set())
        if path not in new_files and path in tree
    )
    operations: list[Any] = [
        CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(built.root / path))
        for path in built.files
    ]
    operations += [CommitOperationDelete(path_in_repo=path) for path in stale]
    summary = ", ".join(f"{e.id} v{e.version}" for e in built.manifest.specs)
    message = commit_message or f"videorl-kit publish: {summary}"
    with hub_errors(f"uploading to {repo_id} on {where}"):
        info = api.create_commit(
            repo_id,
            operations=operations,
            commit_message=message,
            commit_description=f"Published with videorl-kit {built.manifest.kit_version}.",
            repo_type=REPO_TYPE,
            parent_commit=head,
        )
    revision = info.oid
    return PublishResult(
        repo_id=repo_id,
        dry_run=False,
        revision=revision,
        commit_url=info.commit_url,
        folder=None,
        files=built.files,
        specs=_spec_summaries(built, repo_id, revision),
        deleted=stale,
        warnings=built.warnings,
        created_commit=revision != head,
    )
