"""Text-only code questions about the synthetic world (boxes, spans, directions).

The gold answer is ``{"entry_point": name, "tests": ["assert ...", ...]}`` (a JSON
string); the expected values in the asserts come from the reference functions below.

Example:
    >>> import json, random
    >>> from videorl_kit.synth.layout import Canvas
    >>> item = build_code(random.Random(0), Canvas(), 1)
    >>> gold = json.loads(item.answer)
    >>> gold["entry_point"], gold["tests"][0].startswith("assert box_area(")
    ('box_area', True)
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable

from videorl_kit.synth.item import SynthItem, pick_kind
from videorl_kit.synth.layout import Canvas
from videorl_kit.synth.palette import COLOUR_NAMES
from videorl_kit.synth.wording import json_answer


def _count_colour(shapes: list[tuple[str, str]], colour: str) -> int:
    return sum(1 for shape_colour, _ in shapes if shape_colour == colour)


def _box_area(box: list[int]) -> int:
    x1, y1, x2, y2 = box
    return max(0, x2 - x1) * max(0, y2 - y1)


def _box_iou(a: list[int], b: list[int]) -> float:
    inter = _box_area([max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])])
    union = _box_area(a) + _box_area(b) - inter
    return inter / union if union > 0 else 0.0


def _visible_span(frames: list[int], fps: int) -> list[float]:
    return [frames[0] / fps, (frames[-1] + 1) / fps]


def _direction(x0: int, y0: int, x1: int, y1: int) -> str:
    if x1 > x0:
        return "right"
    if x1 < x0:
        return "left"
    if y1 > y0:
        return "down"
    if y1 < y0:
        return "up"
    return "still"


def _random_box(rng: random.Random) -> list[int]:
    x1, y1 = rng.randint(0, 60), rng.randint(0, 60)
    return [x1, y1, x1 + rng.randint(-4, 40), y1 + rng.randint(-4, 40)]


def _count_colour_task(rng: random.Random) -> tuple[str, str, list[str]]:
    problem = (
        "Write a Python function `count_colour(shapes, colour)`. `shapes` is a list of "
        '(colour, kind) pairs of strings, for example [("red", "circle"), ("blue", '
        '"square")]. Return how many pairs have the given colour.'
    )
    tests = []
    for _ in range(4):
        shapes = [(rng.choice(COLOUR_NAMES[:3]), pick_kind(rng)) for _ in range(rng.randint(0, 6))]
        colour = rng.choice(COLOUR_NAMES[:3])
        expected = _count_colour(shapes, colour)
        tests.append(f"assert count_colour({shapes!r}, {colour!r}) == {expected}")
    return "count_colour", problem, tests


def _box_area_task(rng: random.Random) -> tuple[str, str, list[str]]:
    problem = (
        "Write a Python function `box_area(box)`. `box` is a list [x1, y1, x2, y2] of integer "
        "pixel coordinates where x2 and y2 are exclusive (the box covers x1 <= x < x2 and "
        "y1 <= y < y2). Return the number of pixels the box covers, or 0 when x2 <= x1 or "
        "y2 <= y1."
    )
    tests = []
    for _ in range(4):
        box = _random_box(rng)
        tests.append(f"assert box_area({box!r}) == {_box_area(box)}")
    return "box_area", problem, tests


def _box_iou_task(rng: random.Random) -> tuple[str, str, list[str]]:
    problem = (
        "Write a Python function `box_iou(a, b)` returning the intersection over union of "
        "two boxes [x1, y1, x2, y2] (integer pixels, x2 and y2 exclusive; a box with x2 <= x1 "
        "or y2 <= y1 is empty). Return 0.0 when the union is empty."
    )
    tests = []
    for _ in range(4):
        a, b = _random_box(rng), _random_box(rng)
        tests.append(f"assert abs(box_iou({a!r}, {b!r}) - {_box_iou(a, b)!r}) < 1e-9")
    return "box_iou", problem, tests


def _visible_span_task(rng: random.Random) -> tuple[str, str, list[str]]:
    problem = (
        "Write a Python function `visible_span(frames, fps)`. `frames` is a non-empty sorted "
        "list of consecutive frame indices in which an object is visible, and frame i is "
        "shown from i / fps to (i + 1) / fps seconds. Return [start, end], the time span in "
        "seconds during which the object is visible."
    )
    tests = []
    for _ in range(4):
        fps = rng.choice((2, 4, 8))
        first = rng.randint(0, 30)
        frames = list(range(first, first + rng.randint(1, 12)))
        tests.append(f"assert visible_span({frames!r}, {fps}) == {_visible_span(frames, fps)!r}")
    return "visible_span", problem, tests


def _direction_task(rng: random.Random) -> tuple[str, str, list[str]]:
    problem = (
        "Write a Python function `direction(x0, y0, x1, y1)`. A shape moved along one axis "
        "from (x0, y0) to (x1, y1) in image coordinates (y grows downwards). Return 'left', "
        "'right', 'up' or 'down', or 'still' if it did not move."
    )
    tests = []
    for step in (
        (rng.randint(1, 50), 0),
        (-rng.randint(1, 50), 0),
        (0, rng.randint(1, 50)),
        (0, -rng.randint(1, 50)),
        (0, 0),
    ):
        x0, y0 = rng.randint(0, 200), rng.randint(0, 150)
        x1, y1 = x0 + step[0], y0 + step[1]
        tests.append(f"assert direction({x0}, {y0}, {x1}, {y1}) == {_direction(x0, y0, x1, y1)!r}")
    rng.shuffle(tests)
    return "direction", problem, tests


_TEMPLATES: tuple[Callable[[random.Random], tuple[str, str, list[str]]], ...] = (
    _count_colour_task,
    _box_area_task,
    _box_iou_task,
    _visible_span_task,
    _direction_task,
)


def reference_code(entry_point: str) -> str:
    """Python source of a correct answer to the code task ``entry_point`` (demos, tests).

    Example:
        >>> namespace = {}
        >>> exec(reference_code("box_iou"), namespace)
        >>> namespace["box_iou"]([0, 0, 2, 2], [1, 0, 3, 2])
        0.3333333333333333
    """
    function = _REFERENCES[entry_point]
    helpers = [_box_area] if function is _box_iou else []
    source = "\n\n".join(inspect.getsource(f) for f in [*helpers, function])
    return f"{source}\n\n{entry_point} = {function.__name__}\n"


_REFERENCES: dict[str, Callable[..., object]] = {
    "count_colour": _count_colour,
    "box_area": _box_area,
    "box_iou": _box_iou,
    "visible_span": _visible_span,
    "direction": _direction,
}


def build_code(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """A small Python function to write, graded by the asserts in its gold answer.

    Example:
        >>> import json
        >>> json.loads(build_code(random.Random(0), Canvas(), 4).answer)["entry_point"]
        'direction'
    """
    entry_point, problem, tests = _TEMPLATES[index % len(_TEMPLATES)](rng)
    return SynthItem(
        problem=problem,
        answer=json_answer({"entry_point": entry_point, "tests": tests}),
        category=entry_point,
    )
