"""The per-task sample file: append-only while running, complete only once renamed.

While a task runs, every scored sample is appended to ``samples_<task>.jsonl.partial`` and
flushed to disk after each batch. An interrupted run leaves that file; the next run with the
same configuration reads it back (a torn last line is cut off), skips the samples already
there and appends the rest. When every sample is in, the records are written in data order
to ``samples_<task>.jsonl`` (a temporary file renamed into place) and the partial file is
removed: a ``samples_<task>.jsonl`` is therefore always complete, and the completion marker
is its existence.

Example:
    >>> import tempfile, pathlib
    >>> log = SampleLog(pathlib.Path(tempfile.mkdtemp()), "demo-task")
    >>> log.done_ids(), log.is_complete
    (set(), False)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from videorl_kit.core.errors import UserError
from videorl_kit.eval.records import SampleRecord


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, fsync'ed and renamed into place.

    Example:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "a.json"
        >>> atomic_write_text(target, "{}")
        >>> target.read_text()
        '{}'
    """
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


class SampleLog:
    """The sample file of one task in a run folder."""

    def __init__(self, run_dir: Path, task_id: str):
        self.task_id = task_id
        self.final = run_dir / f"samples_{task_id}.jsonl"
        self.partial = run_dir / f"samples_{task_id}.jsonl.partial"
        self._records: dict[str, SampleRecord] | None = None

    @property
    def is_complete(self) -> bool:
        """Whether the task finished (its final file exists)."""
        return self.final.exists()

    def records(self) -> dict[str, SampleRecord]:
        """Records already written, by sample id (final file, else the partial one)."""
        if self._records is None:
            source = self.final if self.final.exists() else self.partial
            self._records = self._read(source) if source.exists() else {}
        return self._records

    def done_ids(self) -> set[str]:
        """Ids of the samples already scored."""
        return set(self.records())

    def _read(self, path: Path) -> dict[str, SampleRecord]:
        records: dict[str, SampleRecord] = {}
        good_bytes = 0
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                complete = raw.endswith(b"\n")
                try:
                    record = SampleRecord.from_line(raw)
                except ValueError as exc:
                    if not complete and path == self.partial:
                        break  # the write that was cut off: drop it, keep what came before
                    raise UserError(
                        f"{path}:{number}: not a sample record ({str(exc).splitlines()[0]}); the "
                        "file was edited or written by another tool: remove it to re-run the task"
                    ) from None
                if record.task_id != self.task_id:
                    raise UserError(f"{path}:{number}: record of task {record.task_id!r}")
                records[record.sample_id] = record
                good_bytes += len(raw)
        if path == self.partial and good_bytes != path.stat().st_size:
            with path.open("r+b") as handle:
                handle.truncate(good_bytes)
        return records

    def append(self, records: Iterable[SampleRecord]) -> None:
        """Append records to the partial file and flush them to disk."""
        known = self.records()
        lines = []
        for record in records:
            known[record.sample_id] = record
            lines.append(record.to_line() + "\n")
        if not lines:
            return
        with self.partial.open("a", encoding="utf-8") as handle:
            handle.writelines(lines)
            handle.flush()
            os.fsync(handle.fileno())

    def finalize(self, order: list[str]) -> Path:
        """Write the records in ``order`` (sample ids) to the final file; drop the partial one."""
        known = self.records()
        missing = [sample_id for sample_id in order if sample_id not in known]
        if missing:
            raise RuntimeError(f"{self.task_id}: cannot finalize, {len(missing)} samples missing")
        text = "".join(known[sample_id].to_line() + "\n" for sample_id in order)
        atomic_write_text(self.final, text)
        self.partial.unlink(missing_ok=True)
        return self.final
