"""The small sample manifest published next to each spec (``data/<spec-id>/sample.parquet``).

It holds the first N well-formed rows as the kit reads them, so the Hub's dataset viewer
and ``datasets.load_dataset`` show what the task looks like. It carries no media bytes,
only media paths relative to the spec's media root.

Example:
    >>> import pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "sample.parquet"
    >>> row = {"sample_id": "t-0", "row_index": 0, "question": "How many?", "answer": "3",
    ...        "options": None, "videos": ["v/0.mp4"], "images": [], "problem_type": "numerical"}
    >>> write_sample_parquet([row], out)
    >>> import pyarrow.parquet as pq
    >>> pq.read_table(out).column("answer").to_pylist()
    ['3']
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path, PurePath
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from videorl_kit.spec.data import iter_samples
from videorl_kit.spec.models import TaskSpec

#: Columns of the sample manifest; ``answer`` is JSON text (``json.loads`` gives the value).
SAMPLE_SCHEMA = pa.schema(
    [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("row_index", pa.int64(), nullable=False),
        pa.field("question", pa.string()),
        pa.field("answer", pa.string()),
        pa.field("options", pa.list_(pa.string())),
        pa.field("videos", pa.list_(pa.string())),
        pa.field("images", pa.list_(pa.string())),
        pa.field("problem_type", pa.string()),
    ]
)

DEFAULT_SAMPLE_ROWS = 20


def answer_json(value: Any) -> str:
    """The answer as JSON text; a string holding a JSON object/list is stored as that object.

    Example:
        >>> answer_json("B"), answer_json(3), answer_json('{"time": [1, 2]}')
        ('"B"', '3', '{"time": [1, 2]}')
    """
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            try:
                parsed = json.loads(stripped)
            except json.JSONDecodeError:
                parsed = None
            if isinstance(parsed, dict | list):
                value = parsed
    return json.dumps(value, ensure_ascii=False)


def _media_paths(raw_value: Any, resolved: list[Path], media_root: Path | None) -> list[str]:
    """Media paths as written in the row (relative to the media root when possible)."""
    if isinstance(raw_value, str):
        written = [raw_value]
    elif isinstance(raw_value, list):
        written = [str(v) for v in raw_value]
    else:
        written = [p.as_posix() for p in resolved]
    out = []
    for item in written:
        path = PurePath(item)
        if path.is_absolute() and media_root is not None:
            with contextlib.suppress(ValueError):
                item = Path(item).resolve().relative_to(media_root.resolve()).as_posix()
        out.append(item)
    return out


def sample_rows(spec: TaskSpec, limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` well-formed rows of ``spec``'s data, as sample-manifest rows.

    Raises whatever :func:`videorl_kit.spec.data.iter_samples` raises for unreadable data
    (a :class:`~videorl_kit.core.errors.UserError`). Malformed rows are skipped, not sampled.

    Example:
        >>> rows = sample_rows(spec, 5)  # doctest: +SKIP
        >>> sorted(rows[0])[:4]  # doctest: +SKIP
        ['answer', 'images', 'options', 'problem_type']
    """
    if limit <= 0:
        return []
    fields = spec.data.fields
    media_root = spec.resolve(spec.data.media_root) if spec.data.media_root else None
    rows: list[dict[str, Any]] = []
    for sample in iter_samples(spec):
        if sample.skip_reason:
            continue
        raw = sample.raw if isinstance(sample.raw, dict) else {}
        rows.append(
            {
                "sample_id": str(sample.sample_id),
                "row_index": int(sample.row_index),
                "question": sample.question,
                "answer": answer_json(raw.get(fields.answer, sample.answer)),
                "options": list(sample.options) if sample.options is not None else None,
                "videos": _media_paths(raw.get(fields.videos), list(sample.videos), media_root),
                "images": _media_paths(raw.get(fields.images), list(sample.images), media_root),
                "problem_type": str(sample.problem_type),
            }
        )
        if len(rows) >= limit:
            break
    return rows


def write_sample_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    """Write sample rows (possibly none) as Parquet with :data:`SAMPLE_SCHEMA`.

    Example:
        >>> import pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.parquet"
        >>> write_sample_parquet([], p)
        >>> pq.read_table(p).num_rows
        0
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=SAMPLE_SCHEMA)
    pq.write_table(table, path, compression="zstd")
