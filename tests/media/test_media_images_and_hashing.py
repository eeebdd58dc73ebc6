"""decode_image against qwen-vl-utils' fetch_image, plus content hashing and budgets."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from PIL import Image

from videorl_kit.core.budget import ImageBudget, VideoBudget, as_image_budget, as_video_budget
from videorl_kit.media import geometry
from videorl_kit.media.decode import decode_image, file_content_hash
from videorl_kit.media.errors import (
    BudgetTooSmallError,
    EmptyFileError,
    MissingFileError,
    NotAnImageError,
)

IMAGE = {"min_pixels": 3136, "max_pixels": 1003520, "patch": 28}
SMALL = {"min_pixels": 3136, "max_pixels": 50176, "patch": 32}


def _gradient(width: int, height: int, mode: str = "RGB") -> Image.Image:
    y, x = np.mgrid[0:height, 0:width]
    rgb = np.stack([x * 255 // width, y * 255 // height, (x + y) % 256], axis=-1)
    image = Image.fromarray(rgb.astype(np.uint8))
    return image if mode == "RGB" else image.convert(mode)


@pytest.fixture
def images(tmp_path):
    paths = {}
    paths["rgb_png"] = tmp_path / "rgb.png"
    _gradient(300, 200).save(paths["rgb_png"])
    paths["large_jpg"] = tmp_path / "large.jpg"
    _gradient(2400, 1600).save(paths["large_jpg"], quality=90)
    paths["tiny_png"] = tmp_path / "tiny.png"
    _gradient(20, 12).save(paths["tiny_png"])
    paths["gray_png"] = tmp_path / "gray.png"
    _gradient(120, 90, "L").save(paths["gray_png"])
    paths["palette_gif"] = tmp_path / "palette.gif"
    _gradient(64, 48, "P").save(paths["palette_gif"])
    rgba = _gradient(100, 80).convert("RGBA")
    alpha = np.zeros((80, 100), dtype=np.uint8)
    alpha[:, 50:] = 255
    rgba.putalpha(Image.fromarray(alpha))
    paths["rgba_png"] = tmp_path / "rgba.png"
    rgba.save(paths["rgba_png"])
    return paths


@pytest.mark.parametrize("budget", [IMAGE, SMALL], ids=["qwen25", "qwen3-small"])
@pytest.mark.parametrize(
    "name", ["rgb_png", "large_jpg", "tiny_png", "gray_png", "palette_gif", "rgba_png"]
)
def test_images_equal_qwen_fetch_image(images, name, budget):
    vision_process = pytest.importorskip("qwen_vl_utils.vision_process")
    theirs = vision_process.fetch_image(
        {"image": str(images[name]), "min_pixels": budget["min_pixels"],
         "max_pixels": budget["max_pixels"]},
        image_patch_size=budget["patch"] // 2,
    )  # fmt: skip
    ours = decode_image(images[name], budget)
    assert ours.frames.shape == (1, theirs.height, theirs.width, 3)
    np.testing.assert_array_equal(ours.frames[0], np.asarray(theirs))  # same Pillow resize
    assert (ours.height, ours.width) == (theirs.height, theirs.width)
    assert ours.height % budget["patch"] == 0 and ours.width % budget["patch"] == 0
    assert ours.decoder == "pillow" and ours.frames.dtype == np.uint8


def test_image_size_and_transparency(images):
    image = decode_image(images["rgb_png"], IMAGE)
    assert (image.source_height, image.source_width) == (200, 300)
    assert (image.height, image.width) == geometry.smart_resize(
        200, 300, factor=28, min_pixels=3136, max_pixels=1003520
    )
    rgba = decode_image(images["rgba_png"], {**IMAGE, "min_pixels": 100 * 80})
    left = rgba.frames[0, :, : rgba.width // 4]
    assert (left == 255).all()  # transparent pixels become white, as in qwen-vl-utils


def test_exif_orientation_is_applied(tmp_path):
    path = tmp_path / "phone.jpg"
    exif = Image.Exif()
    exif[0x0112] = 6  # stored landscape, displayed rotated 90 degrees clockwise
    _gradient(280, 140).save(path, exif=exif, quality=95)
    image = decode_image(path, {**IMAGE, "min_pixels": 140 * 280, "max_pixels": 140 * 280})
    assert (image.source_height, image.source_width) == (280, 140)  # portrait on screen
    assert image.height > image.width


def test_bad_images(tmp_path):
    with pytest.raises(MissingFileError, match="file does not exist"):
        decode_image(tmp_path / "nope.png", IMAGE)
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(EmptyFileError):
        decode_image(empty, IMAGE)
    text = tmp_path / "notes.png"
    text.write_text("not an image")
    with pytest.raises(NotAnImageError, match=r"notes\.png: not a readable image"):
        decode_image(text, IMAGE)
    cut = tmp_path / "cut.jpg"
    _gradient(400, 300).save(cut, quality=95)
    cut.write_bytes(cut.read_bytes()[:2000])
    with pytest.raises(NotAnImageError, match=r"cut\.jpg"):
        decode_image(cut, IMAGE)
    strip = tmp_path / "strip.png"
    _gradient(2100, 10).save(strip)
    with pytest.raises(
        BudgetTooSmallError, match=r"aspect ratio 210\.0 of a 2100x10 frame exceeds 200"
    ):
        decode_image(strip, IMAGE)


def test_file_content_hash(tmp_path):
    path = tmp_path / "blob.bin"
    data = bytes(range(256)) * 10_000  # 2.5 MB: several read chunks
    path.write_bytes(data)
    assert file_content_hash(path) == hashlib.sha256(data).hexdigest()
    copy = tmp_path / "copy.bin"
    copy.write_bytes(data)
    assert file_content_hash(copy) == file_content_hash(path)  # content, not path
    copy.write_bytes(data[:-1] + b"x")
    assert file_content_hash(copy) != file_content_hash(path)
    with pytest.raises(MissingFileError):
        file_content_hash(tmp_path / "missing.bin")
    with pytest.raises(MissingFileError, match="directory"):
        file_content_hash(tmp_path)


def test_budget_normalisation():
    video = as_video_budget(
        {"fps": 1, "min_frames": 2, "max_frames": 8, "min_pixels": 1, "max_pixels": 9, "patch": 32}
    )
    assert video == VideoBudget(fps=1, min_frames=2, max_frames=8, min_pixels=1, max_pixels=9,
                                total_pixels=None, patch=32, temporal_patch=2)  # fmt: skip
    assert as_video_budget(video) is video
    assert as_image_budget(ImageBudget()) == ImageBudget(
        min_pixels=3136, max_pixels=1003520, patch=28
    )
    with pytest.raises(ValueError, match=r"video budget is missing \['fps'\]"):
        as_video_budget({"min_frames": 2, "max_frames": 8, "min_pixels": 1, "max_pixels": 9,
                         "patch": 32})  # fmt: skip
    with pytest.raises(ValueError, match="max_pixels"):
        VideoBudget(min_pixels=10, max_pixels=5)
    with pytest.raises(ValueError, match="greater than 0"):
        VideoBudget(fps=0)
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        as_image_budget({**IMAGE, "fps": 2})
