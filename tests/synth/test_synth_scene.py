"""Scenes, rasterisation, layout rules and encoding, checked without the pixel oracle."""

from __future__ import annotations

import re
from pathlib import Path

import av
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from videorl_kit.synth import TASKS, build_item
from videorl_kit.synth.encode import write_mp4, write_png
from videorl_kit.synth.layout import Canvas
from videorl_kit.synth.palette import BACKGROUND, COLOURS, label_ink, nearest_colour
from videorl_kit.synth.raster import render_frame, shape_mask, text_alpha, text_box
from videorl_kit.synth.scene import Box, Scene, ShapeTrack
from videorl_kit.synth.wording import caption, format_number

CANVAS = Canvas()


@pytest.mark.parametrize("kind", ["circle", "square", "triangle"])
@pytest.mark.parametrize("size", [4, 10, 22, 40, 64])
def test_shape_masks_fill_exactly_their_box(kind: str, size: int) -> None:
    mask = shape_mask(kind, size)
    assert mask.shape == (size, size)
    assert mask[0].any() and mask[-1].any() and mask[:, 0].any() and mask[:, -1].any()
    assert (mask == mask[:, ::-1]).all()  # left-right symmetric
    fill = mask.mean()
    expected = {"square": (1.0, 1.0), "circle": (0.74, 0.9), "triangle": (0.5, 0.75)}[kind]
    assert expected[0] <= fill <= expected[1] or size == 4


def test_shape_mask_rejects_odd_sizes_and_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="even number"):
        shape_mask("circle", 21)
    with pytest.raises(ValueError, match="unknown shape kind 'star'"):
        shape_mask("star", 20)


def test_track_and_scene_timing() -> None:
    track = ShapeTrack("square", "blue", 20, start=4, stop=28, x=10, y=60, vx=2, vy=-2)
    scene = Scene(256, 192, 8, 32, shapes=(track,))
    assert track.box_at(4) == Box(10, 60, 30, 80)
    assert track.box_at(27) == Box(56, 14, 76, 34)
    assert track.distance_px == pytest.approx(23 * 2 * 2**0.5)
    assert track.direction is None  # diagonal
    assert scene.span_s(track) == (0.5, 3.5)
    assert scene.whole_seconds(track) == [1, 2, 3]
    assert scene.frame_at(2.0) == 16
    with pytest.raises(ValueError, match="not a frame time"):
        scene.frame_at(0.3)
    with pytest.raises(ValueError, match="not a frame time"):
        scene.frame_at(4.0)


def test_render_frame_paints_exact_shape_pixels_and_labels() -> None:
    sign = ShapeTrack("square", "blue", 64, 0, 1, 20, 40, label="MAP")
    ball = ShapeTrack("circle", "yellow", 30, 0, 1, 150, 100)
    frame = render_frame(Scene(256, 192, 8, 1, shapes=(sign, ball)), 0)
    region = frame[100:130, 150:180]
    colour = np.array(COLOURS["yellow"])
    assert ((region == colour).all(axis=-1) == shape_mask("circle", 30)).all()
    outside = np.ones(frame.shape[:2], dtype=bool)
    outside[40:104, 20:84] = False
    outside[100:130, 150:180] = False
    assert (frame[outside] == np.array(BACKGROUND)).all()
    ink = np.array(label_ink("blue"))
    on_sign = frame[40:104, 20:84]
    assert (np.abs(on_sign.astype(int) - ink).sum(axis=-1) < 30).sum() > 20  # the label is there


def test_operator_glyphs_are_drawn_and_distinct() -> None:
    plus, times, minus = (text_alpha(f"3 {op} 4", 18) for op in ("+", "×", "−"))
    letter_x = text_alpha("3 x 4", 18)
    assert plus.shape[0] == times.shape[0] == minus.shape[0]  # same line height
    for a, b in [(plus, times), (plus, minus), (times, minus)]:
        assert a.shape != b.shape or (a != b).any()
    assert times.shape != letter_x.shape or (times != letter_x).any()
    with pytest.raises(ValueError, match="visible character"):
        text_alpha("   ", 18)


def test_palette_round_trip_and_label_contrast() -> None:
    for name, rgb in COLOURS.items():
        assert nearest_colour(rgb) == name
        ink = np.array(label_ink(name))
        assert np.abs(ink - np.array(rgb)).sum() > 150, name


def test_wording() -> None:
    still = ShapeTrack("triangle", "green", 20, 0, 8, 10, 10)
    up = ShapeTrack("square", "red", 20, 0, 8, 10, 100, vy=-2)
    assert caption([up, still]) == (
        "A red square moves from bottom to top while a green triangle stays still."
    )
    with pytest.raises(ValueError, match="diagonally"):
        caption([ShapeTrack("circle", "red", 20, 0, 8, 10, 10, vx=2, vy=2)])
    assert format_number(84.852813) == "84.85" and format_number(40.0) == "40"


_THE_SHAPE = re.compile(r"the (\w+) (circle|square|triangle)\b")


def _check_layout(scene: Scene) -> None:
    n = scene.n_frames
    grid = {0, n, *CANVAS.half_second_frames(n // CANVAS.fps)} if n > 1 else {0, 1}
    for track in scene.shapes:
        assert track.start in grid and track.stop in grid, "visibility off the half-second grid"
        assert track.size % 2 == 0 and track.x % 2 == 0 and track.y % 2 == 0
        assert track.vx % 2 == 0 and track.vy % 2 == 0
        for frame in range(track.start, track.stop):
            assert track.box_at(frame).inside(scene.width, scene.height, CANVAS.margin)
            for text in scene.texts:
                if text.visible(frame):
                    assert not track.box_at(frame).expanded(CANVAS.gap).intersects(text_box(text))
    for i, a in enumerate(scene.shapes):
        for b in scene.shapes[i + 1 :]:
            for frame in range(max(a.start, b.start), min(a.stop, b.stop)):
                assert not a.box_at(frame).expanded(CANVAS.gap).intersects(b.box_at(frame))


@pytest.mark.parametrize("task", [t.name for t in TASKS if t.data_type != "text"])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), index=st.integers(0, 11))
def test_every_scene_obeys_the_layout_rules(task: str, seed: int, index: int) -> None:
    item = build_item(task, index, seed=seed)
    scene = item.scene
    assert scene is not None and (scene.n_frames == 1) == task.startswith("image_")
    assert 3 * CANVAS.fps <= scene.n_frames <= 6 * CANVAS.fps or scene.n_frames == 1
    _check_layout(scene)
    # "the <colour> <kind>" always names exactly one shape, and it has that kind
    for colour, kind in _THE_SHAPE.findall(item.problem):
        named = [s for s in scene.shapes if s.colour == colour]
        assert len(named) == 1 and named[0].kind == kind, (item.problem, named)
    # times asked about are whole seconds of the clip
    for seconds in re.findall(r"at (\d+(?:\.\d+)?) s\b", item.problem):
        assert float(seconds).is_integer() and 0 <= float(seconds) < scene.duration_s


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_rendered_shapes_are_exactly_where_the_scene_says(seed: int) -> None:
    for task in ("tracking", "count", "image_count"):
        scene = build_item(task, seed % 6, seed=seed).scene
        for index in range(0, scene.n_frames, 5):
            frame = render_frame(scene, index)
            for colour, rgb in COLOURS.items():
                painted = (frame == np.array(rgb)).all(axis=-1)
                expected = np.zeros_like(painted)
                for track in scene.visible_shapes(index):
                    if track.colour == colour:
                        box = track.box_at(index)
                        expected[box.y1 : box.y2, box.x1 : box.x2] |= shape_mask(
                            track.kind, track.size
                        )
                assert (painted == expected).all(), (task, seed, index, colour)


def test_encoded_clip_has_the_declared_timing(tmp_path: Path) -> None:
    scene = build_item("temporal", 0).scene
    path = tmp_path / "clip.mp4"
    write_mp4(path, (render_frame(scene, i) for i in range(scene.n_frames)), fps=scene.fps)
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        assert (stream.width, stream.height) == (256, 192)
        assert stream.average_rate == 8 and stream.codec_context.name == "h264"
        frames = list(container.decode(video=0))
    assert len(frames) == scene.n_frames
    assert [f.time for f in frames] == [i / 8 for i in range(scene.n_frames)]
    assert frames[0].format.name == "yuv420p"


def test_encoder_rejects_bad_input_and_leaves_no_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no frames"):
        write_mp4(tmp_path / "empty.mp4", [], fps=8)
    with pytest.raises(ValueError, match="frame 1: expected H x W x 3 uint8"):
        write_mp4(tmp_path / "bad.mp4", [np.zeros((8, 8, 3), np.uint8), np.zeros((8, 8))], fps=8)
    assert list(tmp_path.iterdir()) == []
    write_png(tmp_path / "still.png", np.zeros((8, 8, 3), np.uint8))
    assert [p.name for p in tmp_path.iterdir()] == ["still.png"]
