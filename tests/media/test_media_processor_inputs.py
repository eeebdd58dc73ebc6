"""video_metadata_dict makes the HF Qwen3-VL processor write the right <t seconds> markers."""

from __future__ import annotations

import re
import warnings

import pytest

from videorl_kit.media import geometry
from videorl_kit.media.decode import decode_video
from videorl_kit.media.processor_inputs import metadata_frame_indices, video_metadata_dict

QWEN3 = {
    "fps": 2.0,
    "min_frames": 4,
    "max_frames": 32,
    "min_pixels": 3136,
    "max_pixels": 200704,
    "patch": 32,
}


def test_metadata_dict_fields(videos):
    video = decode_video(videos.cfr.path, QWEN3)
    meta = video_metadata_dict(video)
    assert meta == {
        "total_num_frames": 150,
        "fps": 30.0,
        "width": video.width,
        "height": video.height,
        "duration": 5.0,
        "video_backend": "pyav",
        "frames_indices": video.frame_indices,  # constant frame rate: the source indices
    }
    # a mapping with the same fields (e.g. a cache row as a dict) gives the same result
    row = {
        name: getattr(video, name)
        for name in (
            "frame_indices",
            "timestamps_s",
            "source_fps",
            "source_frames",
            "duration_s",
            "height",
            "width",
            "decoder",
        )
    }
    assert video_metadata_dict(row) == meta
    with pytest.raises(KeyError, match="missing 'timestamps_s'"):
        video_metadata_dict({k: v for k, v in row.items() if k != "timestamps_s"})


def test_vfr_metadata_indices_follow_real_time(videos):
    video = decode_video(videos.vfr.path, QWEN3)
    meta = video_metadata_dict(video)
    for index, timestamp in zip(meta["frames_indices"], video.timestamps_s, strict=True):
        assert abs(index / meta["fps"] - timestamp) <= 0.5 / meta["fps"] + 1e-9
    # raw indices over the average fps would be far off in the slow first half
    raw_error = max(
        abs(i / video.source_fps - t)
        for i, t in zip(video.frame_indices, video.timestamps_s, strict=True)
    )
    assert raw_error > 0.3
    with pytest.raises(ValueError, match="2 frame indices but 1 timestamps"):
        metadata_frame_indices([0, 1], [0.0], 30.0)


def _tiny_qwen3vl_processor():
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torchvision")
    tokenizers = pytest.importorskip("tokenizers")
    from transformers.models.qwen2_vl import Qwen2VLImageProcessor

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>",
                "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]  # fmt: skip
    vocab = {token: i for i, token in enumerate([*specials, "[UNK]"])}
    backend = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        additional_special_tokens=specials,
        extra_special_tokens={
            "image_token": "<|image_pad|>",
            "video_token": "<|video_pad|>",
            "vision_start_token": "<|vision_start|>",
            "vision_end_token": "<|vision_end|>",
        },
    )
    video_processor = transformers.Qwen3VLVideoProcessor()
    processor = transformers.Qwen3VLProcessor(
        image_processor=Qwen2VLImageProcessor(),
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template="",
    )
    return processor, video_processor


@pytest.mark.parametrize("name", ["cfr", "vfr", "one_frame"])
def test_qwen3vl_processor_timestamps_and_tokens(videos, name):
    processor, video_processor = _tiny_qwen3vl_processor()
    video = decode_video(getattr(videos, name).path, QWEN3)
    meta = video_metadata_dict(video)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inputs = video_processor(
            videos=[video.frames],
            video_metadata=[meta],
            do_sample_frames=False,
            do_resize=False,
            return_metadata=True,
            return_tensors="pt",
        )
    t, h, w = inputs["video_grid_thw"][0].tolist()
    assert t * h * w // 4 == geometry.visual_tokens(
        video.num_frames, video.height, video.width, factor=32
    )
    placeholder = processor.replace_video_token(inputs, 0)
    markers = [float(m) for m in re.findall(r"<([0-9.]+) seconds>", placeholder)]
    assert len(markers) == video.num_frames // 2
    real = [
        (video.timestamps_s[i] + video.timestamps_s[i + 1]) / 2
        for i in range(0, video.num_frames, 2)
    ]
    tolerance = 0.05 + (0.5 / video.source_fps if name == "vfr" else 0)
    assert markers == pytest.approx(real, abs=tolerance)
    assert placeholder.count("<|video_pad|>") == t * h * w // 4
