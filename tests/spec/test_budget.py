"""The budget calculator agrees with the real Qwen2.5-VL and Qwen3-VL processors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.spec.conftest import MINIMAL
from videorl_kit.cli import app
from videorl_kit.spec.budget import estimate_image, estimate_video
from videorl_kit.spec.models import ImageBudget, VideoBudget

transformers = pytest.importorskip("transformers")
pytest.importorskip("torchvision")

CASES = [
    # (patch, duration_s, width, height, min_pixels, max_pixels, max_frames)
    (28, 4.0, 320, 240, 3136, 50176, 8),
    (28, 10.0, 640, 360, 3136, 200704, 16),
    (28, 3.0, 90, 1280, 3136, 100352, 6),
    (32, 4.0, 320, 240, 4096, 65536, 8),
    (32, 7.5, 1280, 720, 4096, 262144, 12),
    (32, 2.0, 50, 50, 16384, 65536, 4),
]


def _video_processor(patch: int, min_pixels: int, max_pixels: int, frames: int):
    if patch == 28:  # Qwen2/2.5-VL: size bounds pixels per frame
        size = {"shortest_edge": min_pixels, "longest_edge": max_pixels}
        return transformers.Qwen2VLVideoProcessor(size=size)
    # Qwen3-VL: size bounds pixels summed over all frames of the clip
    size = {"shortest_edge": min_pixels * frames, "longest_edge": max_pixels * frames}
    return transformers.Qwen3VLVideoProcessor(size=size)


@pytest.mark.parametrize(
    ("patch", "duration", "width", "height", "min_px", "max_px", "max_frames"), CASES
)
def test_video_tokens_match_processor(patch, duration, width, height, min_px, max_px, max_frames):
    budget = VideoBudget(
        fps=2.0,
        min_frames=2,
        max_frames=max_frames,
        min_pixels=min_px,
        max_pixels=max_px,
        patch=patch,
    )
    est = estimate_video(budget, duration_s=duration, width=width, height=height, source_fps=24.0)
    frames = np.zeros((est.frames, height, width, 3), dtype=np.uint8)
    processor = _video_processor(patch, min_px, max_px, est.frames)
    kwargs = {"do_sample_frames": False, "cap_pixels_per_frame": False} if patch == 32 else {}
    out = processor(videos=[frames], return_tensors="np", **kwargs)
    t, h, w = (int(x) for x in out["video_grid_thw"][0])
    merge = processor.merge_size
    assert (h * processor.patch_size, w * processor.patch_size) == (est.height, est.width)
    assert t * h * w // (merge * merge) == est.total_tokens


@pytest.mark.parametrize(("width", "height"), [(448, 448), (1920, 1080), (30, 600), (5000, 4000)])
@pytest.mark.parametrize("patch", [28, 32])
def test_image_tokens_match_processor(width, height, patch):
    budget = ImageBudget(min_pixels=3136 if patch == 28 else 4096, max_pixels=1003520, patch=patch)
    est = estimate_image(budget, width=width, height=height)
    size = {"shortest_edge": budget.min_pixels, "longest_edge": budget.max_pixels}
    processor = transformers.Qwen2VLImageProcessor(size=size, patch_size=patch // 2)
    image = np.zeros((height, width, 3), dtype=np.uint8)
    grid = processor(images=[image], return_tensors="np")["image_grid_thw"][0]
    assert int(np.prod(grid)) // 4 == est.total_tokens
    assert (int(grid[1]) * patch // 2, int(grid[2]) * patch // 2) == (est.height, est.width)


def test_budget_command_json(write):
    path = write("t.yaml", MINIMAL + "budget:\n  video: {max_frames: 8}\n")
    result = CliRunner().invoke(
        app, ["budget", str(path), "--duration", "60", "--size", "1280x720", "--json"]
    )
    payload = json.loads(result.stdout)
    (video,) = payload["videos"]
    assert video["frames"] == 8 and video["total_tokens"] == 4 * video["tokens_per_temporal_patch"]


def test_budget_command_rejects_bad_size(write):
    result = CliRunner().invoke(app, ["budget", str(write("t.yaml", MINIMAL)), "--size", "big"])
    assert result.exit_code == 1 and "--size must look like 1280x720" in str(result.exception)
