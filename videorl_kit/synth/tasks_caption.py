"""Caption questions on video: describe the motion (open-ended) or pick the right caption.

Captions come from one template (:func:`videorl_kit.synth.wording.caption`), so the gold
sentence is exact; the critic's wrong caption changes exactly one detail.

Example:
    >>> import random
    >>> from videorl_kit.synth.layout import Canvas
    >>> build_caption(random.Random(0), Canvas(), 1).category
    '2_shapes'
"""

from __future__ import annotations

import dataclasses
import random

from videorl_kit.synth.item import SynthItem, clip_scene, pick_kind
from videorl_kit.synth.layout import Canvas, place
from videorl_kit.synth.palette import COLOUR_NAMES, SHAPE_KINDS
from videorl_kit.synth.scene import ShapeTrack
from videorl_kit.synth.wording import caption


def _captionclip_scene(rng: random.Random, canvas: Canvas, n_shapes: int, seconds: int):
    colours = rng.sample(COLOUR_NAMES, n_shapes)
    kinds = [pick_kind(rng) for _ in colours]
    n_frames = canvas.frames(seconds)
    shapes: list[ShapeTrack] = []
    for position, (colour, kind) in enumerate(zip(colours, kinds, strict=True)):
        motion = "axis" if position == 0 else rng.choice(("static", "axis"))
        shapes.append(
            place(
                rng,
                canvas,
                shapes,
                kind=kind,
                colour=colour,
                start=0,
                stop=n_frames,
                motion=motion,
                min_travel=40,
            )
        )
    return shapes


CAPTION_PROBLEM = (
    "Describe in one sentence how each shape moves in the video, naming its colour and "
    'shape (for example: "A red circle moves from left to right.").'
)


def build_caption(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """Open-ended: a one-sentence caption of one or two shapes' motion.

    Example:
        >>> build_caption(random.Random(0), Canvas(), 0).answer.startswith("A ")
        True
    """
    seconds = rng.randint(3, 5)
    shapes = _captionclip_scene(rng, canvas, 1 + index % 2, seconds)
    return SynthItem(
        problem=CAPTION_PROBLEM,
        answer=caption(shapes),
        category=f"{len(shapes)}_shapes",
        scene=clip_scene(canvas, seconds, shapes),
    )


def _wrong_caption(rng: random.Random, shapes: list[ShapeTrack]) -> str:
    """A caption that gets exactly one attribute of the first shape wrong."""
    first = shapes[0]
    used = {shape.colour for shape in shapes}
    kind_of_error = rng.choice(("direction", "colour", "kind"))
    if kind_of_error == "direction":
        wrong = dataclasses.replace(first, vx=-first.vx, vy=-first.vy)
    elif kind_of_error == "colour":
        wrong = dataclasses.replace(
            first, colour=rng.choice([c for c in COLOUR_NAMES if c not in used])
        )
    else:
        wrong = dataclasses.replace(
            first, kind=rng.choice([k for k in SHAPE_KINDS if k != first.kind])
        )
    return caption([wrong, *shapes[1:]])


def build_critic(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """Critic: two captions of a clip, one correct, one with a single wrong detail.

    Example:
        >>> build_critic(random.Random(0), Canvas(), 1).answer
        'Response 2'
    """
    seconds = rng.randint(3, 5)
    shapes = _captionclip_scene(rng, canvas, rng.randint(1, 2), seconds)
    right, wrong = caption(shapes), _wrong_caption(rng, shapes)
    first_is_right = index % 2 == 0
    responses = (right, wrong) if first_is_right else (wrong, right)
    problem = (
        "Two responses describe the video.\n"
        f"Response 1: {responses[0]}\n"
        f"Response 2: {responses[1]}\n"
        "Which response describes the video correctly? Answer Response 1 or Response 2."
    )
    return SynthItem(
        problem=problem,
        answer="Response 1" if first_is_right else "Response 2",
        category="caption_pair",
        scene=clip_scene(canvas, seconds, shapes),
    )
