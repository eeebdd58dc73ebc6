"""Read public source sets in the layout their authors publish (a spec's ``data.layout``).

Some training sets are not row files: Charades-STA is a text file of ``video start
end##sentence`` lines, GoT-10k a folder per sequence with a box per frame, NExT-GQA a CSV of
questions beside a JSON of grounding spans. A spec names the layout, points ``data.path`` at
the file the set's authors publish, and each layout turns that file into rows in the kit's
columns (``data.fields``; unset fields keep EasyVideoR1's names), so no preprocessing script
sits between the download and ``build-cache``:

* ``charades_sta``: ``data.path`` is ``charades_sta_train.txt`` (or ``_test``); one row per
  line, the sentence as the question, ``{"time": [start, end]}`` seconds as the gold and
  ``<video>.mp4`` as the video (under ``media_root``, e.g. ``Charades_v1_480``). Extra
  columns: ``video``.
* ``got10k``: ``data.path`` is a split's ``list.txt`` (``GOT-10k/train/list.txt``); one row
  per listed sequence folder, whose frames are the video (``data.frames_fps`` is required:
  GoT-10k is annotated at 10 fps). The gold is one box per whole second, ``{"boxes":
  {"<second>": [x1, y1, x2, y2]}}`` in pixels of the original frame, read from
  ``groundtruth.txt`` (``x, y, w, h`` per frame: second ``k`` is frame ``k * fps``). A frame
  whose ``absence.label`` says 1, whose ``cover.label`` says 0 (no part visible) or whose box
  is empty gives no gold box: the tracking verifier scores the gold seconds only, so such a
  second neither rewards nor costs a prediction. The question is the object class from
  ``meta_info.ini`` (``object_class``); extra columns: ``sequence``, ``object_class``,
  ``frame_size`` (``[width, height]`` from its ``resolution``), ``initial_box`` (the first
  frame's box, for the prompt), ``n_frames``, ``absent_seconds``.
* ``nextgqa``: ``data.path`` is NExT-GQA's ``val.csv`` (or ``test.csv``; columns
  ``video_id, frame_count, width, height, question, answer, qid, type, a0..a4``, the answer
  as option text); one multiple-choice row per line, options ``A.``-``E.`` from ``a0..a4``,
  the letter of the option equal to ``answer`` as the gold. The video is
  ``<map_vid_vidorID[video_id]>.mp4`` when ``map_vid_vidorID.json`` lies beside the CSV
  (NExT-QA's ``NExTVideo/<folder>/<id>.mp4`` layout), else ``<video_id>.mp4``. The grounding
  spans of ``gsub_<split>.json`` beside it, when present, become the extra column
  ``evidence`` (``[[s, e], ...]`` seconds); other extra columns: ``video_id``, ``qid``,
  ``type``, ``duration``.

A line or sequence that cannot be read yields its reason as a string (a :class:`RowError`
carries the row's id when it has one; the data reader turns it into a skipped row naming the
line); a missing file raises :class:`UserError`. A GoT-10k sequence whose frame count differs
from its box count is skipped (its boxes would sit at the wrong times).

Example:
    >>> import pathlib, tempfile
    >>> from videorl_kit.spec.models import FieldMap
    >>> txt = pathlib.Path(tempfile.mkdtemp()) / "charades_sta_train.txt"
    >>> _ = txt.write_text("AO8RW 0.0 6.9##a person is putting a book on a shelf.\\n")
    >>> [(line, row["answer"]) for line, row in read_layout_rows("charades_sta", txt, FieldMap())]
    [(1, '{"time": [0.0, 6.9]}')]
"""

from __future__ import annotations

import configparser
import csv
import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from videorl_kit.core.errors import UserError, VideoRLKitError
from videorl_kit.core.frame_files import FRAME_SUFFIXES

if TYPE_CHECKING:
    from videorl_kit.spec.models import FieldMap

SOURCE_LAYOUTS: tuple[str, ...] = ("charades_sta", "got10k", "nextgqa")
"""The layouts :func:`read_layout_rows` reads (``data.layout`` values)."""

_NUMBER = r"[0-9]+(?:\.[0-9]*)?"
_CHARADES_LINE = re.compile(rf"^(\S+)\s+({_NUMBER})\s+({_NUMBER})\s*##(.*)$")
_LETTERS = "ABCDEFGHIJ"
_NEXTGQA_COLUMNS = ("video_id", "question", "answer", "qid", "a0")


def read_layout_rows(
    layout: str, path: Path, fields: FieldMap, *, frames_fps: float | None = None
) -> Iterator[tuple[int | None, dict[str, Any] | str]]:
    """Yield ``(line, row)`` for each entry of the source file ``path`` in ``layout``.

    ``line`` is the entry's 1-based line in ``path`` (a CSV's header is line 1); ``row`` is a
    dict in the kit's columns, or a string saying why the entry cannot be read. Raises
    :class:`UserError` when ``path`` (or a file every entry needs) is missing or unreadable.

    Example:
        >>> import pathlib, tempfile
        >>> from videorl_kit.spec.models import FieldMap
        >>> txt = pathlib.Path(tempfile.mkdtemp()) / "list.txt"
        >>> _ = txt.write_text("GOT-10k_Train_000001\\n")
        >>> next(read_layout_rows("got10k", txt, FieldMap(), frames_fps=10.0))[1]
        ... # doctest: +ELLIPSIS
        'sequence GOT-10k_Train_000001: ...groundtruth.txt not found'
    """
    if not path.is_file():
        raise UserError(f"{path}: data file not found")
    if layout == "charades_sta":
        yield from _charades_sta(path, fields)
    elif layout == "got10k":
        if frames_fps is None:
            raise UserError(f"{path}: layout got10k needs data.frames_fps (GoT-10k: 10)")
        yield from _got10k(path, fields, frames_fps)
    elif layout == "nextgqa":
        yield from _nextgqa(path, fields)
    else:
        raise UserError(f"unknown data.layout {layout!r} (valid: {', '.join(SOURCE_LAYOUTS)})")


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read data file: {exc}") from None


def _charades_sta(path: Path, fields: FieldMap) -> Iterator[tuple[int, dict[str, Any] | str]]:
    for number, text in enumerate(_lines(path), start=1):
        if not text.strip():
            continue
        match = _CHARADES_LINE.match(text.strip())
        if match is None:
            yield number, "not a Charades-STA line 'video start end##sentence'"
            continue
        video, start, end, sentence = match.groups()
        if float(end) < float(start):
            yield number, f"end {end} is before start {start}"
            continue
        if not sentence.strip():
            yield number, "no sentence after '##'"
            continue
        yield (
            number,
            {
                fields.question: sentence.strip(),
                fields.answer: json.dumps({"time": [float(start), float(end)]}),
                fields.videos: [f"{video}.mp4"],
                "video": video,
            },
        )


class RowError(str):
    """Why an entry cannot be read (a ``str``), with the id of its row when it has one.

    Example:
        >>> error = RowError("answer 'x' is none of the options", "4882821564_1")
        >>> str(error), error.row_id
        ("answer 'x' is none of the options", '4882821564_1')
    """

    row_id: str | None

    def __new__(cls, reason: str, row_id: str | None = None) -> RowError:
        error = super().__new__(cls, reason)
        error.row_id = row_id
        return error


class _SequenceError(VideoRLKitError, ValueError):
    pass


def _number_lines(path: Path, kind: type, name: str) -> list[Any]:
    values = []
    for number, text in enumerate(_lines(path), start=1):
        if not text.strip():
            continue
        try:
            values.append(kind(text.strip()))
        except ValueError:
            message = f"{name} line {number}: {text.strip()!r} is not a number"
            raise _SequenceError(message) from None
    return values


def _boxes(path: Path) -> list[tuple[float, float, float, float]]:
    boxes = []
    for number, text in enumerate(_lines(path), start=1):
        if not text.strip():
            continue
        parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
        try:
            x, y, w, h = (float(p) for p in parts)
        except ValueError:
            raise _SequenceError(
                f"groundtruth.txt line {number}: {text.strip()!r} is not 'x,y,w,h'"
            ) from None
        if not all(math.isfinite(v) for v in (x, y, w, h)):
            raise _SequenceError(f"groundtruth.txt line {number}: {text.strip()!r} is not finite")
        boxes.append((x, y, w, h))
    return boxes


_RESOLUTION = re.compile(r"^\(?\s*([0-9]+)\s*[,x]\s*([0-9]+)\s*\)?$")


def got10k_meta(folder: Path) -> dict[str, Any]:
    """``object_class`` and ``frame_size`` (``[width, height]``) from a sequence's
    ``meta_info.ini`` (None for what it does not say).

    Example:
        >>> import pathlib, tempfile
        >>> seq = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (seq / "meta_info.ini").write_text(
        ...     "[METAINFO]\\nobject_class: red panda\\nresolution: (1280, 720)\\n")
        >>> got10k_meta(seq)
        {'object_class': 'red panda', 'frame_size': [1280, 720]}
    """
    found: dict[str, Any] = {"object_class": None, "frame_size": None}
    meta = folder / "meta_info.ini"
    if not meta.is_file():
        return found
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(meta.read_text(encoding="utf-8", errors="replace"))
    except configparser.Error:
        return found
    for section in parser.sections():
        value = parser.get(section, "object_class", fallback=None)
        if value and value.strip() and found["object_class"] is None:
            found["object_class"] = value.strip()
        size = _RESOLUTION.match(parser.get(section, "resolution", fallback="").strip())
        if size and found["frame_size"] is None:
            found["frame_size"] = [int(size.group(1)), int(size.group(2))]
    return found


def _round(value: float) -> float | int:
    rounded = round(value, 2)
    return int(rounded) if rounded == int(rounded) else rounded


def got10k_sequence(
    folder: Path, frames_fps: float
) -> tuple[dict[str, list[float | int]], list[int], dict[str, Any]]:
    """``(gold boxes by second, absent seconds, facts)`` of one GoT-10k sequence folder.

    Example:
        >>> import pathlib, tempfile
        >>> seq = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (seq / "groundtruth.txt").write_text("10,20,30,40\\n" * 10 + "0,0,0,0\\n")
        >>> _ = (seq / "absence.label").write_text("0\\n" * 10 + "1\\n")
        >>> boxes, absent, facts = got10k_sequence(seq, 10.0)
        >>> boxes, absent, facts["initial_box"]
        ({'0': [10, 20, 40, 60]}, [1], [10, 20, 40, 60])
    """
    truth = folder / "groundtruth.txt"
    if not truth.is_file():
        raise _SequenceError(f"{truth} not found")
    boxes = _boxes(truth)
    if not boxes:
        raise _SequenceError("groundtruth.txt holds no box")
    absence = folder / "absence.label"
    cover = folder / "cover.label"
    absent = _number_lines(absence, int, "absence.label") if absence.is_file() else []
    covered = _number_lines(cover, int, "cover.label") if cover.is_file() else []
    for name, labels in (("absence.label", absent), ("cover.label", covered)):
        if labels and len(labels) != len(boxes):
            raise _SequenceError(
                f"{name} has {len(labels)} lines, groundtruth.txt {len(boxes)} boxes"
            )

    def visible(frame: int) -> bool:
        _, _, w, h = boxes[frame]
        gone = (absent and absent[frame] == 1) or (covered and covered[frame] == 0)
        return not gone and w > 0 and h > 0

    def corners(frame: int) -> list[float | int]:
        x, y, w, h = boxes[frame]
        return [_round(x), _round(y), _round(x + w), _round(y + h)]

    if not visible(0):
        raise _SequenceError("the object is not visible in the first frame")
    gold: dict[str, list[float | int]] = {}
    gone: list[int] = []
    second = 0
    while (frame := round(second * frames_fps)) < len(boxes):
        if visible(frame):
            gold[str(second)] = corners(frame)
        else:
            gone.append(second)
        second += 1
    facts = {"initial_box": corners(0), "n_frames": len(boxes)}
    return gold, gone, facts


def _got10k(
    path: Path, fields: FieldMap, frames_fps: float
) -> Iterator[tuple[int, dict[str, Any] | str]]:
    for number, text in enumerate(_lines(path), start=1):
        name = text.strip()
        if not name:
            continue
        folder = path.parent / name
        if "/" in name or "\\" in name or name.startswith("."):
            yield number, f"sequence {name!r} is not a folder name"
            continue
        try:
            gold, gone, facts = got10k_sequence(folder, frames_fps)
        except (_SequenceError, UserError) as exc:
            yield number, RowError(f"sequence {name}: {exc}", name)
            continue
        n_frames = _count_frames(folder)
        if n_frames != facts["n_frames"]:  # the boxes would sit at the wrong times
            reason = (
                f"sequence {name}: {n_frames} frames, groundtruth.txt {facts['n_frames']} boxes"
            )
            yield number, RowError(reason, name)
            continue
        meta = got10k_meta(folder)
        object_class = meta["object_class"]
        yield (
            number,
            {
                fields.id: name,
                fields.question: object_class or "the object in the first frame's box",
                fields.answer: json.dumps({"boxes": gold}),
                fields.videos: [name],
                "sequence": name,
                "object_class": object_class,
                "frame_size": meta["frame_size"],
                "absent_seconds": gone,
                **facts,
            },
        )


def _count_frames(folder: Path) -> int:
    try:
        with os.scandir(folder) as entries:
            return sum(
                1
                for entry in entries
                if Path(entry.name).suffix.lower() in FRAME_SUFFIXES
                and not entry.name.startswith(".")
            )
    except OSError:
        return 0


def _json_beside(path: Path, name: str) -> Any:
    other = path.parent / name
    if not other.is_file():
        return None
    try:
        return json.loads(other.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{other}: cannot read: {exc}") from None


def _nextgqa(path: Path, fields: FieldMap) -> Iterator[tuple[int, dict[str, Any] | str]]:
    split = path.stem
    spans = _json_beside(path, f"gsub_{split}.json") or {}
    folders = _json_beside(path, "map_vid_vidorID.json") or {}
    try:
        handle = path.open(encoding="utf-8", newline="")
    except OSError as exc:
        raise UserError(f"{path}: cannot read data file: {exc}") from None
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in _NEXTGQA_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise UserError(
                f"{path}: not a NExT-GQA CSV: no column {missing[0]!r} "
                f"(columns: {', '.join(reader.fieldnames or [])})"
            )
        options_columns = [c for c in (reader.fieldnames or []) if re.fullmatch(r"a[0-9]", c)]
        for record in reader:
            number = reader.line_num
            video_id, qid = record["video_id"].strip(), record["qid"].strip()
            texts = [(record.get(c) or "").strip() for c in options_columns]
            answer = (record["answer"] or "").strip()
            matches = [i for i, text in enumerate(texts) if text == answer]
            row_id = f"{video_id}_{qid}"
            if not matches:
                yield number, RowError(f"answer {answer!r} is none of the options {texts}", row_id)
                continue
            if len(matches) > 1:
                yield number, RowError(f"answer {answer!r} is more than one option", row_id)
                continue
            entry = spans.get(video_id) if isinstance(spans, dict) else None
            location = entry.get("location", {}) if isinstance(entry, dict) else {}
            folder = folders.get(video_id) if isinstance(folders, dict) else None
            video = f"{folder}.mp4" if isinstance(folder, str) else f"{video_id}.mp4"
            yield (
                number,
                {
                    fields.id: row_id,
                    fields.question: record["question"].strip(),
                    fields.answer: _LETTERS[matches[0]],
                    fields.options: [f"{_LETTERS[i]}. {t}" for i, t in enumerate(texts)],
                    fields.videos: [video],
                    "video_id": video_id,
                    "qid": qid,
                    "type": (record.get("type") or "").strip(),
                    "duration": entry.get("duration") if isinstance(entry, dict) else None,
                    "evidence": location.get(qid) if isinstance(location, dict) else None,
                },
            )
