"""Named colours and shape kinds of the synthetic scenes.

The colours are saturated and far apart in RGB and in chroma, so they survive H.264
(yuv420p) compression and a nearest-colour lookup on decoded pixels recovers the name.

Example:
    >>> COLOURS["red"]
    (230, 40, 40)
    >>> nearest_colour((225, 45, 38))
    'red'
    >>> SHAPE_KINDS
    ('circle', 'square', 'triangle')
"""

from __future__ import annotations

#: Shape colours by name (RGB). Every name starts with a consonant ("a red circle").
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (230, 40, 40),
    "green": (40, 200, 70),
    "blue": (50, 90, 240),
    "yellow": (240, 220, 40),
    "purple": (170, 70, 220),
    "cyan": (40, 210, 220),
}

#: Colour of the empty frame (a dark blue-grey).
BACKGROUND: tuple[int, int, int] = (24, 24, 32)

#: Colour of banner text drawn on the background.
TEXT_ON_BACKGROUND: tuple[int, int, int] = (250, 250, 250)

#: Dark ink for labels on light shapes (see :func:`label_ink`).
DARK_INK: tuple[int, int, int] = (16, 16, 16)

#: Shape kinds, in the order used for fixed option lists.
SHAPE_KINDS: tuple[str, ...] = ("circle", "square", "triangle")

COLOUR_NAMES: tuple[str, ...] = tuple(COLOURS)


def label_ink(colour: str) -> tuple[int, int, int]:
    """Ink for text written on a shape of ``colour``: dark on light colours, else white.

    Example:
        >>> label_ink("yellow"), label_ink("blue")
        ((16, 16, 16), (250, 250, 250))
    """
    r, g, b = COLOURS[colour]
    return DARK_INK if 0.299 * r + 0.587 * g + 0.114 * b >= 128 else TEXT_ON_BACKGROUND


def nearest_colour(rgb: tuple[int, int, int] | list[int]) -> str:
    """Return the palette name closest to ``rgb``, or ``"background"``/``"text"``.

    Example:
        >>> nearest_colour((20, 20, 30))
        'background'
    """
    candidates = {**COLOURS, "background": BACKGROUND, "text": TEXT_ON_BACKGROUND}
    r, g, b = (int(c) for c in rgb)
    return min(
        candidates,
        key=lambda name: (
            (candidates[name][0] - r) ** 2
            + (candidates[name][1] - g) ** 2
            + (candidates[name][2] - b) ** 2
        ),
    )
