"""Rasterise scenes into RGB frames with exact, integer-defined shape pixels.

Shape masks are defined by integer arithmetic so that their tight bounding box is
exactly the ``size`` x ``size`` square the scene declares:

* square: every pixel of the box;
* circle: pixel centres inside the inscribed circle;
* triangle: apex up, base along the bottom row; row ``r`` covers the centred run of
  ``2 * max(2, ceil((r + 1) / 2))`` pixels, so the bottom row spans the whole width and
  the apex is 4 pixels wide (a 2-pixel tip would blur away in yuv420p chroma).

Text is drawn with Pillow's built-in font (``ImageFont.load_default(size=...)``);
``×`` and ``−``, which that font lacks, are derived from its ``+`` glyph.

Example:
    >>> for row in shape_mask("triangle", 8).astype(int).tolist()[3:]:
    ...     print("".join(map(str, row)))
    00111100
    01111110
    01111110
    11111111
    11111111
    >>> from videorl_kit.synth.scene import Scene, ShapeTrack
    >>> scene = Scene(256, 192, 8, 16, shapes=(ShapeTrack("square", "red", 10, 0, 16, 5, 5),))
    >>> render_frame(scene, 0)[5, 5].tolist(), render_frame(scene, 0)[4, 4].tolist()
    ([230, 40, 40], [24, 24, 32])
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageFont

from videorl_kit.synth.palette import BACKGROUND, COLOURS, TEXT_ON_BACKGROUND, label_ink
from videorl_kit.synth.scene import Box, Scene, ShapeTrack, TextItem

#: Characters the built-in font does not have, drawn from its "+" glyph instead.
_DERIVED_GLYPHS = ("×", "−")


@lru_cache(maxsize=64)
def shape_mask(kind: str, size: int) -> np.ndarray:
    """Boolean ``size`` x ``size`` mask of a shape (read-only, cached).

    Example:
        >>> shape_mask("circle", 6).sum(), shape_mask("square", 6).sum()
        (np.int64(32), np.int64(36))
    """
    if size < 2 or size % 2:
        raise ValueError(f"shape size must be an even number >= 2, got {size}")
    ys, xs = np.mgrid[0:size, 0:size]
    if kind == "square":
        mask = np.ones((size, size), dtype=bool)
    elif kind == "circle":
        mask = (2 * xs + 1 - size) ** 2 + (2 * ys + 1 - size) ** 2 <= size * size
    elif kind == "triangle":
        half_width = np.maximum(2, (ys + 2) // 2)  # ceil((r + 1) / 2), apex 4 px wide
        centre = size // 2
        mask = (xs >= centre - half_width) & (xs < centre + half_width)
    else:
        raise ValueError(f"unknown shape kind {kind!r}; expected circle, square or triangle")
    mask.setflags(write=False)
    return mask


@lru_cache(maxsize=16)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _ink_crop(image: Image.Image) -> Image.Image:
    bbox = image.getbbox()
    if bbox is None:
        return Image.new("L", (0, 0))
    return image.crop(bbox)


@lru_cache(maxsize=16)
def _derived_glyph(char: str, size: int) -> tuple[Image.Image, tuple[int, int]]:
    """The mask of ``char`` and its ink offset from the pen position on the baseline."""
    font = _font(size)
    canvas = Image.new("L", (4 * size, 4 * size), 0)
    pen = (size, 3 * size)
    ImageDraw.Draw(canvas).text(pen, "+", font=font, fill=255, anchor="ls")
    ink = canvas.getbbox()
    if ink is None:  # pragma: no cover - the built-in font always has "+"
        raise ValueError(f"the built-in font has no '+' glyph at size {size}")
    plus = canvas.crop(ink)
    offset = (ink[0] - pen[0], ink[1] - pen[1])
    if char == "−":  # the horizontal bar of the plus
        pixels = np.asarray(plus)
        bar_rows = (pixels > 127).sum(axis=1) >= 0.6 * pixels.shape[1]
        return Image.fromarray(np.where(bar_rows[:, None], pixels, 0).astype(np.uint8)), offset
    # "×": two diagonal strokes as thick as the plus's, crossing where its bars cross,
    # drawn 4x supersampled and box-filtered down for antialiasing.
    pixels = np.asarray(plus) > 127
    stroke = max(1, int(pixels.all(axis=1).sum()))
    cross_x = float(np.argmax(pixels.sum(axis=0))) + 0.5
    cross_y = float(np.argmax(pixels.sum(axis=1))) + 0.5
    arm = 0.38 * plus.width
    scale = 4
    big = Image.new("L", (plus.width * scale, plus.height * scale), 0)
    draw = ImageDraw.Draw(big)
    for sign in (1, -1):
        start = ((cross_x - arm) * scale, (cross_y - sign * arm) * scale)
        end = ((cross_x + arm) * scale, (cross_y + sign * arm) * scale)
        draw.line([start, end], fill=255, width=stroke * scale)
    return big.resize(plus.size, resample=Image.Resampling.BOX), offset


def _split_runs(text: str) -> list[str]:
    runs: list[str] = []
    for char in text:
        if char in _DERIVED_GLYPHS or not runs or runs[-1] in _DERIVED_GLYPHS:
            runs.append(char)
        else:
            runs[-1] += char
    return runs


@lru_cache(maxsize=512)
def text_alpha(text: str, size: int) -> np.ndarray:
    """Coverage mask (uint8, 0..255) of ``text`` cropped to its ink (read-only, cached).

    Example:
        >>> alpha = text_alpha("7 × 3", 18)
        >>> alpha.dtype.name, alpha.max(), alpha.shape[0] < 18
        ('uint8', np.uint8(255), True)
    """
    if not text.strip():
        raise ValueError("text to draw must contain a visible character")
    font = _font(size)
    pad = size
    ascent, descent = font.getmetrics()
    width = int(font.getlength(text)) + len(text) * size + 2 * pad
    canvas = Image.new("L", (width, ascent + descent + 2 * pad), 0)
    draw = ImageDraw.Draw(canvas)
    pen, baseline = pad, pad + ascent
    plus_advance = round(font.getlength("+"))
    for run in _split_runs(text):
        if run in _DERIVED_GLYPHS:
            glyph, (dx, dy) = _derived_glyph(run, size)
            layer = Image.new("L", canvas.size, 0)
            layer.paste(glyph, (pen + dx, baseline + dy))
            canvas = ImageChops.lighter(canvas, layer)
            draw = ImageDraw.Draw(canvas)
            pen += plus_advance
        else:
            draw.text((pen, baseline), run, font=font, fill=255, anchor="ls")
            pen += round(font.getlength(run))
    alpha = np.array(_ink_crop(canvas), dtype=np.uint8)
    alpha.setflags(write=False)
    return alpha


def text_size(text: str, size: int) -> tuple[int, int]:
    """``(width, height)`` of the ink of ``text`` at font ``size``.

    Example:
        >>> w, h = text_size("HELLO", 18)
        >>> 40 < w < 70 and 10 < h < 18
        True
    """
    alpha = text_alpha(text, size)
    return alpha.shape[1], alpha.shape[0]


def text_box(item: TextItem) -> Box:
    """The ink box of a text item in frame coordinates.

    Example:
        >>> text_box(TextItem("HI", x=10, y=4, size=18, start=0, stop=1)).x1
        10
    """
    width, height = text_size(item.text, item.size)
    return Box(item.x, item.y, item.x + width, item.y + height)


def label_box(track: ShapeTrack, frame: int) -> Box:
    """The ink box of the label a shape carries, at ``frame`` (centred in its widest part).

    Example:
        >>> t = ShapeTrack("square", "red", 60, 0, 8, 20, 40, label="SUN", label_size=14)
        >>> box = label_box(t, 0)
        >>> t.box_at(0).x1 < box.x1 and box.x2 < t.box_at(0).x2
        True
    """
    if track.label is None:
        raise ValueError(f"the {track.name} carries no label")
    width, height = text_size(track.label, track.label_size)
    shape = track.box_at(frame)
    x1 = shape.x1 + (track.size - width) // 2
    centre_y = shape.y1 + (track.size * 2) // 3 if track.kind == "triangle" else shape.centre[1]
    y1 = int(centre_y) - height // 2
    return Box(x1, y1, x1 + width, y1 + height)


def _blend(frame: np.ndarray, alpha: np.ndarray, colour: tuple[int, int, int], x: int, y: int):
    height, width = frame.shape[:2]
    ah, aw = alpha.shape
    x1, y1, x2, y2 = max(x, 0), max(y, 0), min(x + aw, width), min(y + ah, height)
    if x1 >= x2 or y1 >= y2:
        return
    cover = alpha[y1 - y : y2 - y, x1 - x : x2 - x].astype(np.uint16)[..., None]
    region = frame[y1:y2, x1:x2].astype(np.uint16)
    ink = np.array(colour, dtype=np.uint16)
    frame[y1:y2, x1:x2] = ((region * (255 - cover) + ink * cover + 127) // 255).astype(np.uint8)


def _paint_shape(frame: np.ndarray, track: ShapeTrack, frame_index: int) -> None:
    box = track.box_at(frame_index)
    height, width = frame.shape[:2]
    x1, y1, x2, y2 = max(box.x1, 0), max(box.y1, 0), min(box.x2, width), min(box.y2, height)
    if x1 >= x2 or y1 >= y2:
        return
    mask = shape_mask(track.kind, track.size)[y1 - box.y1 : y2 - box.y1, x1 - box.x1 : x2 - box.x1]
    frame[y1:y2, x1:x2][mask] = COLOURS[track.colour]
    if track.label is not None:
        label = label_box(track, frame_index)
        ink = label_ink(track.colour)
        _blend(frame, text_alpha(track.label, track.label_size), ink, label.x1, label.y1)


def render_frame(scene: Scene, frame_index: int) -> np.ndarray:
    """Render frame ``frame_index`` of ``scene`` as an ``H x W x 3`` uint8 RGB array.

    Text is drawn first, shapes on top (the layouts never let them overlap).

    Example:
        >>> scene = Scene(64, 48, 8, 1, texts=(TextItem("A", 4, 4, 18, 0, 1),))
        >>> render_frame(scene, 0).shape, render_frame(scene, 0).max()
        ((48, 64, 3), np.uint8(250))
    """
    frame = np.empty((scene.height, scene.width, 3), dtype=np.uint8)
    frame[:] = BACKGROUND
    for item in scene.texts:
        if item.visible(frame_index):
            _blend(frame, text_alpha(item.text, item.size), TEXT_ON_BACKGROUND, item.x, item.y)
    for track in scene.shapes:
        if track.visible(frame_index):
            _paint_shape(frame, track, frame_index)
    return frame
