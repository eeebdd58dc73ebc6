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

import importlib
from typing import TYPE_CHECKING, Any

# Names are imported on first use, so `import videorl_kit.hub.commands` (done by the CLI at
# start-up) does not pay for pyarrow, pydantic models and huggingface_hub.
_EXPORTS = {
    "HubError": "errors",
    "HubIntegrityError": "errors",
    "BuiltFolder": "folder",
    "build_repo_folder": "folder",
    "resolved_spec_data": "folder",
    "MANIFEST_NAME": "manifest",
    "Manifest": "manifest",
    "PublishResult": "publish",
    "publish": "publish",
    "PulledRepo": "pull",
    "pull": "pull",
    "HubUri": "refs",
    "RepoRef": "refs",
    "format_hf_uri": "refs",
    "parse_hf_uri": "refs",
    "parse_repo_ref": "refs",
    "ResolvedHubFile": "resolve",
    "resolve_hf_uri": "resolve",
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
