"""The decode-once frame store: Lance tables, the cache builder and readers.

Importing this package is cheap (no Lance, no decoders): names are loaded on first use.

Example:
    >>> import tempfile
    >>> from videorl_kit.store import FrameStore, build_cache
    >>> from videorl_kit.synth import write_demo_task
    >>> folder = tempfile.mkdtemp()
    >>> summary = build_cache([write_demo_task(folder, n_per_task=1)], f"{folder}/cache")
    >>> summary.n_input, summary.n_ok, summary.n_failed, summary.n_skipped
    (2, 2, 0, 0)
    >>> store = FrameStore.open(f"{folder}/cache")
    >>> cached = store.get(store.keys()[0])
    >>> cached.frames.dtype, cached.frames.ndim, cached.modality in ("video", "image")
    (dtype('uint8'), 4, True)
    >>> build_cache([f"{folder}/demo.yaml"], f"{folder}/cache").n_already_cached  # decode once
    2
"""

from __future__ import annotations

from videorl_kit.core.lazy import lazy_exports

_EXPORTS = {
    "FrameStore": "videorl_kit.store.reader",
    "CachedFrames": "videorl_kit.store.reader",
    "build_cache": "videorl_kit.store.builder",
    "build_frames": "videorl_kit.store.builder",
    "BuildConfig": "videorl_kit.store.build_config",
    "BuildSummary": "videorl_kit.store.build_summary",
    "BuildProgress": "videorl_kit.store.build_summary",
    "CachedSampleDataset": "videorl_kit.store.torch_dataset",
    "collate_samples": "videorl_kit.store.collate",
    "read_trajectories": "videorl_kit.store.trajectories",
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
