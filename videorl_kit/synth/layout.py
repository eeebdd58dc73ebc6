"""Random but unambiguous placement of shapes in a clip.

Every shape stays fully inside the frame (``margin`` pixels from each edge) for as long
as it is visible, and any two shapes visible in the same frame keep at least ``gap``
pixels apart, so each shape is one clean connected region and its box is never
clipped or shared. Positions, sizes and velocities are even numbers of pixels, which
keeps shape edges on the 2x2 chroma grid of yuv420p.

Timing uses a half-second grid: shapes appear and disappear at ``k + 0.5`` seconds
(or are there from the first frame or until the last), while questions ask about whole
seconds, so no question falls on the frame where something changes.

Example:
    >>> import random
    >>> canvas = Canvas()
    >>> rng = random.Random(0)
    >>> a = place(rng, canvas, [], kind="circle", colour="red", start=0, stop=32)
    >>> b = place(rng, canvas, [a], kind="square", colour="blue", start=0, stop=32, motion="right")
    >>> b.direction
    'right'
    >>> any(a.box_at(i).expanded(canvas.gap).intersects(b.box_at(i)) for i in range(32))
    False
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.synth.scene import Box, ShapeTrack


class LayoutError(VideoRLKitError, RuntimeError):
    """No placement satisfying the constraints was found (a generator bug, not user input)."""


@dataclass(frozen=True)
class Canvas:
    """Clip format and layout rules shared by all synthetic tasks.

    Example:
        >>> Canvas().half_second_frames(4)
        [4, 12, 20, 28]
    """

    width: int = 256
    height: int = 192
    fps: int = 8
    margin: int = 4
    gap: int = 6
    min_size: int = 22
    max_size: int = 40
    text_band: int = 36

    def frames(self, seconds: int) -> int:
        """Number of frames in a clip of ``seconds`` seconds."""
        return seconds * self.fps

    def half_second_frames(self, seconds: int) -> list[int]:
        """Frames at ``k + 0.5`` seconds for ``k`` in ``0 .. seconds - 1``."""
        return [k * self.fps + self.fps // 2 for k in range(seconds)]


#: Per-frame speeds (pixels per frame) a moving shape may get; 16..48 px/s at 8 fps.
SPEEDS: tuple[int, ...] = (2, 4, 6)

_AXIS_DIRECTIONS = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}


@dataclass(frozen=True)
class KeepOut:
    """A region no shape may touch during frames ``start .. stop - 1`` (e.g. text)."""

    box: Box
    start: int
    stop: int


def _even(rng: random.Random, low: int, high: int) -> int:
    """An even integer in ``[low, high]``; raises ValueError when there is none."""
    first = low + (low % 2)
    if first > high:
        raise ValueError("empty range")
    return first + 2 * rng.randrange((high - first) // 2 + 1)


def _velocity(rng: random.Random, motion: str | tuple[int, int]) -> tuple[int, int]:
    if isinstance(motion, tuple):
        return motion
    if motion == "static":
        return (0, 0)
    if motion in _AXIS_DIRECTIONS:
        dx, dy = _AXIS_DIRECTIONS[motion]
        speed = rng.choice(SPEEDS)
        return (dx * speed, dy * speed)
    if motion == "axis":
        return _velocity(rng, rng.choice(sorted(_AXIS_DIRECTIONS)))
    if motion == "moving":
        while True:
            vx, vy = rng.choice((-4, -2, 0, 2, 4)), rng.choice((-4, -2, 0, 2, 4))
            if (vx, vy) != (0, 0):
                return (vx, vy)
    if motion == "any":
        return _velocity(rng, rng.choice(("static", "axis", "moving")))
    raise ValueError(f"unknown motion {motion!r}")


def _box_near(track: ShapeTrack, frame: int) -> Box:
    """The box at ``frame``, or at the nearest frame in which the shape is visible."""
    return track.box_at(min(max(frame, track.start), track.last_frame))


def clear_of(
    track: ShapeTrack,
    others: list[ShapeTrack],
    keep_out: list[KeepOut],
    gap: int,
    linger: int = 0,
) -> bool:
    """Whether ``track`` keeps ``gap`` pixels from every shape and keep-out region.

    Shapes are also compared for ``linger`` frames before and after their visible
    frames (at their first/last position), so a shape never appears where another
    one has just vanished and the two cannot be mistaken for one.

    Example:
        >>> a = ShapeTrack("circle", "red", 20, start=0, stop=8, x=10, y=10)
        >>> b = ShapeTrack("circle", "red", 20, start=8, stop=16, x=12, y=10)
        >>> clear_of(b, [a], [], gap=6), clear_of(b, [a], [], gap=6, linger=4)
        (True, False)
    """
    for other in others:
        first = max(track.start, other.start) - linger
        end = min(track.stop, other.stop) + linger
        for frame in range(first, end):
            if _box_near(track, frame).expanded(gap).intersects(_box_near(other, frame)):
                return False
    for region in keep_out:
        for frame in range(max(track.start, region.start), min(track.stop, region.stop)):
            if track.box_at(frame).expanded(gap).intersects(region.box):
                return False
    return True


def place(
    rng: random.Random,
    canvas: Canvas,
    placed: list[ShapeTrack],
    *,
    kind: str,
    colour: str,
    start: int,
    stop: int,
    motion: str | tuple[int, int] = "any",
    size: int | None = None,
    top: int | None = None,
    min_travel: int = 24,
    keep_out: list[KeepOut] | None = None,
    label: str | None = None,
    label_size: int = 14,
    attempts: int = 500,
) -> ShapeTrack:
    """A new shape visible in frames ``start .. stop - 1`` that fits with ``placed``.

    ``motion`` is ``"static"``, ``"left"``/``"right"``/``"up"``/``"down"``, ``"axis"``
    (any of those four), ``"moving"`` (any non-zero velocity, diagonals included),
    ``"any"`` or an explicit ``(vx, vy)`` in pixels per frame. A moving shape travels at
    least ``min_travel`` pixels. ``top`` is the smallest allowed ``y`` (default: the
    margin). Raises :class:`LayoutError` when no placement is found.

    Example:
        >>> track = place(random.Random(0), Canvas(), [], kind="square", colour="red",
        ...               start=0, stop=16, motion="up", size=24)
        >>> track.size, track.direction, track.box_at(15).inside(256, 192, margin=4)
        (24, 'up', True)
    """
    if not 0 <= start < stop:
        raise ValueError(f"bad visibility frames {start}..{stop}")
    keep_out = keep_out or []
    top = canvas.margin if top is None else top
    steps = stop - 1 - start
    for _ in range(attempts):
        side = size if size is not None else _even(rng, canvas.min_size, canvas.max_size)
        vx, vy = _velocity(rng, motion)
        if (vx, vy) != (0, 0) and (abs(vx) + abs(vy)) * steps < min_travel:
            continue
        dx, dy = vx * steps, vy * steps
        try:
            right = canvas.width - canvas.margin - side
            bottom = canvas.height - canvas.margin - side
            x = _even(rng, canvas.margin - min(0, dx), right - max(0, dx))
            y = _even(rng, top - min(0, dy), bottom - max(0, dy))
        except ValueError:
            continue
        track = ShapeTrack(
            kind, colour, side, start, stop, x, y, vx, vy, label=label, label_size=label_size
        )
        if clear_of(track, placed, keep_out, canvas.gap, linger=canvas.fps // 2):
            return track
    raise LayoutError(
        f"could not place a {colour} {kind} (frames {start}..{stop}, motion {motion!r}) "
        f"among {len(placed)} shapes after {attempts} attempts"
    )
