"""The small sample manifest published next to each spec (``data/<spec-id>/sample.parquet``).

It holds the first N well-formed rows as the kit reads them, so the Hub's dataset viewer
and ``datasets.load_dataset`` show what the task looks like. It carries no media bytes,
only media paths relative to the spec's media root (whichever column holds them: ``videos``,
``images`` or the public sets' ``media`` column, whose modality is the row's ``data_type``),
and the gold as the verifier sees it (a public set's ``<answer>B</answer>`` is ``B``).

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

import json
import os
from pathlib import Path, PurePath
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from videorl_kit.spec.data import data_file, gold_text, iter_samples, media_root_of
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


def media_paths(resolved: list[Path], media_root: Path) -> list[str]:
    """Each media path relative to ``media_root``, normalised (``./a/../b.mp4`` is ``b.mp4``),
    in POSIX form; a path outside the root (a spec that allows absolute paths) stays absolute.

    Links are not followed: the path is the one the row names, not its target.

    Example:
        >>> media_paths([Path("mydata/../data/videos/a.mp4")], Path("mydata/../data"))
        ['videos/a.mp4']
        >>> media_paths([Path("/elsewhere/b.mp4")], Path("data"))
        ['/elsewhere/b.mp4']
    """
    root = os.path.abspath(media_root)
    out = []
    for path in resolved:
        full = os.path.abspath(path)
        relative = os.path.relpath(full, root)
        inside = relative != os.pardir and not relative.startswith(os.pardir + os.sep)
        out.append(PurePath(relative).as_posix() if inside else PurePath(full).as_posix())
    return out


def gold_value(value: Any) -> Any:
    """The gold as the manifest stores it: unwrapped from one ``<answer>…</answer>`` block (the
    public sets' ``solution``), structured values kept as they are.

    Example:
        >>> gold_value("<answer>D</answer>"), gold_value(3), gold_value({"time": [1, 2]})
        ('D', 3, {'time': [1, 2]})
    """
    return gold_text(value) if isinstance(value, str) else value


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
    media_root = media_root_of(spec, data_file(spec))
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
                "answer": answer_json(gold_value(raw.get(fields.answer, sample.answer))),
                "options": list(sample.options) if sample.options is not None else None,
                "videos": media_paths(list(sample.videos), media_root),
                "images": media_paths(list(sample.images), media_root),
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
