"""Grounding question builders: temporal, spatial, spatio-temporal and tracking.

Answers follow the problem types' answer formats (``docs/verifiers.md``) and are JSON
strings (as EasyVideoR1 stores them): ``{"time": [s, e]}`` in seconds of the original video,
``{"boxes": [x1, y1, x2, y2]}`` in pixels of the original frame (``x2``/``y2`` exclusive),
and per-second box dictionaries keyed by the whole second as a string (``"2"``). The target
always has a colour no other shape in the clip has, so "the red circle" names exactly one
shape.

Example:
    >>> import json, random
    >>> from videorl_kit.synth.layout import Canvas
    >>> item = build_temporal(random.Random(0), Canvas(), 0)
    >>> sorted(json.loads(item.answer))
    ['time']
"""

from __future__ import annotations

import random

from videorl_kit.synth.item import SynthItem, clip_scene, pick_kind, random_interval
from videorl_kit.synth.layout import Canvas, place
from videorl_kit.synth.palette import COLOUR_NAMES
from videorl_kit.synth.scene import Scene, ShapeTrack
from videorl_kit.synth.wording import format_number, format_seconds, json_answer


def _with_distractors(
    rng: random.Random, canvas: Canvas, seconds: int, target: ShapeTrack, n_distractors: int
) -> list[ShapeTrack]:
    """``target`` plus shapes of other colours; one may share the target's kind."""
    shapes = [target]
    colours = [c for c in COLOUR_NAMES if c != target.colour]
    for colour in rng.sample(colours, n_distractors):
        start, stop = random_interval(rng, canvas, seconds)
        shapes.append(
            place(rng, canvas, shapes, kind=pick_kind(rng), colour=colour, start=start, stop=stop)
        )
    return shapes


def _frame_size(canvas: Canvas) -> str:
    return f"{canvas.width}x{canvas.height}"


def _target_scene(
    rng: random.Random, canvas: Canvas, seconds: int, **placement: object
) -> tuple[ShapeTrack, Scene]:
    """Place one target shape of random kind and colour, then 1-3 distractors around it."""
    target = place(
        rng, canvas, [], kind=pick_kind(rng), colour=rng.choice(COLOUR_NAMES), **placement
    )
    shapes = _with_distractors(rng, canvas, seconds, target, rng.randint(1, 3))
    return target, clip_scene(canvas, seconds, shapes)


def build_temporal(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """When is a shape visible? Answer ``{"time": [s, e]}`` (seconds, end exclusive).

    Example:
        >>> import json
        >>> s, e = json.loads(build_temporal(random.Random(1), Canvas(), 0).answer)["time"]
        >>> s < e
        True
    """
    seconds = rng.randint(4, 6)
    start, stop = random_interval(rng, canvas, seconds, from_start=index % 3 == 2 or None)
    target, scene = _target_scene(rng, canvas, seconds, start=start, stop=stop)
    span = [float(t) for t in scene.span_s(target)]
    return SynthItem(
        problem=(
            f"During which time span is the {target.name} visible? Give the start and end "
            f"times in seconds of the {format_number(scene.duration_s)}-second video."
        ),
        answer=json_answer({"time": span}),
        category="visible_span",
        scene=scene,
    )


def build_spatial(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """Where is a shape at a whole second? Answer ``{"boxes": [x1, y1, x2, y2]}``.

    Example:
        >>> import json
        >>> len(json.loads(build_spatial(random.Random(0), Canvas(), 0).answer)["boxes"])
        4
    """
    seconds = rng.randint(3, 5)
    start, stop = random_interval(rng, canvas, seconds, min_frames=2 * canvas.fps)
    target, scene = _target_scene(rng, canvas, seconds, start=start, stop=stop)
    second = rng.choice(scene.whole_seconds(target))
    box = target.box_at(second * canvas.fps)
    return SynthItem(
        problem=(
            f"What is the bounding box of the {target.name} at {format_seconds(second)}? "
            f"Use pixel coordinates [x1, y1, x2, y2] of the {_frame_size(canvas)} frame."
        ),
        answer=json_answer({"boxes": box.as_list()}),
        category="box_at_time",
        scene=scene,
    )


def build_spatiotemporal(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """When is a shape visible and where is it at each whole second of that span?

    Example:
        >>> import json
        >>> sorted(json.loads(build_spatiotemporal(random.Random(0), Canvas(), 0).answer))
        ['boxes', 'time']
    """
    seconds = rng.randint(4, 6)
    start, stop = random_interval(rng, canvas, seconds, min_frames=2 * canvas.fps)
    target = place(
        rng,
        canvas,
        [],
        kind=pick_kind(rng),
        colour=rng.choice(COLOUR_NAMES),
        start=start,
        stop=stop,
        motion="moving",
    )
    shapes = _with_distractors(rng, canvas, seconds, target, rng.randint(1, 2))
    scene = clip_scene(canvas, seconds, shapes)
    boxes = {str(k): target.box_at(k * canvas.fps).as_list() for k in scene.whole_seconds(target)}
    return SynthItem(
        problem=(
            f"When is the {target.name} visible, and where is it at each whole second while "
            "it is visible? Give the time span in seconds and one bounding box "
            f"[x1, y1, x2, y2] in pixels of the {_frame_size(canvas)} frame for every whole "
            "second inside the span."
        ),
        answer=json_answer({"time": [float(t) for t in scene.span_s(target)], "boxes": boxes}),
        category="span_and_boxes",
        scene=scene,
    )


def build_tracking(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """Track a shape that is visible throughout: one box per whole second.

    Example:
        >>> import json
        >>> item = build_tracking(random.Random(0), Canvas(), 0)
        >>> len(json.loads(item.answer)["boxes"]) == item.scene.duration_s
        True
    """
    seconds = rng.randint(3, 5)
    n_frames = canvas.frames(seconds)
    target, scene = _target_scene(
        rng, canvas, seconds, start=0, stop=n_frames, motion="moving", min_travel=40
    )
    boxes = {str(k): target.box_at(k * canvas.fps).as_list() for k in range(seconds)}
    return SynthItem(
        problem=(
            f"Track the {target.name}: give its bounding box [x1, y1, x2, y2] in pixels of "
            f"the {_frame_size(canvas)} frame at every whole second from 0 s to "
            f"{format_seconds(seconds - 1)}."
        ),
        answer=json_answer({"boxes": boxes}),
        category="box_per_second",
        scene=scene,
    )
