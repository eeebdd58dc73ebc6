"""Scene descriptions: the single source of every ground-truth answer.

A :class:`Scene` lists shapes (each a :class:`ShapeTrack`: kind, colour, size, the frames
in which it is visible and a constant per-frame velocity) and text items. Everything is
integer arithmetic on frame indices, so the box of a shape at any frame is exact.

Conventions (also written into ``manifest.json``):

* Frame ``i`` is shown at time ``i / fps`` seconds and covers ``[i / fps, (i + 1) / fps)``.
  A shape visible in frames ``start .. stop - 1`` is visible during ``[start / fps,
  stop / fps)``; that pair is its temporal span ``{"time": [s, e]}``.
* Boxes are ``[x1, y1, x2, y2]`` integer pixels of the original frame; ``x1``/``y1`` are
  inclusive and ``x2``/``y2`` exclusive: the shape covers pixels ``x1 <= x < x2`` and
  ``y1 <= y < y2``, and the box is the tight bounding box of its pixels.

Example:
    >>> track = ShapeTrack("circle", "red", size=20, start=8, stop=24, x=10, y=50, vx=2)
    >>> track.box_at(8).as_list(), track.box_at(12).as_list()
    ([10, 50, 30, 70], [18, 50, 38, 70])
    >>> scene = Scene(width=256, height=192, fps=8, n_frames=32, shapes=(track,))
    >>> scene.span_s(track)
    (1.0, 3.0)
    >>> scene.visible_shapes(4)
    ()
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Box:
    """An integer pixel box ``[x1, y1, x2, y2]``, ``x2``/``y2`` exclusive.

    Example:
        >>> Box(0, 0, 10, 4).area
        40
        >>> Box(0, 0, 10, 4).expanded(2).as_list()
        [-2, -2, 12, 6]
    """

    x1: int
    y1: int
    x2: int
    y2: int

    @property
    def width(self) -> int:
        """Width in pixels."""
        return self.x2 - self.x1

    @property
    def height(self) -> int:
        """Height in pixels."""
        return self.y2 - self.y1

    @property
    def area(self) -> int:
        """Area in pixels (0 for an empty box)."""
        return max(0, self.width) * max(0, self.height)

    @property
    def centre(self) -> tuple[float, float]:
        """Centre ``(x, y)`` in pixel coordinates."""
        return ((self.x1 + self.x2) / 2, (self.y1 + self.y2) / 2)

    def as_list(self) -> list[int]:
        """The box as ``[x1, y1, x2, y2]``."""
        return [self.x1, self.y1, self.x2, self.y2]

    def expanded(self, margin: int) -> Box:
        """The box grown by ``margin`` pixels on every side."""
        return Box(self.x1 - margin, self.y1 - margin, self.x2 + margin, self.y2 + margin)

    def intersects(self, other: Box) -> bool:
        """Whether the two boxes share at least one pixel."""
        return (
            self.x1 < other.x2 and other.x1 < self.x2 and self.y1 < other.y2 and other.y1 < self.y2
        )

    def inside(self, width: int, height: int, margin: int = 0) -> bool:
        """Whether the box lies in a ``width`` x ``height`` frame, ``margin`` px from its edges."""
        return (
            self.x1 >= margin
            and self.y1 >= margin
            and self.x2 <= width - margin
            and self.y2 <= height - margin
        )


@dataclass(frozen=True)
class ShapeTrack:
    """One shape: what it is, when it is visible and how it moves.

    ``x``/``y`` is the top-left corner of its box at frame ``start``; at frame ``i`` the
    corner is ``(x + vx * (i - start), y + vy * (i - start))``. ``label`` is text drawn on
    the shape (centred; dark letters on light colours, white on dark ones) and
    ``label_size`` its font size in pixels.

    Example:
        >>> t = ShapeTrack("square", "blue", size=24, start=0, stop=16, x=100, y=60, vy=-2)
        >>> t.visible(15), t.visible(16)
        (True, False)
        >>> t.direction
        'up'
    """

    kind: str
    colour: str
    size: int
    start: int
    stop: int
    x: int
    y: int
    vx: int = 0
    vy: int = 0
    label: str | None = None
    label_size: int = 14

    def visible(self, frame: int) -> bool:
        """Whether the shape is drawn in ``frame``."""
        return self.start <= frame < self.stop

    def box_at(self, frame: int) -> Box:
        """The exact box at ``frame`` (extrapolated when the shape is not visible)."""
        dt = frame - self.start
        x1 = self.x + self.vx * dt
        y1 = self.y + self.vy * dt
        return Box(x1, y1, x1 + self.size, y1 + self.size)

    @property
    def last_frame(self) -> int:
        """The last frame in which the shape is visible."""
        return self.stop - 1

    @property
    def moving(self) -> bool:
        """Whether the shape moves at all."""
        return self.vx != 0 or self.vy != 0

    @property
    def distance_px(self) -> float:
        """Distance in pixels between its positions in its first and last visible frames."""
        return math.hypot(self.vx, self.vy) * (self.last_frame - self.start)

    @property
    def direction(self) -> str | None:
        """``left``/``right``/``up``/``down`` for axis-aligned motion, ``still``, or None.

        Diagonal motion has no single direction word and returns None.
        """
        if self.vx == 0 and self.vy == 0:
            return "still"
        if self.vy == 0:
            return "right" if self.vx > 0 else "left"
        if self.vx == 0:
            return "down" if self.vy > 0 else "up"
        return None

    @property
    def name(self) -> str:
        """How questions name the shape, e.g. ``"red circle"``."""
        return f"{self.colour} {self.kind}"


@dataclass(frozen=True)
class TextItem:
    """Text drawn on the background with its ink starting near ``(x, y)``.

    ``size`` is the font size in pixels; the text is visible in frames ``start .. stop-1``.

    Example:
        >>> TextItem("HELLO", x=10, y=6, size=18, start=0, stop=8).visible(8)
        False
    """

    text: str
    x: int
    y: int
    size: int
    start: int
    stop: int

    def visible(self, frame: int) -> bool:
        """Whether the text is drawn in ``frame``."""
        return self.start <= frame < self.stop


@dataclass(frozen=True)
class Scene:
    """A whole clip (or, with ``n_frames == 1``, a still image).

    Example:
        >>> Scene(width=256, height=192, fps=8, n_frames=40).duration_s
        5.0
    """

    width: int
    height: int
    fps: int
    n_frames: int
    shapes: tuple[ShapeTrack, ...] = ()
    texts: tuple[TextItem, ...] = field(default=())

    @property
    def duration_s(self) -> float:
        """Length of the clip in seconds (``n_frames / fps``)."""
        return self.n_frames / self.fps

    def time_of(self, frame: int) -> float:
        """Time in seconds at which ``frame`` is shown."""
        return frame / self.fps

    def frame_at(self, seconds: float) -> int:
        """The frame shown at ``seconds``; raises ValueError when it is not a frame time."""
        frame = round(seconds * self.fps)
        if not math.isclose(frame / self.fps, seconds) or not 0 <= frame < self.n_frames:
            raise ValueError(f"{seconds} s is not a frame time of this {self.duration_s} s clip")
        return frame

    def span_s(self, track: ShapeTrack) -> tuple[float, float]:
        """The temporal span ``(s, e)`` in seconds during which ``track`` is visible."""
        return (self.time_of(track.start), self.time_of(track.stop))

    def visible_shapes(self, frame: int) -> tuple[ShapeTrack, ...]:
        """The shapes drawn in ``frame``."""
        return tuple(s for s in self.shapes if s.visible(frame))

    def whole_seconds(self, track: ShapeTrack) -> list[int]:
        """Integer seconds ``k`` whose frame shows ``track`` (``start <= k * fps < stop``)."""
        first = -(-max(track.start, 0) // self.fps)
        last = (min(track.stop, self.n_frames) - 1) // self.fps
        return list(range(first, last + 1))
