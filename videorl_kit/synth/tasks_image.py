"""Image question builders: one still frame (saved as PNG) per question.

The scene has ``n_frames == 1`` and static shapes; the PNG is lossless, so every answer
can be checked pixel for pixel.

Example:
    >>> import random
    >>> from videorl_kit.synth.layout import Canvas
    >>> item = build_image_count(random.Random(0), Canvas(), 1)
    >>> item.scene.n_frames, item.problem
    (1, 'How many shapes are in the image?')
"""

from __future__ import annotations

import random

from videorl_kit.synth.item import SynthItem, pick_kind
from videorl_kit.synth.layout import Canvas, place
from videorl_kit.synth.palette import COLOUR_NAMES, SHAPE_KINDS
from videorl_kit.synth.raster import text_size
from videorl_kit.synth.scene import Scene, ShapeTrack
from videorl_kit.synth.tasks_reading import SIGN_FONT, SIGN_SIZE, banner, banner_text
from videorl_kit.synth.wording import WORDS, json_answer, letter_of, lettered


def _still(canvas: Canvas, shapes: list[ShapeTrack], texts=()) -> Scene:
    return Scene(
        width=canvas.width,
        height=canvas.height,
        fps=canvas.fps,
        n_frames=1,
        shapes=tuple(shapes),
        texts=tuple(texts),
    )


def _static_shapes(
    rng: random.Random, canvas: Canvas, pairs: list[tuple[str, str]], top: int | None = None
) -> list[ShapeTrack]:
    shapes: list[ShapeTrack] = []
    for colour, kind in pairs:
        shapes.append(
            place(
                rng,
                canvas,
                shapes,
                kind=kind,
                colour=colour,
                start=0,
                stop=1,
                motion="static",
                top=top,
            )
        )
    return shapes


def build_image_multiple_choice(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """ "What shape is the <colour> object?" or "What colour is the <kind>?" with options.

    Example:
        >>> build_image_multiple_choice(random.Random(0), Canvas(), 0).options
        ['A. Circle', 'B. Square', 'C. Triangle']
    """
    colours = rng.sample(COLOUR_NAMES, rng.randint(2, 4))
    if index % 2 == 0:
        shapes = _static_shapes(rng, canvas, [(c, pick_kind(rng)) for c in colours])
        target = rng.choice(shapes)
        texts = [kind.capitalize() for kind in SHAPE_KINDS]
        return SynthItem(
            problem=f"What shape is the {target.colour} object?",
            answer=letter_of(texts, target.kind.capitalize()),
            options=lettered(texts),
            category="kind_of_colour",
            scene=_still(canvas, shapes),
        )
    target_kind = pick_kind(rng)
    others = [k for k in SHAPE_KINDS if k != target_kind]
    kinds = [target_kind] + [rng.choice(others) for _ in colours[1:]]
    shapes = _static_shapes(rng, canvas, list(zip(colours, kinds, strict=True)))
    names = [colours[0], *rng.sample([c for c in COLOUR_NAMES if c != colours[0]], 3)]
    texts = [name.capitalize() for name in names]
    rng.shuffle(texts)
    return SynthItem(
        problem=f"What colour is the {target_kind}?",
        answer=letter_of(texts, colours[0].capitalize()),
        options=lettered(texts),
        category="colour_of_kind",
        scene=_still(canvas, shapes),
    )


def build_image_count(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """Count shapes of one kind, or all shapes, in a still.

    Example:
        >>> build_image_count(random.Random(0), Canvas(), 1).answer.isdigit()
        True
    """
    pairs = [(rng.choice(COLOUR_NAMES), pick_kind(rng)) for _ in range(rng.randint(2, 7))]
    shapes = _static_shapes(rng, canvas, pairs)
    if index % 2 == 0:
        kind = pick_kind(rng)
        return SynthItem(
            problem=f"How many {kind}s are in the image?",
            answer=str(sum(shape.kind == kind for shape in shapes)),
            category="count_kind",
            scene=_still(canvas, shapes),
        )
    return SynthItem(
        problem="How many shapes are in the image?",
        answer=str(len(shapes)),
        category="count_all",
        scene=_still(canvas, shapes),
    )


def build_image_ocr(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """Read the banner text at the top, or the word on a square sign.

    Example:
        >>> build_image_ocr(random.Random(0), Canvas(), 0).problem
        'What text is shown at the top of the image?'
    """
    colours = rng.sample(COLOUR_NAMES, rng.randint(2, 3))
    if index % 2 == 0:
        text = banner_text(rng)
        item, _ = banner(canvas, text, 0, 1)
        pairs = [(c, pick_kind(rng)) for c in colours[1:]]
        shapes = _static_shapes(rng, canvas, pairs, top=canvas.text_band + canvas.gap)
        return SynthItem(
            problem="What text is shown at the top of the image?",
            answer=text,
            category="banner",
            scene=_still(canvas, shapes, texts=[item]),
        )
    word = rng.choice([w for w in WORDS if text_size(w, SIGN_FONT)[0] <= SIGN_SIZE - 8])
    sign = place(
        rng,
        canvas,
        [],
        kind="square",
        colour=colours[0],
        start=0,
        stop=1,
        motion="static",
        size=SIGN_SIZE,
        label=word,
        label_size=SIGN_FONT,
    )
    shapes = [sign]
    for colour in colours[1:]:
        shapes.append(
            place(
                rng,
                canvas,
                shapes,
                kind=pick_kind(rng),
                colour=colour,
                start=0,
                stop=1,
                motion="static",
            )
        )
    return SynthItem(
        problem=f"What word is written on the {sign.colour} square?",
        answer=word,
        category="sign",
        scene=_still(canvas, shapes),
    )


def build_image_spatial(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """The box of one named shape in a still: ``{"boxes": [x1, y1, x2, y2]}``.

    Example:
        >>> build_image_spatial(random.Random(0), Canvas(), 0).answer.startswith('{"boxes": [')
        True
    """
    colours = rng.sample(COLOUR_NAMES, rng.randint(2, 5))
    shapes = _static_shapes(rng, canvas, [(c, pick_kind(rng)) for c in colours])
    target = shapes[0]
    return SynthItem(
        problem=(
            f"What is the bounding box of the {target.name}? Use pixel coordinates "
            f"[x1, y1, x2, y2] of the {canvas.width}x{canvas.height} image."
        ),
        answer=json_answer({"boxes": target.box_at(0).as_list()}),
        category="box",
        scene=_still(canvas, shapes),
    )
