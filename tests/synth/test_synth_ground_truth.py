"""Every stored answer is recomputed from the decoded pixels and must agree.

The tests read the question text the way a model would (regexes over the fixed
templates), decode the written mp4/PNG, find coloured shapes by colour and connectivity,
and derive the answer from what is on screen: counts from connected components, spans
from the frames in which a colour is present, boxes from the pixels, directions and
distances from component centres, text by matching the rendered glyphs.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from tests.synth.pixels import (
    Clip,
    Component,
    Frame,
    direction,
    distance,
    iou,
    read_png,
)
from videorl_kit.synth import TASKS, build_item, generate_suite
from videorl_kit.synth.palette import (
    BACKGROUND,
    COLOUR_NAMES,
    COLOURS,
    TEXT_ON_BACKGROUND,
    label_ink,
)
from videorl_kit.synth.raster import text_alpha

FPS = 8
NAME = r"(?P<colour>\w+) (?P<kind>circle|square|triangle)"


@pytest.fixture(
    scope="module", params=[0, pytest.param(1, marks=pytest.mark.slow)], ids=["seed0", "seed1"]
)
def generated(request, suite, tmp_path_factory) -> tuple[Path, dict[str, list[dict]], int]:
    """The shared seed-0 suite, and (slow) a second suite generated with seed 1."""
    seed = request.param
    if seed == 0:
        out = suite[1]
    else:
        out = tmp_path_factory.mktemp("synth-seed1")
        generate_suite(
            out, n_per_task=4, seed=seed, tasks=[t.name for t in TASKS if t.data_type != "text"]
        )
    rows = {
        path.stem: [json.loads(line) for line in path.read_text().splitlines()]
        for path in sorted(out.glob("*.jsonl"))
    }
    return out, rows, seed


@pytest.fixture(scope="module")
def suite_rows_of(generated) -> dict[str, list[dict]]:
    return generated[1]


@pytest.fixture(scope="module")
def clip_of(generated):
    out = generated[0]

    @cache
    def load(relative: str) -> Clip:
        return Clip.from_mp4(out / relative, fps=FPS)

    return load


def _option_text(row: dict) -> str:
    letter = row["answer"]
    return next(o.split(". ", 1)[1] for o in row["options"] if o.startswith(f"{letter}. "))


def _first_last(clip: Clip, colour: str) -> tuple[Component, Component, int, int]:
    frames = clip.frames_with(colour)
    assert frames, f"no {colour} shape on screen"
    return clip.only(frames[0], colour), clip.only(frames[-1], colour), frames[0], frames[-1]


def _assert_box_matches_pixels(frame: Frame, colour: str, box: list[int]) -> None:
    """The gold box is tight around the colour's pixels: same box, nothing outside it."""
    (component,) = frame.shapes(colour)
    assert iou(component.box, box) >= 0.9, (component.box, box)
    assert all(abs(a - b) <= 1 for a, b in zip(component.box, box, strict=True)), (
        component.box,
        box,
    )
    mask = frame.mask(colour)
    x1, y1, x2, y2 = box
    inside = mask[y1:y2, x1:x2].mean()
    assert inside >= 0.45, f"only {inside:.0%} of the gold box is {colour}"
    outside = mask.sum() - mask[max(0, y1 - 2) : y2 + 2, max(0, x1 - 2) : x2 + 2].sum()
    assert outside == 0, f"{outside} {colour} pixels outside the gold box"


def _visible_frames(clip: Clip, colour: str) -> list[int]:
    frames = clip.frames_with(colour)
    assert frames == list(range(frames[0], frames[-1] + 1)), "visibility is not one span"
    return frames


def test_multiple_choice(suite_rows_of, clip_of) -> None:
    for row in suite_rows_of["multiple_choice"]:
        clip = clip_of(row["videos"][0])
        if row["problem"] == "What colour is the shape that appears last?":
            first_seen = {c: clip.frames_with(c) for c in COLOUR_NAMES}
            first_seen = {c: frames[0] for c, frames in first_seen.items() if frames}
            latest = max(first_seen.values())
            (last_colour,) = [c for c, f in first_seen.items() if f == latest]
            assert _option_text(row) == last_colour.capitalize()
        else:
            match = re.fullmatch(rf"In which direction does the {NAME} move\?", row["problem"])
            assert match, row["problem"]
            first, last, _, _ = _first_last(clip, match["colour"])
            assert first.kind == last.kind == match["kind"]
            assert _option_text(row) == direction(first, last).capitalize()


def test_count(suite_rows_of, clip_of) -> None:
    for row in suite_rows_of["count"]:
        clip = clip_of(row["videos"][0])
        answer = int(row["answer"])
        if match := re.fullmatch(r"How many shapes are visible at (\d+) s\?", row["problem"]):
            assert len(clip.at(int(match[1])).shapes()) == answer
        elif match := re.fullmatch(
            r"How many (\w+) shapes appear during the video\?", row["problem"]
        ):
            assert clip.appearances(match[1]) == answer
        else:
            assert row["problem"].startswith("How many shapes are shown in total")
            assert clip.appearances() == answer


def test_regression(suite_rows_of, clip_of) -> None:
    for row in suite_rows_of["regression"]:
        clip = clip_of(row["videos"][0])
        match = re.search(NAME, row["problem"])
        first, last, start, end = _first_last(clip, match["colour"])
        answer = float(row["answer"])
        if row["problem"].startswith("How many pixels"):
            assert distance(first, last) == pytest.approx(answer, abs=1.5)
        elif row["problem"].startswith(f"The {match[0]} moves"):
            speed = distance(first, last) / ((end - start) / FPS)
            assert speed == pytest.approx(answer, abs=1.5)
        else:
            assert len(_visible_frames(clip, match["colour"])) / FPS == answer


def test_boolean(suite_rows_of, clip_of) -> None:
    for row in suite_rows_of["boolean"]:
        clip = clip_of(row["videos"][0])
        if match := re.fullmatch(rf"Does an? {NAME} appear in the video\?", row["problem"]):
            seen = bool(clip.frames_with(match["colour"], match["kind"]))
        else:
            match = re.fullmatch(rf"Is the {NAME} visible at (?P<t>\d+) s\?", row["problem"])
            seen = any(
                c.kind == match["kind"] for c in clip.at(int(match["t"])).shapes(match["colour"])
            )
        assert row["answer"] == ("Yes" if seen else "No"), row["problem"]


def test_temporal(suite_rows_of, clip_of) -> None:
    for row in suite_rows_of["temporal"]:
        clip = clip_of(row["videos"][0])
        match = re.match(rf"During which time span is the {NAME} visible\?", row["problem"])
        frames = _visible_frames(clip, match["colour"])
        start, end = json.loads(row["answer"])["time"]
        assert [start, end] == [frames[0] / FPS, (frames[-1] + 1) / FPS]
        # frames inside [start, end) show it, every other frame does not
        assert frames == [i for i in range(len(clip.frames)) if start <= clip.times[i] < end]


def test_spatial(suite_rows_of, clip_of) -> None:
    for row in suite_rows_of["spatial"]:
        clip = clip_of(row["videos"][0])
        match = re.match(
            rf"What is the bounding box of the {NAME} at (?P<t>\d+) s\?", row["problem"]
        )
        frame = clip.at(int(match["t"]))
        _assert_box_matches_pixels(frame, match["colour"], json.loads(row["answer"])["boxes"])
        assert frame.shapes(match["colour"])[0].kind == match["kind"]


def test_spatiotemporal(suite_rows_of, clip_of) -> None:
    for row in suite_rows_of["spatiotemporal"]:
        clip = clip_of(row["videos"][0])
        match = re.match(rf"When is the {NAME} visible", row["problem"])
        gold = json.loads(row["answer"])
        frames = _visible_frames(clip, match["colour"])
        assert gold["time"] == [frames[0] / FPS, (frames[-1] + 1) / FPS]
        seconds = [k for k in range(10) if frames[0] <= k * FPS <= frames[-1]]
        assert [int(k) for k in gold["boxes"]] == seconds
        for second, box in gold["boxes"].items():
            _assert_box_matches_pixels(clip.at(int(second)), match["colour"], box)


def test_tracking(suite_rows_of, clip_of) -> None:
    for row in suite_rows_of["tracking"]:
        clip = clip_of(row["videos"][0])
        match = re.match(rf"Track the {NAME}: .* from 0 s to (?P<last>\d+) s\.", row["problem"])
        gold = json.loads(row["answer"])["boxes"]
        assert list(gold) == [str(k) for k in range(int(match["last"]) + 1)]
        assert len(clip.frames) == (int(match["last"]) + 1) * FPS
        for second, box in gold.items():
            _assert_box_matches_pixels(clip.at(int(second)), match["colour"], box)
        assert _visible_frames(clip, match["colour"]) == list(range(len(clip.frames)))


def _coverage(rgb: np.ndarray, paper: tuple[int, int, int], ink: tuple[int, int, int]):
    """Per-pixel ink coverage (0..1) of text drawn in ``ink`` over ``paper``."""
    paper_arr, ink_arr = np.array(paper, float), np.array(ink, float)
    axis = ink_arr - paper_arr
    return np.clip((rgb.astype(float) - paper_arr) @ axis / (axis @ axis), 0, 1)


def _matches_text(coverage: np.ndarray, text: str, size: int) -> float:
    """Best normalised correlation of measured ink coverage with the glyphs of ``text``,
    over every placement of the glyphs inside the region (template matching)."""
    template = text_alpha(text, size).astype(np.float64) / 255
    if template.shape[0] > coverage.shape[0] or template.shape[1] > coverage.shape[1]:
        return 0.0
    windows = np.lib.stride_tricks.sliding_window_view(coverage, template.shape)
    t = template - template.mean()
    w = windows - windows.mean(axis=(-2, -1), keepdims=True)
    numerator = (w * t).sum(axis=(-2, -1))
    denominator = np.sqrt((w * w).sum(axis=(-2, -1)) * (t * t).sum())
    scores = np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0)
    return float(scores.max())


def _altered(text: str) -> str:
    """``text`` with its first letter or digit replaced by a clearly different one."""
    first = text[0]
    if first.isdigit():
        replacement = str(int(first) % 9 + 1)
    else:
        replacement = chr((ord(first) - ord("A") + 13) % 26 + ord("A"))  # ROT13
    return replacement + text[1:]


def _check_banner(frame: Frame, text: str) -> None:
    """The band at the top shows exactly ``text`` and no text is drawn anywhere else."""
    other = _altered(text)
    band = _coverage(frame.rgb[:36], BACKGROUND, TEXT_ON_BACKGROUND)
    score = _matches_text(band, text, 18)
    assert score > 0.975 and _matches_text(band, other, 18) < score - 0.02, (text, other)
    assert frame.mask("text")[36:].sum() == 0, "text pixels outside the banner band"


def _check_sign(frame: Frame, colour: str, word: str) -> None:
    """The square of ``colour`` carries exactly ``word``."""
    other = _altered(word)
    (sign,) = [c for c in frame.shapes(colour) if c.kind == "square"]
    inner = frame.rgb[sign.y1 + 2 : sign.y2 - 2, sign.x1 + 2 : sign.x2 - 2]
    coverage = _coverage(inner, COLOURS[colour], label_ink(colour))
    assert (coverage > 0.5).sum() > 20, "no text on the sign"
    score = _matches_text(coverage, word, 14)
    assert score > 0.975 and _matches_text(coverage, other, 14) < score - 0.02, (word, other)


def test_ocr(suite_rows_of, clip_of) -> None:
    for row in suite_rows_of["ocr"]:
        clip = clip_of(row["videos"][0])
        if row["problem"] == "What text is shown at the top of the video?":
            shown = [i for i, f in enumerate(clip.frames) if f.mask("text")[:36].sum() > 20]
            assert shown == list(range(shown[0], shown[-1] + 1)) and len(shown) >= 2 * FPS
            _check_banner(clip.frames[shown[len(shown) // 2]], row["answer"])
        else:
            colour = re.fullmatch(r"What word is written on the (\w+) square\?", row["problem"])[1]
            for index in (0, len(clip.frames) - 1):
                _check_sign(clip.frames[index], colour, row["answer"])


def test_math(generated, clip_of) -> None:
    for index, row in enumerate(generated[1]["math"]):
        clip = clip_of(row["videos"][0])
        (text_item,) = build_item("math", index, seed=generated[2]).scene.texts
        shown = text_item.text
        assert shown.endswith(" = ?")
        # the expression on screen is the one the scene says ...
        _check_banner(clip.frames[0], shown)
        # ... and the answer is its value, by Python's own precedence rules
        python = shown[: -len(" = ?")].replace("×", "*").replace("−", "-")
        assert re.fullmatch(r"[0-9 +*-]+", python)
        assert eval(python) == int(row["answer"])  # digits and operators only (checked above)


CLAUSE = re.compile(
    rf"an? {NAME} (?:(?P<still>stays still)|moves from (?P<a>\w+) to (?P<b>\w+))", re.IGNORECASE
)
_SIDES = {
    ("left", "right"): "right",
    ("right", "left"): "left",
    ("top", "bottom"): "down",
    ("bottom", "top"): "up",
}


def _caption_agrees(clip: Clip, caption: str) -> bool:
    clauses = list(CLAUSE.finditer(caption))
    assert clauses, caption
    for clause in clauses:
        colour = clause["colour"].lower()
        if not clip.frames_with(colour):
            return False
        first, last, _, _ = _first_last(clip, colour)
        if first.kind != clause["kind"]:
            return False
        expected = "still" if clause["still"] else _SIDES[(clause["a"], clause["b"])]
        if direction(first, last) != expected:
            return False
    on_screen = {c.colour for c in clip.frames[0].shapes()}
    return on_screen == {clause["colour"].lower() for clause in clauses}


def test_caption(suite_rows_of, clip_of) -> None:
    for row in suite_rows_of["caption"]:
        assert _caption_agrees(clip_of(row["videos"][0]), row["answer"]), row["answer"]


def test_critic(suite_rows_of, clip_of) -> None:
    for row in suite_rows_of["critic"]:
        clip = clip_of(row["videos"][0])
        responses = re.findall(r"Response (\d): (.*)", row["problem"])
        verdicts = {f"Response {n}": _caption_agrees(clip, text) for n, text in responses}
        assert verdicts == {
            "Response 1": row["answer"] == "Response 1",
            "Response 2": row["answer"] == "Response 2",
        }


@pytest.fixture(scope="module")
def still_of(generated):
    out = generated[0]
    return lambda row: Frame(read_png(out / row["images"][0]))


def test_image_multiple_choice(suite_rows_of, still_of) -> None:
    for row in suite_rows_of["image_multiple_choice"]:
        frame = still_of(row)
        if match := re.fullmatch(r"What shape is the (\w+) object\?", row["problem"]):
            (shape,) = frame.shapes(match[1])
            assert _option_text(row) == shape.kind.capitalize()
        else:
            kind = re.fullmatch(r"What colour is the (\w+)\?", row["problem"])[1]
            (shape,) = [c for c in frame.shapes() if c.kind == kind]
            assert _option_text(row) == shape.colour.capitalize()


def test_image_count(suite_rows_of, still_of) -> None:
    for row in suite_rows_of["image_count"]:
        shapes = still_of(row).shapes()
        pattern = r"How many (circle|square|triangle)s are in the image\?"
        if match := re.fullmatch(pattern, row["problem"]):
            shapes = [c for c in shapes if c.kind == match[1]]
        assert len(shapes) == int(row["answer"])


def test_image_spatial_boxes_are_pixel_exact(suite_rows_of, still_of) -> None:
    for row in suite_rows_of["image_spatial"]:
        frame = still_of(row)
        match = re.match(rf"What is the bounding box of the {NAME}\?", row["problem"])
        (shape,) = frame.shapes(match["colour"])
        assert shape.kind == match["kind"]
        assert shape.box == json.loads(row["answer"])["boxes"]  # lossless PNG: exact


def test_image_ocr(suite_rows_of, still_of) -> None:
    for row in suite_rows_of["image_ocr"]:
        frame = still_of(row)
        if row["problem"] == "What text is shown at the top of the image?":
            _check_banner(frame, row["answer"])
        else:
            colour = re.fullmatch(r"What word is written on the (\w+) square\?", row["problem"])[1]
            _check_sign(frame, colour, row["answer"])


# Independent solutions, written from the problem statements only.
SOLUTIONS = {
    "count_colour": "def count_colour(shapes, colour):\n"
    "    return len([s for s in shapes if s[0] == colour])\n",
    "box_area": "def box_area(box):\n"
    "    w, h = box[2] - box[0], box[3] - box[1]\n"
    "    return w * h if w > 0 and h > 0 else 0\n",
    "box_iou": "def box_iou(a, b):\n"
    "    def area(x):\n"
    "        return max(0, x[2] - x[0]) * max(0, x[3] - x[1])\n"
    "    i = area([max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])])\n"
    "    u = area(a) + area(b) - i\n"
    "    return i / u if u else 0.0\n",
    "visible_span": "def visible_span(frames, fps):\n"
    "    return [frames[0] / fps, (frames[-1] + 1) / fps]\n",
    "direction": "def direction(x0, y0, x1, y1):\n"
    "    if (x0, y0) == (x1, y1):\n"
    "        return 'still'\n"
    "    if y0 == y1:\n"
    "        return 'right' if x1 > x0 else 'left'\n"
    "    return 'down' if y1 > y0 else 'up'\n",
}
WRONG = {
    "count_colour": "def count_colour(shapes, colour):\n    return len(shapes)\n",
    "box_area": "def box_area(box):\n    return (box[2] - box[0]) * (box[3] - box[1])\n",
    "box_iou": "def box_iou(a, b):\n    return 0.5\n",
    "visible_span": "def visible_span(frames, fps):\n    return [frames[0] / fps, frames[-1] / fps]\n",
    "direction": "def direction(x0, y0, x1, y1):\n    return 'right' if x1 > x0 else 'up'\n",
}


def _passes(source: str, tests: list[str]) -> bool:
    namespace: dict = {}
    exec(source, namespace)  # trusted, test-local source
    try:
        for test in tests:
            exec(test, namespace)
    except AssertionError:
        return False
    return True


def test_code_gold_tests_accept_a_correct_solution_and_reject_wrong_ones(suite_rows) -> None:
    seen = set()
    for row in suite_rows["code"]:
        gold = json.loads(row["answer"])
        seen.add(gold["entry_point"])
        assert f"`{gold['entry_point']}(" in row["problem"]
        assert _passes(SOLUTIONS[gold["entry_point"]], gold["tests"])
        assert not _passes(WRONG[gold["entry_point"]], gold["tests"])
    assert seen == set(SOLUTIONS)


def test_paths_are_relative_to_the_suite_folder(suite, suite_rows) -> None:
    _, out = suite
    for rows in suite_rows.values():
        for row in rows:
            for media in row["videos"] + row["images"]:
                assert (out / media).resolve().is_relative_to(Path(out).resolve())
