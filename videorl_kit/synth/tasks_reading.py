"""Reading questions on video: banner text, words on moving signs, shown arithmetic.

Banner text sits in the top band of the frame (shapes stay below it); a sign is a large
square carrying a word. Text is drawn with Pillow's built-in font (see
:mod:`videorl_kit.synth.raster`).

Example:
    >>> import random
    >>> from videorl_kit.synth.layout import Canvas
    >>> build_ocr(random.Random(0), Canvas(), 0).problem
    'What text is shown at the top of the video?'
"""

from __future__ import annotations

import random

from videorl_kit.synth.item import (
    SynthItem,
    add_distractors,
    clip_scene,
    random_interval,
)
from videorl_kit.synth.layout import Canvas, KeepOut, place
from videorl_kit.synth.palette import COLOUR_NAMES
from videorl_kit.synth.raster import text_box, text_size
from videorl_kit.synth.scene import ShapeTrack, TextItem
from videorl_kit.synth.wording import BANNER_VERBS, WORDS

#: Font size of banner text at the top of the frame.
BANNER_FONT = 18
#: Font size of the word written on a sign (a large square).
SIGN_FONT = 14
#: Side of a sign square, large enough for a five-letter word.
SIGN_SIZE = 64


def banner_text(rng: random.Random) -> str:
    """Text for a banner: a word, a word and a number, or a verb and a word.

    Example:
        >>> banner_text(random.Random(3)).isupper()
        True
    """
    form = rng.randrange(3)
    if form == 0:
        return rng.choice(WORDS)
    if form == 1:
        return f"{rng.choice(WORDS)} {rng.randint(2, 99)}"
    return f"{rng.choice(BANNER_VERBS)} {rng.choice(WORDS)}"


def banner(canvas: Canvas, text: str, start: int, stop: int, *, size: int = BANNER_FONT):
    """A text item centred horizontally in the top band, and the region it occupies.

    Example:
        >>> item, region = banner(Canvas(), "HELLO", 0, 8)
        >>> region.box.y2 <= Canvas().text_band, item.size
        (True, 18)
    """
    width, height = text_size(text, size)
    item = TextItem(
        text=text,
        x=(canvas.width - width) // 2,
        y=(canvas.text_band - height) // 2,
        size=size,
        start=start,
        stop=stop,
    )
    return item, KeepOut(text_box(item), start, stop)


def build_ocr(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """OCR: the banner text at the top, or the word written on a moving square.

    Example:
        >>> build_ocr(random.Random(0), Canvas(), 1).problem.startswith("What word is written on")
        True
    """
    seconds = rng.randint(3, 5)
    n_frames = canvas.frames(seconds)
    colours = rng.sample(COLOUR_NAMES, rng.randint(2, 3))
    below_band = canvas.text_band + canvas.gap
    if index % 2 == 0:
        text = banner_text(rng)
        start, stop = random_interval(rng, canvas, seconds, min_frames=2 * canvas.fps)
        item, _ = banner(canvas, text, start, stop)
        shapes: list[ShapeTrack] = []
        add_distractors(rng, canvas, seconds, shapes, colours[1:], top=below_band)
        return SynthItem(
            problem="What text is shown at the top of the video?",
            answer=text,
            category="banner",
            scene=clip_scene(canvas, seconds, shapes, texts=[item]),
        )
    word = rng.choice([w for w in WORDS if text_size(w, SIGN_FONT)[0] <= SIGN_SIZE - 8])
    sign = place(
        rng,
        canvas,
        [],
        kind="square",
        colour=colours[0],
        start=0,
        stop=n_frames,
        motion=rng.choice(("static", "axis")),
        size=SIGN_SIZE,
        label=word,
        label_size=SIGN_FONT,
    )
    shapes = [sign]
    add_distractors(rng, canvas, seconds, shapes, colours[1:])
    return SynthItem(
        problem=f"What word is written on the {sign.colour} square?",
        answer=word,
        category="sign",
        scene=clip_scene(canvas, seconds, shapes),
    )


_OPERATORS = ("+", "−", "×")


def math_expression(rng: random.Random, n_operands: int) -> tuple[str, int]:
    """A shown expression such as ``"7 − 2 × 3"`` and its value (never negative).

    Example:
        >>> math_expression(random.Random(0), 3)
        ('7 − 7 × 1', 0)
    """
    while True:
        operands = [rng.randint(1, 9) for _ in range(n_operands)]
        operators = [rng.choice(_OPERATORS) for _ in range(n_operands - 1)]
        terms: list[int] = [operands[0]]  # products first, then sums (standard precedence)
        signs: list[int] = [1]
        for operator, operand in zip(operators, operands[1:], strict=True):
            if operator == "×":
                terms[-1] *= operand
            else:
                terms.append(operand)
                signs.append(1 if operator == "+" else -1)
        value = sum(sign * term for sign, term in zip(signs, terms, strict=True))
        if value >= 0:
            text = str(operands[0])
            for operator, operand in zip(operators, operands[1:], strict=True):
                text += f" {operator} {operand}"
            return text, value


def build_math(rng: random.Random, canvas: Canvas, index: int) -> SynthItem:
    """Math: the value of an arithmetic expression shown at the top of the clip.

    Example:
        >>> item = build_math(random.Random(0), Canvas(), 0)
        >>> item.scene.texts[0].text.endswith(" = ?"), item.answer.isdigit()
        (True, True)
    """
    seconds = rng.randint(3, 5)
    expression, value = math_expression(rng, 2 + index % 2)
    item, _ = banner(canvas, f"{expression} = ?", 0, canvas.frames(seconds))
    shapes: list[ShapeTrack] = []
    colours = rng.sample(COLOUR_NAMES, rng.randint(1, 2))
    add_distractors(rng, canvas, seconds, shapes, colours, top=canvas.text_band + canvas.gap)
    return SynthItem(
        problem="What is the value of the arithmetic expression shown in the video?",
        answer=str(value),
        category=f"{2 + index % 2}_operands",
        scene=clip_scene(canvas, seconds, shapes, texts=[item]),
    )
