"""Qwen2.5-VL's M-RoPE positions by Qwen's rule (``videorl_kit.media.mrope``).

Checked against transformers' own ``get_rope_index`` where the two rules agree (images, short
videos, batches with left padding) and against an independent statement of Qwen's rule where
they do not (a long video: text continues after the video's temporal extent, not after its
height or width); the model with the rule applied generates and scores with those positions.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.mrope_reference import reference_positions
from videorl_kit.media.mrope import qwen25_rope_index, use_qwen_positions, uses_qwen_positions
from videorl_kit.media.processor_inputs import processor_outputs

FPS = 2.0


@pytest.fixture(scope="module")
def qwen25(tiny_models):
    from transformers import AutoModelForImageTextToText, AutoProcessor

    path = tiny_models["qwen2.5-vl"]
    processor = AutoProcessor.from_pretrained(path, padding_side="left")
    model = AutoModelForImageTextToText.from_pretrained(path, dtype=torch.float32).eval()
    return model, processor


def _video(frames: int, side: int = 56, seed: int = 0) -> tuple[np.ndarray, dict]:
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (frames, side, side, 3), dtype=np.uint8)
    meta = {"total_num_frames": frames * 15, "fps": 30.0, "width": side, "height": side,
            "duration": frames / FPS, "video_backend": "pyav",
            "frames_indices": [15 * i for i in range(frames)]}  # fmt: skip
    return pixels, meta


def _inputs(processor, n_frames: list[int], image: bool = False, side: int = 56):
    texts, videos, metas, images = [], [], [], []
    for seed, frames in enumerate(n_frames):
        video, meta = _video(frames, side, seed=seed)
        content = [{"type": "video"}] + ([{"type": "image"}] if image else [])
        content.append({"type": "text", "text": "What happens?" + " Be brief." * seed})
        texts.append(processor.apply_chat_template(
            [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False
        ))  # fmt: skip
        videos.append(video)
        metas.append(meta)
        if image:
            images.append(np.full((56, 84, 3), 40 * seed, np.uint8))
    return processor_outputs(processor, texts, videos, metas, images)


def _rope(model, inputs, rule):
    return rule(
        model.model, inputs["input_ids"], inputs["mm_token_type_ids"],
        inputs.get("image_grid_thw"), inputs["video_grid_thw"], inputs["second_per_grid_ts"],
        inputs["attention_mask"],
    )  # fmt: skip


def test_short_videos_images_and_padding_place_tokens_as_transformers_does(qwen25):
    """Where the video's temporal extent is below its height and width, both rules agree:
    a padded batch of two prompts, each a video and an image."""
    model, processor = qwen25
    inputs = _inputs(processor, [2, 4], image=True, side=168)
    # the last temporal patch (1 s later) stays below the 6x6 merged grid's extent
    per_second = model.config.vision_config.tokens_per_second
    assert inputs["video_grid_thw"].tolist() == [[1, 12, 12], [2, 12, 12]]
    assert inputs["second_per_grid_ts"].tolist() == [1.0, 1.0] and per_second < 6
    own, own_delta = _rope(model, inputs, type(model.model).get_rope_index)
    kit, kit_delta = _rope(model, inputs, qwen25_rope_index)
    assert (inputs["attention_mask"] == 0).any()  # the shorter prompt is left-padded
    assert torch.equal(kit, own) and torch.equal(kit_delta, own_delta)


def test_a_long_video_continues_the_text_after_its_temporal_extent(qwen25):
    """16 frames at 2 fps: 8 temporal patches 1 s apart reach far beyond the 2×2 merged
    grid. Qwen's rule starts the text after the former; transformers 5.x after the latter."""
    model, processor = qwen25
    inputs = _inputs(processor, [16])
    ids = inputs["input_ids"][0].tolist()
    expected = reference_positions(
        ids, inputs["video_grid_thw"].tolist(), inputs["second_per_grid_ts"].tolist(),
        model.config,
    )  # fmt: skip
    kit, delta = _rope(model, inputs, qwen25_rope_index)
    own, _ = _rope(model, inputs, type(model.model).get_rope_index)
    assert np.array_equal(kit[:, 0].numpy(), expected)
    assert int(delta) == expected.max() + 1 - len(ids)
    after = ids.index(model.config.vision_end_token_id)
    assert kit[0, 0, after] > own[0, 0, after]  # the text after the video moved


def test_the_rule_applied_to_a_model_changes_its_forward_and_its_generation(qwen25, tiny_models):
    """``use_qwen_positions`` on one instance: that model's logits follow the kit's positions
    (equal to passing them explicitly), greedy generation equals a step-by-step forward with
    them, and another instance of the class keeps transformers' rule."""
    from transformers import AutoModelForImageTextToText

    _, processor = qwen25
    model = AutoModelForImageTextToText.from_pretrained(
        tiny_models["qwen2.5-vl"], dtype=torch.float32
    ).eval()
    plain = AutoModelForImageTextToText.from_pretrained(
        tiny_models["qwen2.5-vl"], dtype=torch.float32
    ).eval()
    inputs = _inputs(processor, [16])
    kit_positions, _ = _rope(model, inputs, qwen25_rope_index)
    assert use_qwen_positions(model) and use_qwen_positions(model)
    assert uses_qwen_positions(model) and not uses_qwen_positions(plain)
    with torch.inference_mode():
        ruled = model(**inputs).logits
        explicit = plain(**inputs, position_ids=kit_positions).logits
        default = plain(**inputs).logits
        generated = model.generate(**inputs, max_new_tokens=4, do_sample=False)
    assert torch.equal(ruled, explicit) and not torch.allclose(ruled, default)
    # greedy generation with the cached rope deltas = the argmax of full forwards
    ids, mask = inputs["input_ids"], inputs["attention_mask"]
    extra = {k: v for k, v in inputs.items() if k not in ("input_ids", "attention_mask")}
    with torch.inference_mode():
        for _ in range(4):
            types = torch.cat(
                [
                    extra["mm_token_type_ids"],
                    torch.zeros_like(ids[:, extra["mm_token_type_ids"].shape[1] :]),
                ],
                1,
            )
            logits = model(input_ids=ids, attention_mask=mask,
                           **{**extra, "mm_token_type_ids": types}).logits  # fmt: skip
            token = logits[:, -1].argmax(-1, keepdim=True)
            ids, mask = torch.cat([ids, token], 1), torch.cat([mask, torch.ones_like(token)], 1)
    assert torch.equal(generated, ids)


def test_other_models_are_left_alone(tiny_models):
    from transformers import AutoModelForImageTextToText

    model = AutoModelForImageTextToText.from_pretrained(tiny_models["qwen3-vl"])
    assert not use_qwen_positions(model) and not uses_qwen_positions(model)


def test_a_grid_short_of_the_vision_tokens_is_refused(qwen25):
    model, processor = qwen25
    inputs = _inputs(processor, [4])
    with pytest.raises(ValueError, match="more video tokens than video grids"):
        qwen25_rope_index(
            model.model, inputs["input_ids"], inputs["mm_token_type_ids"], None,
            inputs["video_grid_thw"][:0], inputs["second_per_grid_ts"], inputs["attention_mask"],
        )  # fmt: skip


def _vllm_positions(model_config, ids: list[int], grids: dict, seconds: list) -> torch.Tensor:
    """vLLM's own Qwen2.5-VL M-RoPE positions (what a vLLM rollout uses) of one unpadded
    prompt: ``Qwen2_5_VLForConditionalGeneration.get_mrope_input_positions`` on the prompt's
    placeholder runs, each with its grid and timing as vLLM's processor hands them over."""
    from types import SimpleNamespace as NS

    qwen = pytest.importorskip("vllm.model_executor.models.qwen2_5_vl")
    cls = qwen.Qwen2_5_VLForConditionalGeneration
    kinds = {model_config.image_token_id: "image", model_config.video_token_id: "video"}
    features, i, n = [], 0, {"image": 0, "video": 0}
    while i < len(ids):
        kind = kinds.get(ids[i])
        if kind is None:
            i += 1
            continue
        j = i
        while j < len(ids) and ids[j] == ids[i]:
            j += 1
        grid = grids[kind][n[kind]]
        data = {f"{kind}_grid_thw": NS(data=torch.tensor(grid))}
        if kind == "video":
            data["second_per_grid_ts"] = NS(data=torch.tensor(seconds[n[kind]]))
        features.append(NS(modality=kind, mm_position=NS(offset=i, length=j - i), data=data))
        n[kind] += 1
        i = j
    host = NS(config=model_config)
    host.iter_mm_grid_thw = lambda feats: cls.iter_mm_grid_thw(host, feats)
    positions, _ = cls.get_mrope_input_positions(host, ids, features)
    return positions


def test_training_positions_equal_vllms_rollout_positions(qwen25):
    """The kit's rule (training's log-prob forward, the evaluator) gives every token of a
    padded batch (a long video with an image; a short video with an image) the position
    vLLM's own Qwen2.5-VL code gives it in a rollout; transformers' rule does not."""
    model, processor = qwen25
    inputs = _inputs(processor, [16, 2], image=True)
    kit, _ = _rope(model, inputs, qwen25_rope_index)
    own, _ = _rope(model, inputs, type(model.model).get_rope_index)
    grids = {"image": inputs["image_grid_thw"].tolist(), "video": inputs["video_grid_thw"].tolist()}
    seconds = inputs["second_per_grid_ts"].tolist()
    moved = 0
    for row in range(2):
        keep = inputs["attention_mask"][row].bool()
        ids = inputs["input_ids"][row][keep].tolist()
        one = {k: [v[row]] for k, v in grids.items()}
        vllm = _vllm_positions(model.config, ids, one, [seconds[row]])
        assert torch.equal(kit[:, row][:, keep], vllm), f"row {row}"
        moved += not torch.equal(own[:, row][:, keep], vllm)
    assert moved == 1  # only the long video's text moves
