"""videorl_kit.media.geometry must equal qwen-vl-utils 0.0.14 exactly.

The reference functions are qwen-vl-utils' own ``smart_resize`` and ``smart_nframes``,
``torch.linspace(...).round()`` for the frame indices, and the per-frame pixel cap that
``fetch_video`` computes inline (read back from the warning it logs when the requested
``max_pixels`` exceeds that cap).
"""

from __future__ import annotations

import logging
import math
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from videorl_kit.media import geometry as g

vision_process = pytest.importorskip("qwen_vl_utils.vision_process")
torch = pytest.importorskip("torch")

FACTORS = st.sampled_from([28, 32])
SIDES = st.integers(min_value=1, max_value=8000)


def _qwen_resize(height, width, factor, min_pixels, max_pixels):
    """qwen-vl-utils' smart_resize, with its failures mapped to a marker."""
    try:
        return vision_process.smart_resize(
            height, width, factor=factor, min_pixels=min_pixels, max_pixels=max_pixels
        )
    except (ValueError, AssertionError):
        return "raises"


def _ours_resize(height, width, factor, min_pixels, max_pixels):
    try:
        return g.smart_resize(
            height, width, factor=factor, min_pixels=min_pixels, max_pixels=max_pixels
        )
    except ValueError:
        return "raises"


# ---------------------------------------------------------------- smart_resize


@pytest.mark.parametrize("factor", [28, 32])
@pytest.mark.parametrize(
    ("min_pixels", "max_pixels"),
    [(3136, 200704), (4096, 65536), (3136, 262144), (262144, 262144), (3136, 1003520)],
)
def test_smart_resize_grid_equals_qwen(factor, min_pixels, max_pixels):
    sizes = [1, 2, 13, 27, 28, 29, 41, 42, 56, 100, 144, 240, 320, 360, 480, 576, 640, 720]
    sizes += [1080, 1280, 1920, 2160, 3000, 3840, 4000, 4096, 7680]
    for height in sizes:
        for width in sizes:
            expected = _qwen_resize(height, width, factor, min_pixels, max_pixels)
            if expected != "raises" and min(expected) == 0:
                expected = "raises"  # documented: we refuse a zero-sized side
            assert _ours_resize(height, width, factor, min_pixels, max_pixels) == expected, (
                height,
                width,
            )


@given(
    height=SIDES,
    width=SIDES,
    factor=FACTORS,
    min_pixels=st.integers(min_value=1, max_value=600_000),
    max_pixels=st.integers(min_value=1, max_value=4_000_000),
)
@example(height=28, width=5600, factor=28, min_pixels=1, max_pixels=3136)  # zero side
@example(height=10, width=2001, factor=28, min_pixels=1, max_pixels=3136)  # ratio > 200
@example(height=10, width=10, factor=28, min_pixels=5000, max_pixels=3136)  # min > max
def test_smart_resize_property_equals_qwen(height, width, factor, min_pixels, max_pixels):
    expected = _qwen_resize(height, width, factor, min_pixels, max_pixels)
    ours = _ours_resize(height, width, factor, min_pixels, max_pixels)
    if expected != "raises" and min(expected) == 0:
        assert ours == "raises"
    else:
        assert ours == expected
    if ours != "raises":
        h, w = ours
        assert h % factor == 0 and w % factor == 0


def test_smart_resize_errors_name_the_problem():
    with pytest.raises(ValueError, match="aspect ratio"):
        g.smart_resize(10, 2500, factor=28, min_pixels=3136, max_pixels=200704)
    with pytest.raises(ValueError, match=r"max_pixels \(4000\) must be >= min_pixels"):
        g.smart_resize(100, 100, factor=28, min_pixels=5000, max_pixels=4000)
    with pytest.raises(ValueError, match="one side would be 0 px"):
        g.smart_resize(28, 5600, factor=28, min_pixels=1, max_pixels=3136)
    with pytest.raises(ValueError, match="height must be positive"):
        g.smart_resize(0, 100, factor=28, min_pixels=1, max_pixels=3136)


# ---------------------------------------------------------------- frame count


def _qwen_nframes(total_frames, source_fps, fps, min_frames, max_frames):
    ele = {"fps": fps, "min_frames": min_frames, "max_frames": max_frames}
    try:
        return vision_process.smart_nframes(ele, total_frames=total_frames, video_fps=source_fps)
    except ValueError:
        return "raises"


def _ours_nframes(total_frames, source_fps, fps, min_frames, max_frames):
    try:
        return g.video_frame_count(
            total_frames, source_fps, fps=fps, min_frames=min_frames, max_frames=max_frames
        )
    except ValueError:
        return "raises"


@pytest.fixture(autouse=True)
def _quiet_qwen_logger():
    # smart_nframes warns when fps exceeds the source rate; keep the test output clean.
    logger = logging.getLogger(vision_process.__name__)
    previous = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(previous)


def test_frame_count_grid_equals_qwen():
    for total_frames in [2, 3, 4, 5, 7, 8, 9, 15, 16, 30, 31, 60, 150, 151, 1000, 9000, 108000]:
        for source_fps in [1.0, 5.0, 23.976, 24.0, 25.0, 29.97, 30.0, 59.94, 60.0, 120.0]:
            for fps in [0.5, 1.0, 2.0, 4.0, 29.97]:
                for min_frames, max_frames in [(4, 32), (4, 768), (1, 2), (0, 64), (5, 9), (16, 8)]:
                    args = (total_frames, source_fps, fps, min_frames, max_frames)
                    assert _ours_nframes(*args) == _qwen_nframes(*args), args


@given(
    total_frames=st.integers(min_value=2, max_value=500_000),
    source_fps=st.floats(min_value=0.1, max_value=240, allow_nan=False),
    fps=st.floats(min_value=0.05, max_value=60, allow_nan=False),
    min_frames=st.integers(min_value=0, max_value=64),
    max_frames=st.integers(min_value=1, max_value=2048),
)
def test_frame_count_property_equals_qwen(total_frames, source_fps, fps, min_frames, max_frames):
    expected = _qwen_nframes(total_frames, source_fps, fps, min_frames, max_frames)
    ours = _ours_nframes(total_frames, source_fps, fps, min_frames, max_frames)
    assert ours == expected
    if ours != "raises":
        assert ours % 2 == 0 and 2 <= ours <= total_frames


def test_frame_count_one_frame_video_pads_to_temporal_patch():
    # qwen-vl-utils raises; we return one temporal patch (the decoder repeats the frame).
    assert _qwen_nframes(1, 30.0, 2.0, 4, 32) == "raises"
    assert g.video_frame_count(1, 30.0, fps=2.0, min_frames=4, max_frames=32) == 2
    assert g.video_frame_count(3, 30.0, fps=2.0, min_frames=4, max_frames=32, temporal_patch=4) == 4


def test_frame_count_rejects_bad_inputs():
    with pytest.raises(ValueError, match="max_frames=1 is below one temporal patch"):
        g.video_frame_count(100, 30.0, fps=2.0, min_frames=4, max_frames=1)
    with pytest.raises(ValueError, match="source_fps must be a positive finite number"):
        g.video_frame_count(100, 0.0, fps=2.0, min_frames=4, max_frames=32)
    with pytest.raises(ValueError, match="source_fps"):
        g.video_frame_count(100, math.nan, fps=2.0, min_frames=4, max_frames=32)
    with pytest.raises(ValueError, match="total_frames must be positive"):
        g.video_frame_count(0, 30.0, fps=2.0, min_frames=4, max_frames=32)
    with pytest.raises(ValueError, match=r"frame count 0 is outside \[2, 100\]"):
        g.video_frame_count(100, 30.0, fps=0.1, min_frames=0, max_frames=32)


# ---------------------------------------------------------------- frame indices


def _torch_indices(total_frames, n):
    return torch.linspace(0, total_frames - 1, n).round().long().tolist()


def test_uniform_indices_exhaustive_small_grid_equals_torch():
    for total_frames in range(1, 400):
        for n in range(1, min(total_frames, 130) + 1):
            assert g.uniform_frame_indices(total_frames, n) == _torch_indices(total_frames, n)


@given(total_frames=st.integers(min_value=1, max_value=2_000_000), data=st.data())
def test_uniform_indices_property_equals_torch(total_frames, data):
    n = data.draw(st.integers(min_value=1, max_value=2048), label="n")
    assert g.uniform_frame_indices(total_frames, n) == _torch_indices(total_frames, n)


@pytest.mark.parametrize(("total_frames", "n"), [(1000, 40), (172603, 1376), (80395, 1503)])
def test_uniform_indices_rounding_sensitive_cases_equal_torch(total_frames, n):
    # cases where a plain float32 "end - step * k" (two roundings) differs from torch
    assert g.uniform_frame_indices(total_frames, n) == _torch_indices(total_frames, n)


def test_uniform_indices_pad_and_bounds():
    assert g.uniform_frame_indices(1, 2) == [0, 0]
    assert g.uniform_frame_indices(3, 4) == _torch_indices(3, 4)
    indices = g.uniform_frame_indices(9000, 32)
    assert indices[0] == 0 and indices[-1] == 8999 and indices == sorted(indices)
    with pytest.raises(ValueError, match="n must be positive"):
        g.uniform_frame_indices(10, 0)


# ---------------------------------------------------------------- per-frame pixel cap


def _qwen_frame_cap(monkeypatch, n_frames, min_pixels, total_pixels, factor, caplog):
    """Run qwen-vl-utils' fetch_video on n tiny frames and read back its per-frame cap.

    fetch_video logs "The given max_pixels[X] exceeds limit[CAP]" when the requested
    max_pixels is above its cap; asking for 10**15 makes it always log the exact value.
    The frames come from a registered in-memory reader (tiny, so no real resize cost).
    """

    def tiny_reader(ele):
        video = torch.zeros((n_frames, 3, factor, factor), dtype=torch.uint8)
        meta = {"fps": 30.0, "frames_indices": list(range(n_frames)), "total_num_frames": n_frames}
        return video, meta, 2.0

    monkeypatch.setitem(vision_process.VIDEO_READER_BACKENDS, "in_memory", tiny_reader)
    monkeypatch.setattr(vision_process, "get_video_reader_backend", lambda: "in_memory")
    ele = {"video": "unused.mp4", "min_pixels": min_pixels, "max_pixels": 10**15}
    if total_pixels is not None:
        ele["total_pixels"] = total_pixels
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=vision_process.__name__):
        vision_process.fetch_video(ele, image_patch_size=factor // 2)
    match = re.search(r"exceeds limit\[([^\]]+)\]", caplog.text)
    assert match, caplog.text
    return float(match.group(1))


# fetch_video upscales every frame to >= min_pixels, so large frame counts are paired with
# small min_pixels to keep the reference run cheap.
CAP_CASES = [
    (n_frames, min_pixels)
    for n_frames in [2, 4, 16, 32, 96, 300, 768]
    for min_pixels in [3136, 4096, 128 * 28 * 28, 262144]
    if n_frames * min_pixels <= 3_000_000
]


@pytest.mark.parametrize("factor", [28, 32])
@pytest.mark.parametrize("total_pixels", [None, 1_000_000, 5_000_000, 24_576 * 28 * 28])
@pytest.mark.parametrize(("n_frames", "min_pixels"), CAP_CASES)
def test_frame_max_pixels_equals_qwen(
    monkeypatch, caplog, factor, n_frames, total_pixels, min_pixels
):
    if total_pixels is None and vision_process.MODEL_SEQ_LEN != g.DEFAULT_MODEL_SEQ_LEN:
        pytest.skip("MODEL_SEQ_LEN is set in the environment; qwen-vl-utils' default differs")
    expected = _qwen_frame_cap(monkeypatch, n_frames, min_pixels, total_pixels, factor, caplog)
    ours = g.video_frame_max_pixels(
        n_frames, min_pixels=min_pixels, max_pixels=None, total_pixels=total_pixels, factor=factor
    )
    assert ours == expected  # exact, including fractional caps
    # the explicit max_pixels then caps it further, as in fetch_video
    capped = g.video_frame_max_pixels(
        n_frames, min_pixels=min_pixels, max_pixels=50_000, total_pixels=total_pixels, factor=factor
    )
    assert capped == min(50_000, expected)


@given(
    height=st.integers(min_value=16, max_value=4000),
    width=st.integers(min_value=16, max_value=4000),
    n_frames=st.integers(min_value=1, max_value=400).map(lambda n: 2 * n),
    total_pixels=st.integers(min_value=100_000, max_value=30_000_000),
    factor=FACTORS,
)
def test_video_frame_size_is_smart_resize_with_the_exact_cap(
    height, width, n_frames, total_pixels, factor
):
    cap = g.video_frame_max_pixels(
        n_frames, min_pixels=3136, max_pixels=200704, total_pixels=total_pixels, factor=factor
    )
    # the same expression fetch_video evaluates, with qwen's smart_resize
    qwen_cap = max(min(768 * factor * factor, total_pixels / n_frames * 2), int(3136 * 1.05))
    qwen_cap = min(200704, qwen_cap)
    expected = _qwen_resize(height, width, factor, 3136, qwen_cap)
    ours = _ours_resize(height, width, factor, 3136, cap)
    if expected != "raises" and min(expected) == 0:
        expected = "raises"
    assert ours == expected
    if ours != "raises":
        assert ours == g.video_frame_size(
            height,
            width,
            n_frames,
            min_pixels=3136,
            max_pixels=200704,
            total_pixels=total_pixels,
            factor=factor,
        )


# ---------------------------------------------------------------- tokens


def test_visual_tokens():
    assert g.visual_tokens(32, 448, 448, factor=28) == 16 * 16 * 16
    assert g.visual_tokens(3, 56, 56, factor=28) == 2 * 4  # odd count rounds up a patch
    assert g.visual_tokens(1, 64, 96, factor=32) == 6
    assert g.image_visual_tokens(476, 644, factor=28) == 17 * 23
    with pytest.raises(ValueError, match="width=100 is not a multiple of the patch factor 28"):
        g.visual_tokens(2, 56, 100, factor=28)


def test_visual_tokens_match_hf_qwen2vl_grid():
    """Tokens = grid_t*grid_h*grid_w / merge**2, as the HF Qwen2-VL video processor counts."""
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torchvision")
    processor = transformers.Qwen2VLVideoProcessor()
    video = torch.zeros((4, 3, 84, 112), dtype=torch.uint8)
    out = processor(videos=[video], do_resize=False, do_sample_frames=False, return_tensors="pt")
    t, h, w = out["video_grid_thw"][0].tolist()
    assert t * h * w // 4 == g.visual_tokens(4, 84, 112, factor=28)
