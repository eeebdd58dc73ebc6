"""The rows of a trajectory file (JSONL, JSON or Parquet), each with where it is.

Every row comes back as a :class:`RawRow` whose :attr:`~RawRow.where` is ``file:line``: the
line a JSONL row is on, the line a JSON array element starts on, and for Parquet the row's
number (1-based), so every error message can point at the row. A row that is not a JSON
object, or a line that is not JSON, is a :class:`RowError` naming its place.

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.json"
    >>> _ = path.write_text('[\\n  {"a": 1},\\n\\n  {"a": 2}\\n]\\n')
    >>> [(row.line, row.data) for row in read_rows(path)]
    [(2, {'a': 1}), (4, {'a': 2})]
    >>> _ = path.with_suffix(".jsonl").write_text('{"a": 1}\\n[2]\\n')
    >>> [row.error for row in read_rows(path.with_suffix(".jsonl"))]  # doctest: +ELLIPSIS
    [None, '...t.jsonl:2: a row must be a JSON object, not list']
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import VideoRLKitError

FORMATS = (".jsonl", ".json", ".parquet")
"""File suffixes :func:`read_rows` reads."""


class RowError(VideoRLKitError, ValueError):
    """A row that cannot be read or used; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class RawRow:
    """One row of a file: its data and where it is (``error``: why the row is unusable; its
    ``data`` is then empty)."""

    file: Path
    line: int
    data: dict[str, Any]
    error: str | None = None

    @property
    def where(self) -> str:
        """``file:line`` (Parquet: ``file:row-number``).

        Example:
            >>> RawRow(Path("a.jsonl"), 3, {}).where
            'a.jsonl:3'
        """
        return f"{self.file}:{self.line}"


def _object(file: Path, line: int, value: Any) -> RawRow:
    if not isinstance(value, dict):
        message = f"{file}:{line}: a row must be a JSON object, not {type(value).__name__}"
        return RawRow(file, line, {}, message)
    return RawRow(file, line, value)


def _jsonl(path: Path) -> Iterator[RawRow]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except RecursionError:
                yield RawRow(path, number, {}, f"{path}:{number}: not JSON (nested too deeply)")
                continue
            except ValueError as exc:
                yield RawRow(path, number, {}, f"{path}:{number}: not JSON ({exc})")
                continue
            yield _object(path, number, value)


def _json(path: Path) -> Iterator[RawRow]:
    text = path.read_text(encoding="utf-8")
    decoder = json.JSONDecoder()
    start = len(text) - len(text.lstrip())
    if not text[start:].startswith("["):
        try:
            value = json.loads(text)
        except RecursionError:
            raise RowError(f"{path}:1: not JSON (nested too deeply)") from None
        except ValueError as exc:
            raise RowError(f"{path}:{getattr(exc, 'lineno', 1)}: not JSON ({exc})") from None
        if isinstance(value, dict) and isinstance(value.get("data"), list):
            # {"data": [...]}: the layout of some public annotation files
            for index, item in enumerate(value["data"], start=1):
                yield _object(path, index, item)
            return
        raise RowError(f"{path}:1: a JSON file must hold an array of row objects")
    position = start + 1
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text):
            raise RowError(f"{path}:{text.count(chr(10)) + 1}: the JSON array is not closed")
        if text[position] == "]":
            return
        line = text.count("\n", 0, position) + 1
        try:
            value, position = decoder.raw_decode(text, position)
        except RecursionError:
            raise RowError(f"{path}:{line}: not JSON (nested too deeply)") from None
        except ValueError as exc:
            raise RowError(f"{path}:{line}: not JSON ({exc})") from None
        yield _object(path, line, value)


def _parquet(path: Path) -> Iterator[RawRow]:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:
        raise RowError(f"{path}:1: not a Parquet file ({exc})") from None
    number = 0
    for batch in parquet.iter_batches(batch_size=1024):
        for row in batch.to_pylist():
            number += 1
            yield _object(path, number, row)


def read_rows(path: str | Path) -> Iterator[RawRow]:
    """The rows of a ``.jsonl``, ``.json`` or ``.parquet`` file, in order.

    A JSONL line that is not JSON and a row that is not an object come back with their
    :attr:`RawRow.error` set (reading goes on); a missing file, another format or a JSON file
    that does not parse raise :class:`RowError`.

    Example:
        >>> next(read_rows("no-such.csv"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.train.offline.readers.RowError: no-such.csv: cannot read ...
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise RowError(
            f"{path}: cannot read {suffix or 'a file without suffix'}; "
            f"trajectory files are {', '.join(FORMATS)}"
        )
    if not path.is_file():
        raise RowError(f"{path}: no such file")
    reader = {".jsonl": _jsonl, ".json": _json, ".parquet": _parquet}[suffix]
    yield from reader(path)
