"""Pixel-level reading of synthetic clips, independent of the generator's scene objects.

These helpers decode what was actually written (PyAV for mp4, Pillow for PNG), assign
each pixel to a palette colour when it is close enough, and find connected shapes. The
tests use them to recompute answers from pixels and compare with the stored answers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import av
import numpy as np
from PIL import Image

from videorl_kit.synth.palette import BACKGROUND, COLOURS, TEXT_ON_BACKGROUND

#: A pixel belongs to a colour only when it is this close (RGB distance) to it.
COLOUR_TOLERANCE = 60
#: Components smaller than this (compression specks) are ignored.
MIN_COMPONENT_PIXELS = 40

_NAMES = ["background", "text", *COLOURS]
_RGB = np.array([BACKGROUND, TEXT_ON_BACKGROUND, *COLOURS.values()], dtype=np.int32)


def decode_video(path: Path) -> tuple[np.ndarray, list[float]]:
    """All frames (T x H x W x 3 uint8) and their presentation times in seconds."""
    frames, times = [], []
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            frames.append(frame.to_ndarray(format="rgb24"))
            times.append(float(frame.time))
    return np.stack(frames), times


def read_png(path: Path) -> np.ndarray:
    """An RGB PNG as H x W x 3 uint8."""
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


_RGB_F = _RGB.astype(np.float32)
_RGB_NORM = (_RGB_F**2).sum(axis=1)


def classify(frame: np.ndarray) -> np.ndarray:
    """Index into ``_NAMES`` per pixel, or -1 where no palette colour is close enough."""
    flat = frame.reshape(-1, 3).astype(np.int32)
    labels = np.full(len(flat), -1, dtype=np.int8)
    # most pixels are background: anything within 30 of it is nearer to it than to any colour
    near_background = ((flat - _RGB[0]) ** 2).sum(axis=1) <= 30**2
    labels[near_background] = 0
    rest = np.flatnonzero(~near_background)
    pixels = flat[rest].astype(np.float32)
    # |p - c|^2 = |p|^2 - 2 p.c + |c|^2, one small matrix product for all palette colours
    dist2 = (pixels**2).sum(axis=1, keepdims=True) - 2 * pixels @ _RGB_F.T + _RGB_NORM
    nearest = dist2.argmin(axis=1)
    close = dist2[np.arange(len(nearest)), nearest] <= COLOUR_TOLERANCE**2
    labels[rest] = np.where(close, nearest, -1)
    return labels.reshape(frame.shape[:2])


def colour_index(name: str) -> int:
    """Index of a palette colour name in the output of :func:`classify`."""
    return _NAMES.index(name)


@dataclass(frozen=True)
class Component:
    """One connected region of a colour: its tight box (x2/y2 exclusive) and shape."""

    colour: str
    x1: int
    y1: int
    x2: int
    y2: int
    pixels: int
    span_fill: float  # sum over rows of (rightmost - leftmost + 1) / box area

    @property
    def box(self) -> list[int]:
        return [self.x1, self.y1, self.x2, self.y2]

    @property
    def centre(self) -> tuple[float, float]:
        return ((self.x1 + self.x2) / 2, (self.y1 + self.y2) / 2)

    @property
    def kind(self) -> str:
        """Square, circle or triangle from how the rows fill the box (labels don't matter)."""
        if self.span_fill > 0.9:
            return "square"
        if self.span_fill > 0.65:
            return "circle"
        return "triangle"


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def components(mask: np.ndarray, colour: str) -> list[Component]:
    """Four-connected components of ``mask`` with at least MIN_COMPONENT_PIXELS pixels."""
    parent: list[int] = []
    runs: list[tuple[int, int, int, int]] = []  # (row, start, end, run id)
    previous: list[tuple[int, int, int]] = []
    rows_with_pixels = np.flatnonzero(mask.any(axis=1))
    last_row = -2
    for y in rows_with_pixels:
        if y != last_row + 1:
            previous = []
        edges = np.diff(np.concatenate(([0], mask[y].astype(np.int8), [0])))
        current = []
        for start, end in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
            run_id = len(parent)
            parent.append(run_id)
            for p_start, p_end, p_id in previous:
                if p_start < end and start < p_end:
                    parent[_find(parent, run_id)] = _find(parent, p_id)
            current.append((int(start), int(end), run_id))
            runs.append((int(y), int(start), int(end), run_id))
        previous = current
        last_row = int(y)
    groups: dict[int, list[tuple[int, int, int]]] = {}
    for y, start, end, run_id in runs:
        groups.setdefault(_find(parent, run_id), []).append((y, start, end))
    found = []
    for group in groups.values():
        pixels = sum(end - start for _, start, end in group)
        if pixels < MIN_COMPONENT_PIXELS:
            continue
        x1 = min(start for _, start, _ in group)
        x2 = max(end for _, _, end in group)
        y1 = min(y for y, _, _ in group)
        y2 = max(y for y, _, _ in group) + 1
        spans: dict[int, tuple[int, int]] = {}
        for y, start, end in group:
            low, high = spans.get(y, (start, end))
            spans[y] = (min(low, start), max(high, end))
        span_fill = sum(high - low for low, high in spans.values()) / ((x2 - x1) * (y2 - y1))
        found.append(Component(colour, x1, y1, x2, y2, pixels, span_fill))
    return sorted(found, key=lambda c: (c.y1, c.x1))


class Frame:
    """One decoded frame with lazily computed colour labels and shape components."""

    def __init__(self, rgb: np.ndarray):
        self.rgb = rgb

    @cached_property
    def labels(self) -> np.ndarray:
        return classify(self.rgb)

    def mask(self, colour: str) -> np.ndarray:
        return self.labels == colour_index(colour)

    def shapes(self, colour: str | None = None) -> list[Component]:
        """Shape components of one palette colour, or of every shape colour."""
        names = [colour] if colour else list(COLOURS)
        return [c for name in names for c in components(self.mask(name), name)]


class Clip:
    """A decoded clip: frames, times and per-frame shape lookups."""

    def __init__(self, frames: np.ndarray, times: list[float], fps: int):
        self.frames = [Frame(f) for f in frames]
        self.times = times
        self.fps = fps

    @classmethod
    def from_mp4(cls, path: Path, fps: int) -> Clip:
        frames, times = decode_video(path)
        return cls(frames, times, fps)

    def at(self, seconds: float) -> Frame:
        return self.frames[round(seconds * self.fps)]

    def frames_with(self, colour: str, kind: str | None = None) -> list[int]:
        """Indices of frames showing a shape of ``colour`` (and ``kind``)."""
        return [
            i
            for i, frame in enumerate(self.frames)
            if any(kind is None or c.kind == kind for c in frame.shapes(colour))
        ]

    def only(self, index: int, colour: str) -> Component:
        """The single component of ``colour`` in frame ``index`` (asserts there is one)."""
        found = self.frames[index].shapes(colour)
        assert len(found) == 1, f"frame {index}: expected one {colour} shape, found {found}"
        return found[0]

    def appearances(self, colour: str | None = None) -> int:
        """How many shapes appear over the clip: components with no overlapping predecessor
        of the same colour in the previous frame."""
        count, previous = 0, []
        for frame in self.frames:
            current = frame.shapes(colour)
            for comp in current:
                grown = [comp.x1 - 8, comp.y1 - 8, comp.x2 + 8, comp.y2 + 8]
                if not any(
                    p.colour == comp.colour
                    and p.x1 < grown[2]
                    and grown[0] < p.x2
                    and p.y1 < grown[3]
                    and grown[1] < p.y2
                    for p in previous
                ):
                    count += 1
            previous = current
        return count


def direction(first: Component, last: Component) -> str:
    """left/right/up/down/still from the centre displacement (axis-aligned motion)."""
    dx = last.centre[0] - first.centre[0]
    dy = last.centre[1] - first.centre[1]
    if abs(dx) <= 1 and abs(dy) <= 1:
        return "still"
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def distance(first: Component, last: Component) -> float:
    return math.hypot(last.centre[0] - first.centre[0], last.centre[1] - first.centre[1])


def iou(a: list[int], b: list[int]) -> float:
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union else 0.0
