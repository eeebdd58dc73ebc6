"""decode_video / probe_video on real PyAV-encoded files, checked against qwen-vl-utils.

Each test video's frames carry their own index in their colour (``tests/media_kit.py``), so the
tests check that the *right* source frames come back, not only how many.
"""

from __future__ import annotations

import logging
from fractions import Fraction

import numpy as np
import pytest

from tests.media_kit import make_avi_with_dropped_frames, read_index
from videorl_kit.core.budget import VideoBudget
from videorl_kit.media import geometry
from videorl_kit.media.decode import (
    SAMPLER_VERSION,
    DecodedVideo,
    decode_video,
    decoder_version,
    probe_video,
)
from videorl_kit.media.errors import BudgetTooSmallError, DecoderUnavailableError

QWEN25 = {
    "fps": 2.0,
    "min_frames": 4,
    "max_frames": 32,
    "min_pixels": 3136,
    "max_pixels": 200704,
    "patch": 28,
}
QWEN3_TIGHT = {
    "fps": 1.0,
    "min_frames": 4,
    "max_frames": 8,
    "min_pixels": 4096,
    "max_pixels": 65536,
    "total_pixels": 100_000,
    "patch": 32,
}
DENSE = {**QWEN25, "fps": 30.0, "max_frames": 768}


def assert_right_frames(video: DecodedVideo) -> None:
    assert [read_index(frame) for frame in video.frames] == video.frame_indices


# ------------------------------------------------------------ against qwen-vl-utils


@pytest.fixture
def qwen_fetch_video(monkeypatch):
    """qwen-vl-utils' fetch_video, reading with decord (its torchvision reader is broken
    with torchvision >= 0.29)."""
    vision_process = pytest.importorskip("qwen_vl_utils.vision_process")
    pytest.importorskip("decord")
    monkeypatch.setattr(vision_process, "FORCE_QWENVL_VIDEO_READER", "decord")
    vision_process.get_video_reader_backend.cache_clear()
    logging.getLogger(vision_process.__name__).setLevel(logging.ERROR)

    def fetch(path, budget):
        ele = {"video": str(path)}
        ele.update({k: v for k, v in budget.items() if k not in ("patch", "temporal_patch")})
        if ele.get("total_pixels") is None:
            ele.pop("total_pixels", None)
        video, meta = vision_process.fetch_video(
            ele, image_patch_size=budget["patch"] // 2, return_video_metadata=True
        )
        return video.permute(0, 2, 3, 1).numpy(), meta

    yield fetch
    vision_process.get_video_reader_backend.cache_clear()


@pytest.mark.parametrize("budget", [QWEN25, QWEN3_TIGHT, DENSE], ids=["qwen25", "qwen3", "dense"])
@pytest.mark.parametrize("name", ["cfr", "long_gop10", "odd_fps", "faststart", "mkv"])
def test_same_frames_sizes_and_pixels_as_qwen_vl_utils(videos, qwen_fetch_video, name, budget):
    made = getattr(videos, name)
    ours = decode_video(made.path, budget)
    theirs, meta = qwen_fetch_video(made.path, budget)
    assert ours.frame_indices == list(meta["frames_indices"])
    assert ours.frames.shape == theirs.shape
    assert ours.source_fps == pytest.approx(meta["fps"], rel=1e-12)
    assert ours.source_frames == meta["total_num_frames"]
    diff = np.abs(ours.frames.astype(np.float32) - theirs)
    assert diff.max() <= 1.0  # float bicubic in Pillow vs torchvision: rounding only
    assert diff.mean() < 0.01
    assert_right_frames(ours)


def test_output_size_matches_geometry_for_large_source(videos):
    video = decode_video(videos.huge.path, QWEN25)
    n = video.num_frames
    expected = geometry.video_frame_size(
        3000, 4000, n, min_pixels=3136, max_pixels=200704, total_pixels=None, factor=28
    )
    assert (video.height, video.width) == expected == video.frames.shape[1:3]
    assert (video.source_height, video.source_width) == (3000, 4000)
    assert video.frame_indices == [0, 2]
    assert_right_frames(video)


# ------------------------------------------------------------ timing and selection


def test_cfr_timestamps_are_index_over_fps(videos):
    video = decode_video(videos.cfr.path, QWEN25)
    assert video.frame_indices == geometry.uniform_frame_indices(150, 10)
    assert video.timestamps_s == pytest.approx([i / 30 for i in video.frame_indices], abs=1e-9)
    assert (video.source_fps, video.source_frames, video.duration_s) == (30.0, 150, 5.0)
    assert video.sample_fps == pytest.approx(2.0)
    assert video.decoder == "pyav" and video.decoder_version == decoder_version("pyav")
    assert f"sampler {SAMPLER_VERSION}" in video.decoder_version
    assert video.frames.dtype == np.uint8 and video.frames.flags.c_contiguous


def test_ntsc_rate_is_exact(videos):
    info = probe_video(videos.odd_fps.path)
    assert info.source_fps == pytest.approx(30000 / 1001, rel=1e-12)
    video = decode_video(videos.odd_fps.path, QWEN25)
    assert video.timestamps_s == pytest.approx(
        [i * 1001 / 30000 for i in video.frame_indices], abs=1e-9
    )
    assert_right_frames(video)


def test_variable_frame_rate_picks_frames_by_time(videos):
    made = videos.vfr  # 30 frames at 10 fps, then 30 frames at 30 fps
    video = decode_video(made.path, QWEN25)
    # the chosen frames' timestamps are their real presentation times ...
    assert video.timestamps_s == pytest.approx([made.times_s[i] for i in video.frame_indices])
    assert_right_frames(video)
    # ... and each is the frame nearest the uniform grid time (position / (N - 1) of the span)
    positions = geometry.uniform_frame_indices(video.source_frames, video.num_frames)
    span = made.times_s[-1] - made.times_s[0]
    for position, index in zip(positions, video.frame_indices, strict=True):
        target = span * position / (video.source_frames - 1)
        best = min(abs(t - target) for t in made.times_s)
        assert abs(made.times_s[index] - target) == pytest.approx(best, abs=1e-9)
    # index arithmetic (frame number = position) would be more than 0.5 s off somewhere
    drift = max(abs(made.times_s[p] - p / video.source_fps) for p in positions)
    assert drift > 0.5


def test_avi_with_dropped_frames_is_sampled_over_its_whole_duration(tmp_path):
    path = tmp_path / "capture.avi"
    kept = make_avi_with_dropped_frames(path, n_frames=40, fps=10)  # 20 of 40 frames stored
    video = decode_video(path, QWEN25)
    assert not video.truncated
    assert any("declares 40 frames; 20 are stored" in w for w in video.warnings)
    assert video.source_frames == 20
    assert video.duration_s == pytest.approx(4.0)
    assert video.source_fps == pytest.approx(5.0)  # measured: the header's 10 fps is nominal
    # frame_indices count stored frames; the pictures are the originals kept at those slots
    assert [read_index(f) for f in video.frames] == [kept[i] for i in video.frame_indices]
    assert video.timestamps_s == pytest.approx([kept[i] / 10 for i in video.frame_indices])
    assert video.timestamps_s[-1] > 3.5  # the end of the video is reached
    sequential = decode_video(path, QWEN25, seek=False)
    np.testing.assert_array_equal(video.frames, sequential.frames)


def test_b_frames_in_avi_are_identified_by_output_order(video_factory):
    """AVI has no presentation timestamps: with B-frames the decoder labels its (display
    order) output with decode-order timestamps, so frames must be counted, not looked up."""
    made = video_factory("bframes.avi", 60, 30, (96, 64))
    for seek in (True, False):
        video = decode_video(made.path, QWEN25, seek=seek)
        assert any("frames identified by order" in w for w in video.warnings)
        assert_right_frames(video)


def test_one_frame_video_is_repeated_to_fill_the_temporal_patch(videos):
    video = decode_video(videos.one_frame.path, QWEN25)
    assert video.num_frames == 2
    assert video.frame_indices == [0, 0] and video.timestamps_s == [0.0, 0.0]
    np.testing.assert_array_equal(video.frames[0], video.frames[1])
    assert read_index(video.frames[0]) == 0
    assert video.source_frames == 1 and video.duration_s == pytest.approx(0.04)


def test_short_video_clamps_to_available_frames(video_factory):
    made = video_factory("three.mp4", 3, 30)
    video = decode_video(made.path, QWEN25)  # min_frames=4, only 3 frames: floor to 2
    assert video.frame_indices == [0, 2]
    assert_right_frames(video)


def test_temporal_patch_is_honoured(videos):
    video = decode_video(videos.cfr.path, {**QWEN25, "temporal_patch": 4})
    assert video.num_frames % 4 == 0
    assert_right_frames(video)


# ------------------------------------------------------------ seeking


@pytest.mark.parametrize("budget", [QWEN25, DENSE, {**QWEN25, "max_frames": 4}])
def test_seeking_gives_the_same_frames_as_sequential_decoding(videos, budget):
    for made in (videos.long_gop10, videos.cfr, videos.faststart, videos.vfr):
        sought = decode_video(made.path, budget, seek=True)
        sequential = decode_video(made.path, budget, seek=False)
        assert sought.frame_indices == sequential.frame_indices
        np.testing.assert_array_equal(sought.frames, sequential.frames)
        assert not any("seeking failed" in w for w in sought.warnings)
        assert_right_frames(sought)


def test_seeking_with_frame_threads_gives_the_same_frames(videos):
    budget = {**QWEN25, "max_frames": 6}
    for made in (videos.long_gop10, videos.cfr):
        single = decode_video(made.path, budget, threads=1, seek=False)
        for kind in (None, "SLICE", "FRAME"):  # None: FFmpeg picks (frame and slice threads)
            threaded = decode_video(made.path, budget, threads=0, thread_type=kind)
            np.testing.assert_array_equal(threaded.frames, single.frames)
            assert threaded.frame_indices == single.frame_indices


def test_sparse_sampling_decodes_fewer_frames(videos, monkeypatch):
    """With keyframes every 10 frames and 4 targets in 600 frames, seeking skips most GOPs."""
    from videorl_kit.media.decoders import pyav as decode_module

    counts = {"frames": 0}
    real = decode_module._decoded_frames

    def counting(container, stream, errors, keep_pts=None, drain_after=None):
        for frame in real(container, stream, errors, keep_pts, drain_after):
            counts["frames"] += 1
            yield frame

    monkeypatch.setattr(decode_module, "_decoded_frames", counting)
    budget = {**QWEN25, "max_frames": 4}
    decode_video(videos.long_gop10.path, budget, seek=True)
    sought = counts["frames"]
    counts["frames"] = 0
    decode_video(videos.long_gop10.path, budget, seek=False)
    assert counts["frames"] == 600
    assert sought <= 4 * 10 + 4, sought  # at most one GOP per target (plus decoder delay)


def _count_decoded_frames(monkeypatch):
    """Count the frames the decoder outputs (through the real ``_decoded_frames``)."""
    from videorl_kit.media.decoders import pyav as decode_module

    counts = {"frames": 0}
    real = decode_module._decoded_frames

    def counting(container, stream, errors, keep_pts=None, drain_after=None):
        for frame in real(container, stream, errors, keep_pts, drain_after):
            counts["frames"] += 1
            yield frame

    monkeypatch.setattr(decode_module, "_decoded_frames", counting)
    return counts


@pytest.mark.parametrize("budget", [QWEN25, {**QWEN25, "max_frames": 4}])
def test_skipping_non_reference_pictures_keeps_every_frame_identical(
    videos, video_factory, budget, monkeypatch
):
    """skip_frame=NONREF on unsampled packets: same frames and indices as a full decode,
    with B-frames (libx264 default) and without, VFR, rotation and frame threads."""
    no_bframes = video_factory("nob.mp4", 90, 30, (96, 64), bframes=False, gop=30)
    bframes_gop = video_factory("bgop.mp4", 240, 30, (96, 64), gop=24)
    clips = [
        videos.cfr,
        videos.long_gop10,
        videos.vfr,
        videos.rotated90,
        videos.faststart,
        videos.mkv,
        videos.odd_fps,
        no_bframes,
        bframes_gop,
    ]
    counts = _count_decoded_frames(monkeypatch)
    for made in clips:
        full = decode_video(made.path, budget, seek=False)
        for threads in (1, 0):
            counts["frames"] = 0
            skipped = decode_video(made.path, budget, threads=threads)
            decoded_with_skip = counts["frames"]
            counts["frames"] = 0
            plain = decode_video(made.path, budget, threads=threads, skip_nonreference=False)
            for video in (skipped, plain):
                assert video.frame_indices == full.frame_indices, made.path.name
                assert video.timestamps_s == full.timestamps_s, made.path.name
                np.testing.assert_array_equal(video.frames, full.frames, err_msg=made.path.name)
                assert video.warnings == full.warnings, made.path.name
            assert decoded_with_skip <= counts["frames"], made.path.name
            assert_right_frames(skipped)


def test_non_reference_pictures_are_skipped_only_with_b_frames(video_factory, monkeypatch):
    """libx264's non-reference B-frames are not decoded on the way to sparse targets; a clip
    without B-frames has none to skip (every picture is a reference)."""
    budget = {**QWEN25, "max_frames": 4}
    with_b = video_factory("b.mp4", 300, 30, (96, 64))
    without_b = video_factory("p.mp4", 300, 30, (96, 64), bframes=False)
    counts = _count_decoded_frames(monkeypatch)
    decoded = {}
    for made in (with_b, without_b):
        for skip in (True, False):
            counts["frames"] = 0
            video = decode_video(made.path, budget, skip_nonreference=skip)
            assert_right_frames(video)
            decoded[made.path.stem, skip] = counts["frames"]
    assert decoded["b", True] < decoded["b", False] * 0.8, decoded
    assert decoded["p", True] == decoded["p", False], decoded


def test_draining_stops_sending_packets_after_the_last_target(video_factory):
    """After the last wanted picture's packet, the decoder is drained, not fed further
    packets: with P-frames only, frame 5 is the last picture decoded, bit-identical."""
    import av

    from videorl_kit.media.container import scan_frame_index, video_container
    from videorl_kit.media.decoders import pyav as decode_module

    made = video_factory("p_only.mp4", 60, 30, (96, 64), bframes=False, gop=30)
    with video_container(made.path) as (container, stream):
        index = scan_frame_index(container, stream)
    with av.open(str(made.path)) as container:
        everything = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    with video_container(made.path) as (container, stream):
        errors: list[str] = []
        drained = list(
            decode_module._decoded_frames(
                container, stream, errors, drain_after=frozenset({index.pts[5]})
            )
        )
    assert [f.pts for f in drained] == list(index.pts[:6]) and not errors
    for frame, reference in zip(drained, everything, strict=False):
        np.testing.assert_array_equal(frame.to_ndarray(format="rgb24"), reference)
    with video_container(made.path) as (container, stream):
        undrained = sum(1 for _ in decode_module._decoded_frames(container, stream, []))
    assert undrained == 60


# ------------------------------------------------------------ rotation


def test_rotation_metadata_is_applied(videos):
    rotated = decode_video(videos.rotated90.path, QWEN25)
    upright = decode_video(videos.rotated90_reference.path, QWEN25)
    info = probe_video(videos.rotated90.path)
    assert (info.rotation, info.orientation) == (90, "cclock")
    assert (info.width, info.height) == (96, 160)  # displayed portrait
    assert (info.coded_width, info.coded_height) == (160, 96)
    assert (rotated.source_height, rotated.source_width) == (160, 96)
    assert rotated.height > rotated.width
    expected_size = geometry.video_frame_size(
        160,
        96,
        rotated.num_frames,
        min_pixels=3136,
        max_pixels=200704,
        total_pixels=None,
        factor=28,
    )
    assert (rotated.height, rotated.width) == expected_size
    assert rotated.frame_indices == upright.frame_indices
    assert_right_frames(rotated)
    # the moving square (left to right in the coded frame) runs bottom to top when displayed
    last = rotated.frames[-1].astype(int).sum(axis=2)
    rows_with_square = np.nonzero((last > 3 * 230).any(axis=1))[0]
    assert rows_with_square.max() < rotated.height // 2


def test_rotated_frames_equal_turned_upright_frames(video_factory):
    from videorl_kit.media.orientation import apply_orientation

    square_budget = {**QWEN25, "min_pixels": 96 * 96, "max_pixels": 96 * 96}
    upright = video_factory("up.mp4", 6, 10, (96, 96))
    for degrees, orientation in [(90, "cclock"), (180, "rotate180"), (270, "clock")]:
        turned = video_factory(f"r{degrees}.mp4", 6, 10, (96, 96), rotation=degrees)
        a = decode_video(turned.path, square_budget)
        b = decode_video(upright.path, square_budget)
        assert a.orientation == orientation
        expected = np.stack([apply_orientation(f, orientation) for f in b.frames])
        np.testing.assert_array_equal(a.frames, expected)


# ------------------------------------------------------------ probing and counting


def test_probe_counts_frames_without_a_header_count(videos):
    info = probe_video(videos.mkv.path)  # Matroska has no frame count in its header
    assert info.frame_count_source == "index"
    assert info.source_frames == 48 and info.source_fps == 24.0
    assert info.duration_s == pytest.approx(2.0, abs=0.01)
    mp4 = probe_video(videos.cfr.path)
    assert (mp4.frame_count_source, mp4.source_frames, mp4.codec) == ("header", 150, "h264")
    assert probe_video(videos.cfr.path, exact=True).source_frames == 150


def test_budget_objects_are_accepted(videos):
    from_dict = decode_video(videos.cfr.path, QWEN25)
    from_params = decode_video(videos.cfr.path, VideoBudget(**QWEN25))

    class SpecLike:  # e.g. the spec's pydantic VideoBudget
        fps, min_frames, max_frames = 2.0, 4, 32
        min_pixels, max_pixels, total_pixels, patch, temporal_patch = 3136, 200704, None, 28, 2

    from_object = decode_video(videos.cfr.path, SpecLike())
    for other in (from_params, from_object):
        np.testing.assert_array_equal(other.frames, from_dict.frames)
    with pytest.raises(ValueError, match=r"max_pixel\n  Extra inputs are not permitted"):
        decode_video(videos.cfr.path, {**QWEN25, "max_pixel": 1})


def test_spec_video_budget_model_is_accepted(videos):
    models = pytest.importorskip("videorl_kit.spec.models")
    budget = models.VideoBudget(fps=1.0, max_frames=8)
    video = decode_video(videos.cfr.path, budget)
    assert video.num_frames == 4  # 5 s at 1 fps, floored to the temporal patch
    video2 = decode_video(videos.cfr.path, budget.model_dump())
    np.testing.assert_array_equal(video.frames, video2.frames)


def test_budget_that_cannot_hold_the_video_is_a_media_error(video_factory):
    made = video_factory("strip.mp4", 4, 10, (1600, 16))  # aspect ratio 100
    with pytest.raises(BudgetTooSmallError, match="one side would be 0 px"):
        decode_video(made.path, {**QWEN25, "min_pixels": 1, "max_pixels": 784})
    with pytest.raises(BudgetTooSmallError, match="max_frames=1 is below one temporal patch"):
        decode_video(made.path, {**QWEN25, "min_frames": 1, "max_frames": 1})


# ------------------------------------------------------------ optional decoders


@pytest.mark.parametrize("decoder", ["decord", "torchcodec"])
def test_optional_decoders_match_pyav(videos, decoder):
    if decoder == "torchcodec":
        try:
            import torchcodec.decoders  # noqa: F401
        except Exception as exc:  # not installed, or its FFmpeg libraries are missing
            pytest.skip(f"torchcodec unavailable: {exc}")
    else:
        pytest.importorskip(decoder)
    for made in (videos.cfr, videos.odd_fps, videos.rotated90):
        ours = decode_video(made.path, QWEN25)
        theirs = decode_video(made.path, QWEN25, decoder=decoder)
        assert theirs.decoder == decoder
        assert theirs.frame_indices == ours.frame_indices
        assert theirs.timestamps_s == pytest.approx(ours.timestamps_s, abs=1e-6)
        assert theirs.frames.shape == ours.frames.shape
        assert np.abs(theirs.frames.astype(int) - ours.frames).max() <= 2
        assert theirs.orientation == ours.orientation


def test_unknown_decoder_is_refused(videos):
    with pytest.raises(DecoderUnavailableError, match="unknown"):
        decode_video(videos.cfr.path, QWEN25, decoder="opencv")  # type: ignore[arg-type]


def test_sample_rate_helpers():
    from videorl_kit.media.sampling import plan_reads, select_frames

    times = [Fraction(i, 30) for i in range(600)]
    chosen = select_frames(times, 32)
    assert chosen == geometry.uniform_frame_indices(600, 32)
    segments = plan_reads(chosen, keyframes=range(0, 600, 10))
    assert sorted(t for s in segments for t in s.targets) == sorted(set(chosen))
    assert all(s.seek_to is None or s.seek_to % 10 == 0 for s in segments)
    dense = plan_reads(range(0, 600, 2), keyframes=range(0, 600, 10))
    assert len(dense) == 1 and dense[0].seek_to is None
