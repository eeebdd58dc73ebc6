"""The decode-once frame store: Lance tables, the cache builder and readers.

Importing this package is cheap (no Lance, no decoders): names are loaded on first use.

Example:
    >>> from videorl_kit.store import FrameStore, build_cache    # doctest: +SKIP
    >>> build_cache(["task_specs/synth-count.yaml"], "cache/")   # doctest: +SKIP
    >>> store = FrameStore.open("cache/")                        # doctest: +SKIP
    >>> store.get(store.keys()[0]).frames.dtype                  # doctest: +SKIP
    dtype('uint8')
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "FrameStore": "videorl_kit.store.reader",
    "CachedFrames": "videorl_kit.store.reader",
    "build_cache": "videorl_kit.store.builder",
    "BuildSummary": "videorl_kit.store.builder",
    "BuildProgress": "videorl_kit.store.builder",
    "CachedSampleDataset": "videorl_kit.store.torch_dataset",
    "store_status": "videorl_kit.store.verify",
    "verify_store": "videorl_kit.store.verify",
    "export_store": "videorl_kit.store.verify",
    "CACHE_SCHEMA_VERSION": "videorl_kit.store.schema",
    "cache_key": "videorl_kit.store.schema",
    "StoreError": "videorl_kit.store.errors",
    "StoreMismatchError": "videorl_kit.store.errors",
    "StoreIntegrityError": "videorl_kit.store.errors",
    "StoreNotFoundError": "videorl_kit.store.errors",
    "MissingKeyError": "videorl_kit.store.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'videorl_kit.store' has no attribute {name!r}")
    return getattr(import_module(module), name)
