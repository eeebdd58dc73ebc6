"""Share task specs as Hugging Face Hub dataset repos: publish, pull, ``hf://`` includes.

A spec repo holds resolved specs (pure data), a dataset card whose ``configs`` point at a
small Parquet sample of each task, and a manifest with the sha256 of every file. Pulling
pins a commit sha, verifies every file and records the revision on each spec; nothing
from the Hub is ever executed.

Example:
    >>> from videorl_kit.hub import parse_repo_ref
    >>> parse_repo_ref("my-org/video-tasks@main").revision
    'main'
    >>> result = publish(["task_specs/synth-count.yaml"], "my-org/video-tasks")  # doctest: +SKIP
    >>> pulled = pull(f"my-org/video-tasks@{result.revision}")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from videorl_kit.lazy import lazy_exports

# Names are imported on first use, so `import videorl_kit.hub.commands` (done by the CLI at
# start-up) does not pay for pyarrow, pydantic models and huggingface_hub.
_EXPORTS = {
    "HubError": "videorl_kit.hub.errors",
    "HubIntegrityError": "videorl_kit.hub.errors",
    "BuiltFolder": "videorl_kit.hub.folder",
    "build_repo_folder": "videorl_kit.hub.folder",
    "resolved_spec_data": "videorl_kit.hub.folder",
    "MANIFEST_NAME": "videorl_kit.hub.manifest",
    "Manifest": "videorl_kit.hub.manifest",
    "PublishResult": "videorl_kit.hub.publish",
    "publish": "videorl_kit.hub.publish",
    "PulledRepo": "videorl_kit.hub.pull",
    "pull": "videorl_kit.hub.pull",
    "HubUri": "videorl_kit.hub.refs",
    "RepoRef": "videorl_kit.hub.refs",
    "format_hf_uri": "videorl_kit.hub.refs",
    "parse_hf_uri": "videorl_kit.hub.refs",
    "parse_repo_ref": "videorl_kit.hub.refs",
    "ResolvedHubFile": "videorl_kit.hub.resolve",
    "resolve_hf_uri": "videorl_kit.hub.resolve",
}

__all__ = [
    "MANIFEST_NAME",
    "BuiltFolder",
    "HubError",
    "HubIntegrityError",
    "HubUri",
    "Manifest",
    "PublishResult",
    "PulledRepo",
    "RepoRef",
    "ResolvedHubFile",
    "build_repo_folder",
    "format_hf_uri",
    "parse_hf_uri",
    "parse_repo_ref",
    "publish",
    "pull",
    "resolve_hf_uri",
    "resolved_spec_data",
]

if TYPE_CHECKING:
    from videorl_kit.hub.errors import HubError, HubIntegrityError
    from videorl_kit.hub.folder import BuiltFolder, build_repo_folder, resolved_spec_data
    from videorl_kit.hub.manifest import MANIFEST_NAME, Manifest
    from videorl_kit.hub.publish import PublishResult, publish
    from videorl_kit.hub.pull import PulledRepo, pull
    from videorl_kit.hub.refs import HubUri, RepoRef, format_hf_uri, parse_hf_uri, parse_repo_ref
    from videorl_kit.hub.resolve import ResolvedHubFile, resolve_hf_uri

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
