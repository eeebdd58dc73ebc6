"""Inspecting a store: ``status`` (what is in it, including the specs and Hub revisions its
samples were built from), ``verify`` (re-decode and compare) and
``export`` (frames as image files plus a JSONL manifest, for trainers that need paths).

Example:
    >>> info = store_status(store_dir)  # the demo task's cache: two clips and two stills
    >>> info["frames"]["rows"], info["failures"]["rows"]
    (4, 0)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from videorl_kit.core.errors import UserError
from videorl_kit.core.out_folder import refuse_links
from videorl_kit.media.errors import MissingFileError
from videorl_kit.media.frame_folder import FRAME_FOLDER_DECODER, frame_folder_hash
from videorl_kit.media.hashing import file_content_hash, not_a_regular_file
from videorl_kit.store.errors import StoreIntegrityError
from videorl_kit.store.provenance import hub_files_of
from videorl_kit.store.reader import CachedFrames, FrameStore
from videorl_kit.store.row_digest import checked_cache_key
from videorl_kit.store.sample_check import (
    FrameSources,
    SampleProblem,
    check_store_samples,
    refuse,
)
from videorl_kit.store.schema import (
    CACHE_SCHEMA_VERSION,
    FAILURES_TABLE,
    FRAMES_TABLE,
    SAMPLES_TABLE,
    TABLE_NAMES,
)
from videorl_kit.store.tables import StoreTables
from videorl_kit.store.worker import DecodeTask, decode_media

if TYPE_CHECKING:
    from videorl_kit.spec.models import TaskSpec


def _folder_bytes(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(root, name))
    return total


# -- status ---------------------------------------------------------------------------------


def store_status(store_dir: str | Path, *, max_failures: int = 20) -> dict[str, Any]:
    """A JSON-ready description of the store: tables, versions, budgets, failures, samples.

    Example:
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> _ = StoreTables.create(d)
        >>> store_status(d)["frames"]["rows"]
        0
    """
    tables = StoreTables.open(store_dir)
    info: dict[str, Any] = {"store": str(tables.root), "cache_schema_version": CACHE_SCHEMA_VERSION}
    for name in TABLE_NAMES:
        dataset = tables.table(name)
        info[name] = {
            "rows": dataset.count_rows(),
            "version": int(dataset.version),
            "disk_bytes": _folder_bytes(Path(tables.uri(name))),
        }
    frames = tables.table(FRAMES_TABLE).to_table(
        columns=["budget_hash", "modality", "frames_shape", "visual_tokens", "source_uri",
                 "decode_warnings", "truncation"]
    )  # fmt: skip
    shapes = frames.column("frames_shape").to_pylist()
    info[FRAMES_TABLE]["frame_bytes"] = int(sum(int(np.prod(s)) for s in shapes))
    info[FRAMES_TABLE]["frames"] = int(sum(s[0] for s in shapes))
    info[FRAMES_TABLE]["by_modality"] = dict(Counter(frames.column("modality").to_pylist()))
    uris = frames.column("source_uri").to_pylist()

    def flagged(column: str, key: str) -> list[dict[str, Any]]:
        """``{"source_uri", key}`` for each row whose ``column`` is set, by source."""
        values = frames.column(column).to_pylist()
        rows = [{"source_uri": u, key: v} for u, v in zip(uris, values, strict=True) if v]
        return sorted(rows, key=lambda row: row["source_uri"])

    info[FRAMES_TABLE]["decode_warnings"] = flagged("decode_warnings", "warnings")
    info[FRAMES_TABLE]["truncated"] = flagged("truncation", "truncation")
    per_budget = Counter(frames.column("budget_hash").to_pylist())
    info["budgets"] = {
        digest: {**value, "rows": per_budget.get(digest, 0)}
        for digest, value in sorted(tables.budgets().items())
    }
    failures = tables.table(FAILURES_TABLE).to_table(
        columns=["source_uri", "error_class", "message", "attempts", "last_failed_at"]
    )
    info[FAILURES_TABLE]["by_error_class"] = dict(
        Counter(failures.column("error_class").to_pylist())
    )
    listed = sorted(failures.to_pylist(), key=lambda r: r["source_uri"])[:max_failures]
    info[FAILURES_TABLE]["items"] = [
        {**r, "last_failed_at": r["last_failed_at"].isoformat()} for r in listed
    ]
    samples = tables.table(SAMPLES_TABLE).to_table(columns=["task_id", "status"])
    by_task: dict[str, Counter[str]] = {}
    for task_id, status in zip(
        samples.column("task_id").to_pylist(), samples.column("status").to_pylist(), strict=True
    ):
        by_task.setdefault(task_id, Counter())[status] += 1
    info[SAMPLES_TABLE]["by_task"] = {t: dict(c) for t, c in sorted(by_task.items())}
    info["specs"] = spec_sources(tables)
    return info


_SOURCE_COLUMNS = [
    "task_id", "spec_version", "spec_file", "spec_sha256", "spec_hub_files", "data_repo",
    "data_revision", "data_file", "data_sha256",
]  # fmt: skip


def spec_sources(tables: StoreTables) -> list[dict[str, Any]]:
    """The specs the ``samples`` rows were built from, with the Hub revisions they used.

    One entry per distinct (task, spec content, data revision), sorted by task id:
    ``task_id``, ``spec_version``, ``spec_file``, ``spec_sha256``, ``hub_files`` (the Hub
    files of the spec with their commit revisions), ``data`` (Hub data: repo, commit
    revision, file, sha256; None for local data) and ``rows``.

    Example:
        >>> import tempfile
        >>> spec_sources(StoreTables.create(tempfile.mkdtemp()))
        []
    """
    table = tables.table(SAMPLES_TABLE).to_table(columns=_SOURCE_COLUMNS)
    groups: Counter[tuple[Any, ...]] = Counter(
        tuple(row[c] for c in _SOURCE_COLUMNS) for row in table.to_pylist()
    )
    found = []
    for values, rows in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        row = dict(zip(_SOURCE_COLUMNS, values, strict=True))
        data = None
        if row["data_repo"] is not None:
            data = {
                "repo": row["data_repo"],
                "revision": row["data_revision"],
                "file": row["data_file"],
                "sha256": row["data_sha256"],
            }
        found.append(
            {
                "task_id": row["task_id"],
                "spec_version": row["spec_version"],
                "spec_file": row["spec_file"],
                "spec_sha256": row["spec_sha256"],
                "hub_files": hub_files_of(row["spec_hub_files"]),
                "data": data,
                "rows": rows,
            }
        )
    return found


# -- verify ---------------------------------------------------------------------------------

VerifyStatus = Literal[
    "ok", "mismatch", "corrupt", "source_missing", "source_changed", "unverifiable", "error"
]
"""``unverifiable``: the source cannot be read safely (a FIFO or device such as ``/dev/zero``
would block or never end), so the row is reported with the reason and not re-decoded."""


@dataclass
class RowCheck:
    """The verification of one frames row."""

    cache_key: str
    source_uri: str
    status: VerifyStatus
    detail: str = ""
    max_abs_diff: int | None = None


@dataclass
class VerifyReport:
    """Outcome of ``cache verify``: every checked row and a count per status."""

    store: str
    checked: list[RowCheck] = field(default_factory=list)
    tolerance: int = 0
    samples: list[SampleProblem] = field(default_factory=list)
    n_samples_checked: int = 0
    unchecked_tasks: dict[str, str] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        """Rows per status."""
        return dict(Counter(c.status for c in self.checked))

    @property
    def ok(self) -> bool:
        """True when no frames row is mismatched, corrupt or in error (rows whose source is
        missing, changed or unreadable are reported, not failed) and every checked sample
        agrees with its spec's data row."""
        frames_ok = all(
            c.status in ("ok", "source_missing", "source_changed", "unverifiable")
            for c in self.checked
        )
        return frames_ok and not self.samples

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "store": self.store,
            "tolerance": self.tolerance,
            "n_checked": len(self.checked),
            "counts": self.counts,
            "ok": self.ok,
            "rows": [c.__dict__ for c in self.checked],
            "n_samples_checked": self.n_samples_checked,
            "samples": [p.as_dict() for p in self.samples],
            "unchecked_tasks": self.unchecked_tasks,
        }


def _source_hash(cached: CachedFrames) -> str:
    """The content hash of a cached row's source now (a frame folder's at its cached fps)."""
    if cached.decoder == FRAME_FOLDER_DECODER:
        return frame_folder_hash(cached.source_uri, cached.source_fps)
    return file_content_hash(cached.source_uri)


def _redecode(cached: CachedFrames) -> Any:
    task = DecodeTask(
        source_uri=cached.source_uri,
        modality=cached.modality,
        budget=cached.budget,
        budget_hash=cached.budget_hash,
        content_hash=cached.source_content_hash,
        cache_key=cached.cache_key,
        decoder=cached.decoder,
        decoder_version=cached.decoder_version,
        frames_fps=cached.source_fps if cached.decoder == FRAME_FOLDER_DECODER else None,
    )
    return decode_media(task)


def check_row(
    cached: CachedFrames,
    *,
    tolerance: int = 0,
    redecode: Callable[[CachedFrames], Any] = _redecode,
) -> RowCheck:
    """Check one row: stored bytes against their hash, then a fresh decode against them.

    ``tolerance`` is the largest accepted absolute pixel difference (0 = bit-exact).

    Example:
        >>> check_row(FrameStore.open(store_dir).get(key)).status
        'ok'
    """

    def result(status: VerifyStatus, detail: str = "", diff: int | None = None) -> RowCheck:
        return RowCheck(cached.cache_key, cached.source_uri, status, detail, diff)

    if hashlib.sha256(cached.frames.tobytes()).hexdigest() != cached.frames_sha256:
        return result("corrupt", "stored frames do not match their sha256")
    if not os.path.exists(cached.source_uri):
        return result("source_missing", "the source file is gone; cannot re-decode")
    special = not_a_regular_file(
        cached.source_uri, folder_ok=cached.decoder == FRAME_FOLDER_DECODER
    )
    if special is not None:  # the check build-cache applies to the same paths
        return result("unverifiable", f"the source {special}; not read")
    try:
        if _source_hash(cached) != cached.source_content_hash:
            return result("source_changed", "the source's content hash differs from the cached one")
        fresh = redecode(cached)
    except MissingFileError as exc:  # swapped for a FIFO or device, or removed, since the check
        return result("unverifiable", f"the source cannot be read: {exc.reason}")
    except Exception as exc:
        return result("error", f"re-decode failed: {type(exc).__name__}: {exc}")
    frames = np.asarray(fresh.frames)
    if frames.shape != cached.frames.shape:
        return result("mismatch", f"shape {frames.shape} != cached {cached.frames.shape}")
    if cached.modality == "video":
        if [int(i) for i in fresh.frame_indices] != list(cached.frame_indices):
            return result("mismatch", "frame indices differ")
        if not np.allclose(fresh.timestamps_s, cached.timestamps_s, atol=1e-6):
            return result("mismatch", "timestamps differ")
    diff = int(np.abs(frames.astype(np.int16) - cached.frames.astype(np.int16)).max(initial=0))
    if diff > tolerance:
        return result("mismatch", f"max pixel difference {diff} > tolerance {tolerance}", diff)
    return result("ok", "bit-exact" if diff == 0 else f"max pixel difference {diff}", diff)


def verify_store(
    store_dir: str | Path,
    *,
    sample: int | None = 8,
    seed: int = 0,
    tolerance: int = 0,
    keys: Sequence[str] | None = None,
    specs: Sequence[TaskSpec] = (),
) -> VerifyReport:
    """Re-decode ``sample`` random rows (all rows when None) and compare them with the cache,
    and check every ready sample against its spec's data row
    (:func:`~videorl_kit.store.sample_check.check_store_samples`: ``specs``, else the spec
    files the store recorded).

    Example:
        >>> report = verify_store(store_dir, sample=2)
        >>> report.counts, report.samples
        ({'ok': 2}, [])
    """
    tables = StoreTables.open(store_dir)
    store = FrameStore(tables)
    samples = check_store_samples(tables, FrameSources.of(store.metadata()), specs)
    chosen = list(keys) if keys is not None else store.keys()
    if keys is None and sample is not None and sample < len(chosen):
        # drawn from the sorted keys: the same seed picks the same rows however the table
        # is laid out (updates and compaction reorder rows, not keys)
        chosen = sorted(random.Random(seed).sample(sorted(chosen), sample))
    report = VerifyReport(
        store=str(store.root), tolerance=tolerance, samples=samples.problems,
        n_samples_checked=samples.n_checked, unchecked_tasks=samples.unchecked_tasks,
    )  # fmt: skip
    sources: dict[str, str] | None = None
    for key in chosen:
        try:
            cached = store.get(key)
        except StoreIntegrityError as exc:  # the stored cell is damaged
            if sources is None:
                meta = store.metadata()
                sources = dict(
                    zip(
                        meta.column("cache_key").to_pylist(),
                        meta.column("source_uri").to_pylist(),
                        strict=True,
                    )
                )
            report.checked.append(RowCheck(key, sources.get(key, ""), "corrupt", exc.problem))
            continue
        report.checked.append(check_row(cached, tolerance=tolerance))
    return report


# -- export ---------------------------------------------------------------------------------


@dataclass
class ExportReport:
    """What ``cache export`` wrote."""

    out: str
    n_items: int = 0
    n_files: int = 0
    n_samples: int = 0
    manifest: str = ""
    samples_manifest: str = ""
    unchecked_tasks: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return dict(self.__dict__)


def _samples_agree_with_specs(
    store_dir: str | Path, store: FrameStore, specs: Sequence[TaskSpec]
) -> dict[str, str]:
    """Refuse (:class:`StoreMismatchError`) a store whose samples disagree with their specs;
    return the tasks that could not be checked, with why."""
    checked = check_store_samples(StoreTables.open(store_dir), FrameSources.of(store.metadata()),
                                  specs)  # fmt: skip
    refuse(store.root, checked.problems)
    return checked.unchecked_tasks


def _write_image(frame: np.ndarray, path: Path, fmt: str, quality: int) -> None:
    try:
        from PIL import Image
    except ImportError:
        raise UserError("cache export needs Pillow: pip install pillow") from None
    tmp = path.with_name(path.name + ".tmp")
    image = Image.fromarray(np.ascontiguousarray(frame))
    if fmt == "jpg":
        image.save(tmp, format="JPEG", quality=quality)
    else:
        image.save(tmp, format="PNG")
    os.replace(tmp, path)


def export_store(
    store_dir: str | Path,
    out_dir: str | Path,
    *,
    fmt: Literal["jpg", "png"] = "jpg",
    quality: int = 95,
    keys: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    specs: Sequence[TaskSpec] = (),
) -> ExportReport:
    """Write every cached item's frames as image files plus ``manifest.jsonl``.

    ``samples.jsonl`` carries each sample's gold for trainers outside the kit, so the store's
    samples are first checked against their specs (``specs``, else the recorded spec files;
    :func:`~videorl_kit.store.sample_check.check_store_samples`): a disagreement refuses the
    export before anything is written; tasks that could not be checked are listed in the
    report's ``unchecked_tasks``.

    Layout: ``<out>/frames/<cache_key>/<i:06d>.<fmt>``; ``manifest.jsonl`` has one line per
    item with the relative frame paths and timing metadata (frame indices, timestamps,
    source fps and frame count, duration, size, visual tokens, ``video_metadata``);
    ``samples.jsonl`` lists the ready samples with the frame paths of their media.
    Manifests are written to a temporary name and renamed, so a reader never sees half.

    Example:
        >>> import tempfile
        >>> export_store(store_dir, tempfile.mkdtemp(), fmt="png").n_items
        4
    """
    if fmt not in ("jpg", "png"):
        raise UserError(f"--format must be jpg or png, not {fmt!r}")
    store = FrameStore.open(store_dir)
    unchecked = _samples_agree_with_specs(store_dir, store, specs)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; give a folder for the export")
    refuse_links(out, f"--out {out}")
    (out / "frames").mkdir(parents=True, exist_ok=True)
    report = ExportReport(out=str(out), unchecked_tasks=unchecked)
    chosen = list(keys) if keys is not None else store.keys()
    paths_of: dict[str, list[str]] = {}
    manifest = out / "manifest.jsonl"
    tmp_manifest = manifest.with_name(manifest.name + ".tmp")
    with tmp_manifest.open("w", encoding="utf-8") as handle:
        for start in range(0, len(chosen), 16):
            for cached in store.get_many(chosen[start : start + 16]):
                name = checked_cache_key(cached.cache_key)  # a file name: never a path
                folder = out / "frames" / name
                folder.mkdir(parents=True, exist_ok=True)
                files = []
                for index, frame in enumerate(cached.frames):
                    relative = f"frames/{name}/{index:06d}.{fmt}"
                    _write_image(frame, out / relative, fmt, quality)
                    files.append(relative)
                paths_of[cached.cache_key] = files
                report.n_files += len(files)
                report.n_items += 1
                line = {
                    "cache_key": cached.cache_key,
                    "source_uri": cached.source_uri,
                    "modality": cached.modality,
                    "budget_hash": cached.budget_hash,
                    "budget": cached.budget,
                    "frame_files": files,
                    "frame_indices": cached.frame_indices,
                    "timestamps_s": cached.timestamps_s,
                    "source_fps": cached.source_fps,
                    "source_frames": cached.source_frames,
                    "duration_s": cached.duration_s,
                    "height": cached.height,
                    "width": cached.width,
                    "patch": cached.patch,
                    "temporal_patch": cached.temporal_patch,
                    "visual_tokens": cached.visual_tokens,
                    "video_metadata": cached.video_metadata(),
                }
                handle.write(json.dumps(line, sort_keys=True) + "\n")
            if progress is not None:
                progress(min(start + 16, len(chosen)), len(chosen))
    os.replace(tmp_manifest, manifest)
    report.manifest = str(manifest)
    report.samples_manifest, report.n_samples = _export_samples(store_dir, out, paths_of)
    return report


def _export_samples(
    store_dir: str | Path, out: Path, paths_of: dict[str, list[str]]
) -> tuple[str, int]:
    tables = StoreTables.open(store_dir)
    rows = tables.table(SAMPLES_TABLE).to_table(filter="status = 'ready'").to_pylist()
    path = out / "samples.jsonl"
    tmp = path.with_name(path.name + ".tmp")
    written = 0
    with tmp.open("w", encoding="utf-8") as handle:
        for row in sorted(rows, key=lambda r: (r["task_id"], r["sample_id"])):
            keys = list(row["video_keys"]) + list(row["image_keys"])
            if any(k not in paths_of for k in keys):
                continue  # media not exported (a subset was asked for)
            line = {
                "task_id": row["task_id"],
                "sample_id": row["sample_id"],
                "problem_type": row["problem_type"],
                "prompt": row["prompt"],
                "system_prompt": row["system_prompt"],
                "answer": row["answer"],
                "options": row["options"],
                "videos": [paths_of[k] for k in row["video_keys"]],
                "video_keys": row["video_keys"],
                "images": [paths_of[k][0] for k in row["image_keys"]],
                "image_keys": row["image_keys"],
                "prompt_tokens_estimate": row["prompt_tokens_estimate"],
            }
            handle.write(json.dumps(line, sort_keys=True) + "\n")
            written += 1
    os.replace(tmp, path)
    return str(path), written
