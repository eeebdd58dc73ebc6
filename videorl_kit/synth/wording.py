"""Wording shared by the task builders: numbers, options, captions and word lists.

Example:
    >>> format_number(2.0), format_number(2.5), format_number(35.777)
    ('2', '2.5', '35.78')
    >>> lettered(["Red", "Blue"])
    ['A. Red', 'B. Blue']
    >>> from videorl_kit.synth.scene import ShapeTrack
    >>> describe_motion(ShapeTrack("circle", "red", 20, 0, 8, 10, 50, vx=2))
    'a red circle moves from left to right'
"""

from __future__ import annotations

import json
import string
from typing import Any

from videorl_kit.synth.scene import ShapeTrack

#: Words for OCR clips (all upper case, at most five letters so they fit on a sign).
WORDS: tuple[str, ...] = (
    "APPLE", "RIVER", "CLOUD", "STONE", "LIGHT", "MUSIC", "PLANT", "TRAIN", "HOUSE", "BREAD",
    "CHAIR", "EARTH", "FLAME", "GRAPE", "HEART", "LEMON", "NIGHT", "OCEAN", "PAPER", "ROBOT",
    "SUGAR", "TIGER", "WATER", "ZEBRA", "BEACH", "DREAM", "EAGLE", "FROST", "GLASS", "HONEY",
    "JUICE", "KNIFE", "MAPLE", "NORTH", "OLIVE", "PIANO", "QUIET", "SHEEP", "TOWER", "WHALE",
    "SUN", "MAP", "KEY", "BOX", "CUP", "DOG", "CAT", "HAT", "PEN", "SKY",
    "BELL", "DOOR", "FISH", "GOLD", "LAMP", "MOON", "ROAD", "SHIP", "TREE", "WIND",
)  # fmt: skip

#: Phrases of the form "<verb> <noun>" for banner text.
BANNER_VERBS: tuple[str, ...] = ("OPEN", "CLOSE", "PUSH", "PULL", "STOP", "TURN", "FIND", "KEEP")

_DIRECTION_PHRASES = {
    "left": "from right to left",
    "right": "from left to right",
    "up": "from bottom to top",
    "down": "from top to bottom",
}


def format_number(value: float, decimals: int = 2) -> str:
    """A number as short text: integers without a decimal point, others rounded.

    Example:
        >>> format_number(-0.0), format_number(12.3456, decimals=1)
        ('0', '12.3')
    """
    rounded = round(float(value), decimals)
    if rounded == int(rounded):
        return str(int(rounded))
    return f"{rounded:.{decimals}f}".rstrip("0").rstrip(".")


def format_seconds(value: float) -> str:
    """A time as it appears in questions, e.g. ``"2 s"`` or ``"1.5 s"``.

    Example:
        >>> format_seconds(3.0)
        '3 s'
    """
    return f"{format_number(value)} s"


def lettered(texts: list[str]) -> list[str]:
    """Options as ``["A. text", "B. text", ...]``.

    Example:
        >>> lettered(["Yes", "No"])
        ['A. Yes', 'B. No']
    """
    if len(texts) > len(string.ascii_uppercase):
        raise ValueError(f"at most 26 options, got {len(texts)}")
    return [f"{string.ascii_uppercase[i]}. {text}" for i, text in enumerate(texts)]


def letter_of(texts: list[str], correct: str) -> str:
    """The option letter of ``correct`` in ``texts``.

    Example:
        >>> letter_of(["Red", "Blue", "Green"], "Green")
        'C'
    """
    return string.ascii_uppercase[texts.index(correct)]


def json_answer(value: dict[str, Any]) -> str:
    """A grounding answer as a JSON string (EasyVideoR1 stores these as strings).

    Example:
        >>> json_answer({"time": [1.5, 4.0]})
        '{"time": [1.5, 4.0]}'
    """
    return json.dumps(value)


def article(word: str) -> str:
    """``"a"`` or ``"an"`` for ``word``.

    Example:
        >>> article("orange"), article("red")
        ('an', 'a')
    """
    return "an" if word[:1].lower() in "aeiou" else "a"


def describe_motion(track: ShapeTrack) -> str:
    """A lower-case clause saying what the shape does, e.g. ``"a blue square stays still"``.

    Raises ValueError for diagonal motion, which has no single direction word.

    Example:
        >>> t = ShapeTrack("square", "blue", 20, 0, 8, 10, 50, vy=2)
        >>> describe_motion(t)
        'a blue square moves from top to bottom'
    """
    subject = f"{article(track.colour)} {track.colour} {track.kind}"
    direction = track.direction
    if direction is None:
        raise ValueError(f"the {track.name} moves diagonally; captions need axis-aligned motion")
    if direction == "still":
        return f"{subject} stays still"
    return f"{subject} moves {_DIRECTION_PHRASES[direction]}"


def caption(tracks: list[ShapeTrack]) -> str:
    """A one-sentence caption of one or two shapes, first shape first.

    Example:
        >>> from videorl_kit.synth.scene import ShapeTrack
        >>> a = ShapeTrack("circle", "red", 20, 0, 8, 10, 50, vx=2)
        >>> b = ShapeTrack("square", "blue", 20, 0, 8, 100, 50)
        >>> caption([a, b])
        'A red circle moves from left to right while a blue square stays still.'
    """
    if not 1 <= len(tracks) <= 2:
        raise ValueError(f"captions describe one or two shapes, got {len(tracks)}")
    clauses = [describe_motion(track) for track in tracks]
    if len(clauses) == 1:
        sentence = clauses[0]
    else:
        joiner = " while " if tracks[1].direction == "still" else " and "
        sentence = clauses[0] + joiner + clauses[1]
    return sentence[0].upper() + sentence[1:] + "."
