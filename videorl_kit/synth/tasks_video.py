"""Video question builders: multiple choice, counting, regression and yes/no.

Each builder takes ``(rng, canvas, index)`` and returns a :class:`SynthItem` whose answer
is computed from the scene it builds. ``index`` picks the question template in turn, so
every template appears in even a small suite; ``rng`` decides everything else.

Example:
    >>> import random
    >>> from videorl_kit.synth.layout import Canvas
    >>> item = build_count(random.Random(0), Canvas(), 0)
    >>> item.category, item.problem.startswith("How many shapes are visible at")
    ('visible_at', True)
"""

from __future__ import annotations

import random

from videorl_kit.synth.item import (
    SynthItem,
    add_distractors,
    clip_scene,
    pick_kind,
    random_interval,
)
from videorl_kit.synth.layout import Canvas, place
from videorl_kit.synth.palette import COLOUR_NAMES, SHAPE_KINDS
from videorl_kit.synth.scene import ShapeTrack
from videorl_kit.synth.wording import format_number, format_seconds, letter_of, lettered


def build_multiple_choice(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """ "Which colour appears last?" or "which direction does X move?" with lettered options.

    Example:
        >>> item = build_multiple_choice(random.Random(0), Canvas(), 1)
        >>> item.options, item.answer in "ABCD"
        (['A. Left', 'B. Right', 'C. Up', 'D. Down'], True)
    """
    seconds = rng.randint(4, 6)
    n_frames = canvas.frames(seconds)
    if index % 2 == 0:
        count = rng.randint(3, 4)
        colours = rng.sample(COLOUR_NAMES, count)
        candidates = [0] + [f for f in canvas.half_second_frames(seconds) if f <= n_frames - 8]
        starts = sorted(rng.sample(candidates, count))
        shapes: list[ShapeTrack] = []
        for colour, start in zip(colours, starts, strict=True):
            later = [f for f in canvas.half_second_frames(seconds) if f >= start + canvas.fps]
            stop = rng.choice([n_frames, *later])
            shapes.append(
                place(
                    rng, canvas, shapes, kind=pick_kind(rng), colour=colour, start=start, stop=stop
                )
            )
        last = shapes[-1]
        names = list(colours) + [c for c in rng.sample(COLOUR_NAMES, 6) if c not in colours]
        texts = [name.capitalize() for name in names[:4]]
        rng.shuffle(texts)
        return SynthItem(
            problem="What colour is the shape that appears last?",
            answer=letter_of(texts, last.colour.capitalize()),
            options=lettered(texts),
            category="appears_last",
            scene=clip_scene(canvas, seconds, shapes),
        )
    colours = rng.sample(COLOUR_NAMES, rng.randint(2, 3))
    target = place(
        rng,
        canvas,
        [],
        kind=pick_kind(rng),
        colour=colours[0],
        start=0,
        stop=n_frames,
        motion="axis",
        min_travel=40,
    )
    shapes = [target]
    add_distractors(rng, canvas, seconds, shapes, colours[1:])
    texts = ["Left", "Right", "Up", "Down"]
    return SynthItem(
        problem=f"In which direction does the {target.name} move?",
        answer=letter_of(texts, str(target.direction).capitalize()),
        options=lettered(texts),
        category="direction",
        scene=clip_scene(canvas, seconds, shapes),
    )


def _random_shapes(
    rng: random.Random, canvas: Canvas, seconds: int, colours: list[str]
) -> list[ShapeTrack]:
    shapes: list[ShapeTrack] = []
    for colour in colours:
        start, stop = random_interval(rng, canvas, seconds)
        shapes.append(
            place(rng, canvas, shapes, kind=pick_kind(rng), colour=colour, start=start, stop=stop)
        )
    return shapes


def build_count(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """Counting: shapes visible at a time, shapes shown in total, shapes of one colour.

    Example:
        >>> build_count(random.Random(0), Canvas(), 2).problem
        'How many red shapes appear during the video?'
    """
    seconds = rng.randint(4, 6)
    template = ("visible_at", "total", "colour_count")[index % 3]
    if template == "visible_at":
        shapes = _random_shapes(
            rng, canvas, seconds, rng.choices(COLOUR_NAMES, k=rng.randint(2, 5))
        )
        second = rng.randint(1, seconds - 1)
        scene = clip_scene(canvas, seconds, shapes)
        answer = len(scene.visible_shapes(second * canvas.fps))
        problem = f"How many shapes are visible at {format_seconds(second)}?"
    elif template == "total":
        shapes = _random_shapes(
            rng, canvas, seconds, rng.choices(COLOUR_NAMES, k=rng.randint(2, 6))
        )
        scene = clip_scene(canvas, seconds, shapes)
        answer = len(shapes)
        problem = (
            "How many shapes are shown in total during the video? "
            "Count each shape once, even if it moves."
        )
    else:
        palette = rng.sample(COLOUR_NAMES, rng.randint(2, 3))
        shapes = _random_shapes(rng, canvas, seconds, rng.choices(palette, k=rng.randint(3, 6)))
        scene = clip_scene(canvas, seconds, shapes)
        colour = rng.choice([shape.colour for shape in shapes])
        answer = sum(shape.colour == colour for shape in shapes)
        problem = f"How many {colour} shapes appear during the video?"
    return SynthItem(problem=problem, answer=str(answer), category=template, scene=scene)


def build_regression(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """Continuous answers: distance travelled, speed, or how long a shape is visible.

    Example:
        >>> item = build_regression(random.Random(0), Canvas(), 2)
        >>> item.problem.startswith("For how many seconds"), float(item.answer) % 0.5
        (True, 0.0)
    """
    seconds = rng.randint(4, 6)
    template = ("distance", "speed", "duration")[index % 3]
    colours = rng.sample(COLOUR_NAMES, rng.randint(2, 3))
    start, stop = random_interval(rng, canvas, seconds, min_frames=2 * canvas.fps)
    motion = "any" if template == "duration" else "moving"
    target = place(
        rng,
        canvas,
        [],
        kind=pick_kind(rng),
        colour=colours[0],
        start=start,
        stop=stop,
        motion=motion,
    )
    shapes = [target]
    add_distractors(rng, canvas, seconds, shapes, colours[1:])
    frame_size = f"{canvas.width}x{canvas.height}"
    if template == "distance":
        problem = (
            f"How many pixels does the {target.name} travel while it is visible? Give the "
            "straight-line distance between its positions in the first and the last frame "
            f"in which it is visible, in pixels of the {frame_size} frame."
        )
        answer = format_number(target.distance_px)
    elif template == "speed":
        speed = target.distance_px / ((target.last_frame - target.start) / canvas.fps)
        problem = (
            f"The {target.name} moves in a straight line at a constant speed. What is its "
            f"speed in pixels per second, measured in the {frame_size} frame?"
        )
        answer = format_number(speed)
    else:
        problem = f"For how many seconds is the {target.name} visible?"
        answer = format_number((target.stop - target.start) / canvas.fps)
    return SynthItem(
        problem=problem, answer=answer, category=template, scene=clip_scene(canvas, seconds, shapes)
    )


def build_boolean(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """Yes/no: does a given shape appear; is a given shape visible at a time (balanced).

    Example:
        >>> [build_boolean(random.Random(0), Canvas(), i).answer for i in range(4)]
        ['Yes', 'Yes', 'No', 'No']
    """
    seconds = rng.randint(4, 6)
    wants_yes = (index // 2) % 2 == 0
    if index % 2 == 0:
        pairs = rng.sample([(c, k) for c in COLOUR_NAMES for k in SHAPE_KINDS], rng.randint(2, 4))
        shapes: list[ShapeTrack] = []
        for colour, kind in pairs:
            start, stop = random_interval(rng, canvas, seconds)
            shapes.append(
                place(rng, canvas, shapes, kind=kind, colour=colour, start=start, stop=stop)
            )
        if wants_yes:
            colour, kind = rng.choice(pairs)
        else:  # a near miss: the colour or the kind is in the clip, the pair is not
            misses = [
                (c, k)
                for c in COLOUR_NAMES
                for k in SHAPE_KINDS
                if (c, k) not in pairs and any(c == pc or k == pk for pc, pk in pairs)
            ]
            colour, kind = rng.choice(misses)
        return SynthItem(
            problem=f"Does a {colour} {kind} appear in the video?",
            answer="Yes" if wants_yes else "No",
            category="appears",
            scene=clip_scene(canvas, seconds, shapes),
        )
    colours = rng.sample(COLOUR_NAMES, rng.randint(2, 3))
    while True:
        start, stop = random_interval(rng, canvas, seconds)
        seconds_in = [k for k in range(1, seconds) if start <= k * canvas.fps < stop]
        seconds_out = [k for k in range(1, seconds) if not start <= k * canvas.fps < stop]
        choices = seconds_in if wants_yes else seconds_out
        if choices:
            break
    target = place(rng, canvas, [], kind=pick_kind(rng), colour=colours[0], start=start, stop=stop)
    shapes = [target]
    add_distractors(rng, canvas, seconds, shapes, colours[1:])
    second = rng.choice(choices)
    return SynthItem(
        problem=f"Is the {target.name} visible at {format_seconds(second)}?",
        answer="Yes" if wants_yes else "No",
        category="visible_at",
        scene=clip_scene(canvas, seconds, shapes),
    )
