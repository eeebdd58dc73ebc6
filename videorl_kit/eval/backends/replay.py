"""Score outputs produced elsewhere: prediction files, kit sample files, lmms-eval logs.

``--predictions`` takes one or more files or folders (a folder: every ``*.jsonl`` in it).
Each line is one of:

* ``{"id", "response"}`` (optionally ``"task"``: the spec id; it must be given when the same
  id exists in two of the evaluated tasks);
* a line of a kit run's ``samples_<task>.jsonl`` (``task_id``, ``sample_id``, ``response``
  and, for a judge-graded question, the stored ``judge`` judgement, which the replay reuses only
  when this run's judge made it, see :mod:`videorl_kit.eval.judge`);
* an lmms-eval log entry of ``[<date>_]samples_<lmms task>.jsonl``
  (:mod:`videorl_kit.eval.lmms_eval_logs`): the file name's lmms-eval task is an alias of a
  kit benchmark (``LMMS_EVAL_ALIASES``, the one table of them); ``doc_id`` is matched to that
  spec's row index (``doc_id: row_index``, checked against the logged ``target``) or the
  logged ``doc`` on ``doc_key``.

Everything is checked before anything is scored, and every problem is reported at once:
malformed lines, ids in no evaluated task, ambiguous ids, duplicates, lmms-eval logs that
cannot be matched to a spec's rows, and samples of a covered task without a prediction. An
evaluated task with no prediction at all is not an error: the run leaves it out and says so.
With ``--limit``, predictions for rows past the limit are ignored.

Example:
    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "p.jsonl"
    >>> _ = path.write_text(json.dumps({"id": "a", "response": "<answer>B</answer>"}) + "\\n")
    >>> [(line.number, line.task, line.id) for line in read_prediction_lines(path)]
    [(1, None, 'a')]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from videorl_kit.core.errors import UserError
from videorl_kit.eval.backends.base import Backend
from videorl_kit.eval.lmms_eval_logs import (
    LMMS_EVAL_ALIASES,
    LmmsLine,
    is_lmms_line,
    lmms_task_from_filename,
)
from videorl_kit.eval.records import content_hash
from videorl_kit.eval.requests import GenerationRequest
from videorl_kit.eval.results import ModelInfo
from videorl_kit.media.hashing import file_content_hash
from videorl_kit.spec.eval_section import LmmsEvalLink

if TYPE_CHECKING:
    from videorl_kit.eval.tasks import EvalTask

_SHOWN = 5


@dataclass(frozen=True)
class PredictionLine:
    """One prediction: where it was read, the task (None: find it by id), id and response."""

    number: int
    task: str | None
    id: str
    response: str
    judge: dict[str, Any] | None = None
    where: str = ""

    @property
    def at(self) -> str:
        """``line N`` (``file:N`` when several files are read)."""
        return f"{self.where}:{self.number}" if self.where else f"line {self.number}"


@dataclass
class _FileLines:
    """What one file holds: kit lines, lmms-eval entries (with the file's lmms-eval task)."""

    path: Path
    kit: list[PredictionLine] = field(default_factory=list)
    lmms: list[LmmsLine] = field(default_factory=list)
    lmms_task: str | None = None


def _read_file(path: Path, where: str, problems: list[str]) -> _FileLines:
    found = _FileLines(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"--predictions {path}: cannot read: {exc}") from None
    for number, raw in enumerate(text.splitlines(), start=1):
        at = f"{where}:{number}" if where else f"line {number}"
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"{at}: invalid JSON ({exc.msg})")
            continue
        except RecursionError:
            problems.append(f"{at}: invalid JSON (nested too deeply)")
            continue
        if not isinstance(item, dict):
            problems.append(f"{at}: not a JSON object")
            continue
        if is_lmms_line(item):
            try:
                found.lmms.append(LmmsLine.parse(item, number))
            except ValueError as exc:
                problems.append(f"{at}: {exc}")
            continue
        if "sample_id" in item and "task_id" in item:  # a line of a kit samples file
            sample_id, task = item.get("sample_id"), item.get("task_id")
        else:
            sample_id, task = item.get("id"), item.get("task")
        response, judge = item.get("response"), item.get("judge")
        if not isinstance(sample_id, str | int) or isinstance(sample_id, bool):
            problems.append(f"{at}: 'id' must be a string or an integer")
            continue
        if not isinstance(response, str):
            problems.append(f"{at}: 'response' must be a string")
            continue
        if task is not None and not isinstance(task, str):
            problems.append(f"{at}: 'task' must be a string")
            continue
        stored = judge if isinstance(judge, dict) else None
        found.kit.append(PredictionLine(number, task, str(sample_id), response, stored, where))
    if found.lmms:
        found.lmms_task = lmms_task_from_filename(path.name)
        if found.lmms_task is None:
            problems.append(
                f"{where or path}: lmms-eval log entries in a file not named "
                "[<date>_]samples_<task>.jsonl (the name says which lmms-eval task it logs)"
            )
    return found


def prediction_files(paths: Sequence[str | Path]) -> list[Path]:
    """The files ``--predictions`` names (a folder: its ``*.jsonl`` files, sorted).

    Example:
        >>> prediction_files(["/nonexistent.jsonl"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        videorl_kit.core.errors.UserError: --predictions /nonexistent.jsonl: file not found
    """
    files: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            inside = sorted(p for p in path.glob("*.jsonl") if p.is_file())
            if not inside:
                raise UserError(f"--predictions {path}: a folder with no *.jsonl file")
            files += inside
        elif path.is_file():
            files.append(path)
        else:
            raise UserError(f"--predictions {path}: file not found")
    return list(dict.fromkeys(files))


def read_prediction_lines(path: Path) -> list[PredictionLine]:
    """Parse every line of one predictions file in the kit's formats; a :class:`UserError`
    lists every malformed line (up to 5 shown)."""
    if not path.is_file():
        raise UserError(f"--predictions {path}: file not found")
    problems: list[str] = []
    found = _read_file(path, "", problems)
    if found.lmms and not problems:
        problems.append("lmms-eval log entries: replay them through run_eval (they need the specs)")
    _raise_malformed(str(path), problems)
    return found.kit


def _raise_malformed(label: str, problems: list[str]) -> None:
    if problems:
        shown = "; ".join(problems[:_SHOWN]) + (" ..." if len(problems) > _SHOWN else "")
        raise UserError(f"--predictions {label}: {len(problems)} malformed lines: {shown}")


def _listing(items: list[str]) -> str:
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return ", ".join(items[:_SHOWN]) + more


def _aliases(tasks: Sequence[EvalTask]) -> dict[str, EvalTask]:
    """lmms-eval task name -> evaluated task (through ``LMMS_EVAL_ALIASES``)."""
    by_id = {task.id: task for task in tasks}
    return {name: by_id[kit_id] for name, kit_id in LMMS_EVAL_ALIASES.items() if kit_id in by_id}


def lmms_lines(
    found: _FileLines, where: str, tasks: Sequence[EvalTask], *, limited: bool
) -> tuple[list[PredictionLine], list[str]]:
    """The lmms-eval entries of one file as predictions of the spec their task is an alias
    of, and every problem matching them (see the module docstring)."""
    name = found.lmms_task
    label = where or str(found.path)
    task = _aliases(tasks).get(name or "")
    if task is None:
        known = sorted(_aliases(tasks))
        return [], [
            f"{label}: lmms-eval task {name!r} is no alias of an evaluated spec "
            f"(aliases of the evaluated specs: {', '.join(known) or 'none'}; docs/eval.md lists "
            "them all)"
        ]
    link = task.section.lmms_eval or LmmsEvalLink()
    by_row = {s.row_index: s for s in task.samples}
    by_key = (
        {str(s.raw.get(link.doc_key)): s for s in task.samples if link.doc_key in s.raw}
        if link.doc_key
        else {}
    )
    lines: list[PredictionLine] = []
    problems: list[str] = []
    mismatched: list[str] = []
    for entry in found.lmms:
        at = f"{label}:{entry.number}"
        sample = None
        if entry.doc is not None and link.doc_key is not None:
            if link.doc_key not in entry.doc:
                problems.append(f"{at}: the logged doc has no {link.doc_key!r}")
                continue
            sample = by_key.get(str(entry.doc[link.doc_key]))
            if sample is None and not limited:
                problems.append(f"{at}: no row of {task.id} has {link.doc_key} = "
                                f"{entry.doc[link.doc_key]!r}")  # fmt: skip
        elif link.doc_id == "row_index":
            sample = by_row.get(entry.doc_id)
            if sample is None and not limited and entry.doc_id >= task.n_rows:
                problems.append(f"{at}: doc_id {entry.doc_id} is past {task.id}'s "
                                f"{task.n_rows} rows")  # fmt: skip
            if sample is not None and link.target and entry.target is not None:
                gold = sample.raw.get(link.target)
                if gold is not None and str(gold) != entry.target:
                    mismatched.append(
                        f"{at}: doc_id {entry.doc_id} logs target {entry.target!r}, "
                        f"row {entry.doc_id} has {gold!r}"
                    )
        else:
            return [], [
                f"{label}: lmms-eval's {name} logs cannot be matched to {task.id}'s rows: its "
                f"doc_id is not a row index of the spec's annotation file (another file, or "
                "another order) and the log carries no doc"
                + (f" with {link.doc_key!r}" if link.doc_key else "")
                + (f" ({link.note})" if link.note else "")
            ]
        if sample is not None:
            lines.append(
                PredictionLine(entry.number, task.id, sample.sample_id, entry.response, None, label)
            )
    if mismatched:
        problems.append(
            f"{len(mismatched)} lmms-eval docs whose target differs from the spec's gold, so "
            f"doc_id and the spec's rows do not line up ({_listing(mismatched)})"
        )
    return lines, problems


def match_predictions(
    path: Path | str, lines: list[PredictionLine], expected: dict[str, list[str]], *, limited: bool
) -> dict[tuple[str, str], PredictionLine]:
    """Map each evaluated ``(task, sample id)`` of a task the lines cover to its line, or
    raise listing every problem.

    ``expected`` is task id -> evaluated sample ids. A task no line names is left out (not
    covered); a covered task must have a prediction for every sample. ``limited``
    (``--limit`` given) tolerates predictions for ids past the evaluated rows.

    Example:
        >>> line = PredictionLine(1, None, "s1", "A")
        >>> found = match_predictions(Path("p.jsonl"), [line], {"t": ["s1"], "u": ["s2"]},
        ...     limited=False)
        >>> {key: line.response for key, line in found.items()}
        {('t', 's1'): 'A'}
    """
    owners: dict[str, list[str]] = {}
    for task, ids in expected.items():
        for sample_id in ids:
            owners.setdefault(sample_id, []).append(task)
    known = {task: set(ids) for task, ids in expected.items()}
    found: dict[tuple[str, str], PredictionLine] = {}
    unknown, ambiguous, duplicates = [], [], []
    for line in lines:
        if line.task is not None:
            if line.task not in expected:
                unknown.append(f"{line.at}: task {line.task!r}")
                continue
            key = (line.task, line.id)
            if line.id not in known[line.task]:
                if not limited:
                    unknown.append(f"{line.at}: {line.task}/{line.id}")
                continue
        else:
            tasks = owners.get(line.id, [])
            if len(tasks) > 1:
                ambiguous.append(f"{line.at}: {line.id!r} (in {', '.join(tasks)})")
                continue
            if not tasks:
                if not limited:
                    unknown.append(f"{line.at}: {line.id!r}")
                continue
            key = (tasks[0], line.id)
        if key in found:
            duplicates.append(f"{line.at}: {key[0]}/{key[1]} (first on {found[key].at})")
            continue
        found[key] = line
    covered = {task for task, _ in found}
    missing = [f"{t}/{s}" for t in covered for s in expected[t] if (t, s) not in found]
    problems = []
    if unknown:
        problems.append(f"{len(unknown)} unknown ids ({_listing(unknown)})")
    if ambiguous:
        problems.append(
            f'{len(ambiguous)} ids in several tasks, add a "task" field ({_listing(ambiguous)})'
        )
    if duplicates:
        problems.append(f"{len(duplicates)} duplicates ({_listing(duplicates)})")
    if missing:
        problems.append(f"{len(missing)} samples without a prediction ({_listing(missing)})")
    if problems:
        raise UserError(f"--predictions {path}: " + "; ".join(problems))
    return found


def read_predictions(
    paths: Sequence[str | Path], tasks: Sequence[EvalTask], *, limited: bool
) -> dict[tuple[str, str], PredictionLine]:
    """Every prediction of the files ``paths`` name, matched to the evaluated ``tasks``
    (see the module docstring; a :class:`UserError` lists every problem)."""
    files = prediction_files(paths)
    label = ", ".join(str(f) for f in files)
    several = len(files) > 1
    problems: list[str] = []
    read = [_read_file(path, str(path) if several else "", problems) for path in files]
    _raise_malformed(label, problems)
    lines: list[PredictionLine] = []
    for found in read:
        lines += found.kit
        if found.lmms:
            where = str(found.path) if several else ""
            matched, trouble = lmms_lines(found, where, tasks, limited=limited)
            lines += matched
            problems += trouble
    if problems:
        raise UserError(f"--predictions {label}: " + "; ".join(problems))
    expected = {t.id: [s.sample_id for s in t.samples] for t in tasks}
    return match_predictions(label, lines, expected, limited=limited)


class ReplayBackend(Backend):
    """Responses read from prediction files, checked against the evaluated samples.

    ``covered`` holds the tasks with predictions (the runner leaves the others out);
    ``stored_judgements`` the judgements replayed kit sample files carry, by task and id.
    """

    kind = "replay"
    needs_media = False

    def __init__(
        self, paths: str | Path | Sequence[str | Path], tasks: Sequence[EvalTask], *,
        limited: bool, label: str | None = None,
    ):  # fmt: skip
        given = [paths] if isinstance(paths, str | Path) else list(paths)
        self.files = prediction_files(given)
        found = read_predictions(self.files, tasks, limited=limited)
        self.responses = {key: line.response for key, line in found.items()}
        self.stored_judgements = {
            key: line.judge for key, line in found.items() if line.judge is not None
        }
        self.covered = list(dict.fromkeys(task for task, _ in found))
        self.label = label
        hashes = [file_content_hash(f) for f in self.files]
        # one file: its sha256 (as before); several: a hash over their names and hashes
        self.sha256 = (
            hashes[0]
            if len(hashes) == 1
            else content_hash([[f.name, h] for f, h in zip(self.files, hashes, strict=True)])
        )

    def info(self) -> ModelInfo:
        """The prediction files are the model: their content hash is the fingerprint."""
        return ModelInfo(
            backend="replay",
            path=", ".join(str(f.resolve()) for f in self.files),
            name=self.label,
            fingerprint=self.sha256,
            fingerprint_files=[f.name for f in self.files],
            details={"n_predictions": len(self.responses)},
        )

    def generate(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """The recorded response of each request."""
        return [self.responses[(r.task_id, r.sample_id)] for r in requests]
