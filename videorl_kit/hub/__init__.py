"""Share task specs as Hugging Face Hub dataset repos: publish and pull.

A spec repo holds resolved specs (pure data), a dataset card whose ``configs`` point at a
small Parquet sample of each task, and a manifest with the sha256 of every file. Pulling
pins a commit sha, verifies every file and records the revision on each spec; nothing
from the Hub is ever executed. Resolving one ``hf://`` file (for ``include:`` and Hub data)
lives below the spec layer, in :mod:`videorl_kit.hf`; this package re-exports its names.

Example:
    >>> from videorl_kit.hub import parse_repo_ref
    >>> parse_repo_ref("my-org/video-tasks@main").revision
    'main'
    >>> result = publish(["task_specs/synth-count.yaml"], "my-org/video-tasks")  # doctest: +SKIP
    >>> pulled = pull(f"my-org/video-tasks@{result.revision}")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from videorl_kit.core.lazy import lazy_exports

# Names are imported on first use, so `import videorl_kit.hub.commands` (done by the CLI at
# start-up) does not pay for pyarrow, pydantic models and huggingface_hub.
_EXPORTS = {
    "HubError": "videorl_kit.hf.errors",
    "HubIntegrityError": "videorl_kit.hf.errors",
    "BuiltFolder": "videorl_kit.hub.folder",
    "build_repo_folder": "videorl_kit.hub.folder",
    "resolved_spec_data": "videorl_kit.hub.folder",
    "MANIFEST_NAME": "videorl_kit.hf.manifest",
    "Manifest": "videorl_kit.hf.manifest",
    "PublishResult": "videorl_kit.hub.publish",
    "publish": "videorl_kit.hub.publish",
    "PulledRepo": "videorl_kit.hub.pull",
    "pull": "videorl_kit.hub.pull",
    "HubUri": "videorl_kit.hf.refs",
    "RepoRef": "videorl_kit.hf.refs",
    "format_hf_uri": "videorl_kit.hf.refs",
    "parse_hf_uri": "videorl_kit.hf.refs",
    "parse_repo_ref": "videorl_kit.hf.refs",
    "ResolvedHubFile": "videorl_kit.hf.resolve",
    "resolve_hf_uri": "videorl_kit.hf.resolve",
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
    from videorl_kit.hf.errors import HubError, HubIntegrityError
    from videorl_kit.hf.manifest import MANIFEST_NAME, Manifest
    from videorl_kit.hf.refs import HubUri, RepoRef, format_hf_uri, parse_hf_uri, parse_repo_ref
    from videorl_kit.hf.resolve import ResolvedHubFile, resolve_hf_uri
    from videorl_kit.hub.folder import BuiltFolder, build_repo_folder, resolved_spec_data
    from videorl_kit.hub.publish import PublishResult, publish
    from videorl_kit.hub.pull import PulledRepo, pull

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
