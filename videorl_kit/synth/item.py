"""What a task builder returns, and small random helpers the builders share.

Example:
    >>> import random
    >>> from videorl_kit.synth.layout import Canvas
    >>> start, stop = random_interval(random.Random(1), Canvas(), seconds=4)
    >>> stop - start >= 8 and (start == 0 or start % 8 == 4)
    True
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from videorl_kit.synth.layout import Canvas, KeepOut, place
from videorl_kit.synth.palette import SHAPE_KINDS
from videorl_kit.synth.scene import Scene, ShapeTrack, TextItem


@dataclass(frozen=True)
class SynthItem:
    """One generated question with its exact answer and the scene it is about.

    ``scene`` is a clip for video tasks, a one-frame scene for image tasks and None for
    text-only tasks; ``category`` names the question template (e.g. ``"appears_last"``).
    """

    problem: str
    answer: str
    category: str
    scene: Scene | None = None
    options: list[str] | None = None


def random_interval(
    rng: random.Random,
    canvas: Canvas,
    seconds: int,
    *,
    min_frames: int | None = None,
    from_start: bool | None = None,
    to_end: bool | None = None,
) -> tuple[int, int]:
    """Visible frames ``(start, stop)`` on the half-second grid of a ``seconds`` clip.

    ``start`` is 0 or a ``k + 0.5`` s frame, ``stop`` a ``k + 0.5`` s frame or the clip
    length; the shape is visible for at least ``min_frames`` (default one second).
    ``from_start``/``to_end`` force (True) or forbid (False) touching the clip's ends;
    None lets chance decide.
    """
    n_frames = canvas.frames(seconds)
    min_frames = canvas.fps if min_frames is None else min_frames
    halves = canvas.half_second_frames(seconds)
    starts = {True: [0], False: halves, None: [0, *halves]}[from_start]
    stops = {True: [n_frames], False: halves, None: [*halves, n_frames]}[to_end]
    pairs = [(a, b) for a in starts for b in stops if b - a >= min_frames]
    if not pairs:
        raise ValueError(f"no interval of >= {min_frames} frames in a {seconds} s clip")
    return rng.choice(pairs)


def pick_kind(rng: random.Random) -> str:
    """A random shape kind.

    Example:
        >>> pick_kind(random.Random(0)) in SHAPE_KINDS
        True
    """
    return rng.choice(SHAPE_KINDS)


def clip_scene(
    canvas: Canvas,
    seconds: int,
    shapes: list[ShapeTrack],
    texts: list[TextItem] | tuple[TextItem, ...] = (),
) -> Scene:
    """A ``seconds``-long clip of ``canvas`` format holding ``shapes`` and ``texts``.

    Example:
        >>> clip_scene(Canvas(), 4, []).n_frames
        32
    """
    return Scene(
        width=canvas.width,
        height=canvas.height,
        fps=canvas.fps,
        n_frames=canvas.frames(seconds),
        shapes=tuple(shapes),
        texts=tuple(texts),
    )


def add_distractors(
    rng: random.Random,
    canvas: Canvas,
    seconds: int,
    shapes: list[ShapeTrack],
    colours: list[str],
    *,
    top: int | None = None,
    keep_out: list[KeepOut] | None = None,
) -> None:
    """Append one shape per colour in ``colours`` with random kind, interval and motion.

    Example:
        >>> shapes = []
        >>> add_distractors(random.Random(0), Canvas(), 4, shapes, ["red", "blue"])
        >>> [s.colour for s in shapes]
        ['red', 'blue']
    """
    for colour in colours:
        start, stop = random_interval(rng, canvas, seconds)
        shapes.append(
            place(
                rng,
                canvas,
                shapes,
                kind=pick_kind(rng),
                colour=colour,
                start=start,
                stop=stop,
                top=top,
                keep_out=keep_out,
            )
        )
