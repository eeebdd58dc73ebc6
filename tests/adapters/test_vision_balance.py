"""Mixed micro-batches: every forward runs the vision tower for images and for videos.

For micro-batches of text alone, a video alone, an image alone, and both, on both tiny
families: with the balance active the logits are bit-for-bit the plain ones, every
vision-tower parameter takes part in the backward (a gradient, zero where only a dummy saw
it), and the sequence of module calls (embeddings, tower, tower, language model) is the same
whatever the micro-batch holds: what ZeRO-3's per-module gathers need to stay in step.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from videorl_kit.adapters.vision_balance import balance_vision
from videorl_kit.media.chat import video_messages
from videorl_kit.media.processor_inputs import chat_inputs
from videorl_kit.train.tiny_model import FAMILIES, patch_factor

CASES = {"text": (0, 0), "video": (1, 0), "image": (0, 1), "both": (1, 1)}
DUMMIES = {"text": 2, "video": 1, "image": 1, "both": 0}


@pytest.fixture(scope="module", params=FAMILIES)
def loaded(request, tiny_models):
    from transformers import AutoModelForImageTextToText, AutoProcessor

    path = tiny_models[request.param]
    model = AutoModelForImageTextToText.from_pretrained(path, dtype=torch.float32)
    return request.param, model, AutoProcessor.from_pretrained(path)


def _inputs(family: str, processor, n_videos: int, n_images: int):
    side = 2 * patch_factor(family)
    rng = np.random.default_rng(n_videos + 2 * n_images)
    video = rng.integers(0, 256, (2, side, side, 3), dtype=np.uint8)
    meta = {"total_num_frames": 30, "fps": 30.0, "width": side, "height": side, "duration": 1.0,
            "video_backend": "pyav", "frames_indices": [0, 15]}  # fmt: skip
    image = rng.integers(0, 256, (side, side, 3), dtype=np.uint8)
    messages = video_messages("Describe.", None, n_videos, n_images)
    return chat_inputs(
        processor, [messages], [video] * n_videos, [meta] * n_videos, [image] * n_images
    )


def _calls(model) -> tuple[list[str], list]:
    """Records the order in which the embeddings, the tower and the language model run."""
    inner = model.model
    order: list[str] = []
    handles = [
        module.register_forward_pre_hook(lambda *_, name=name: order.append(name))
        for name, module in (("embed", inner.get_input_embeddings()), ("tower", inner.visual),
                             ("language", inner.language_model))
    ]  # fmt: skip
    return order, handles


@pytest.mark.parametrize("case", list(CASES))
def test_balanced_forwards_equal_plain_ones_and_reach_the_whole_tower(loaded, case):
    family, model, processor = loaded
    inputs = _inputs(family, processor, *CASES[case])
    visual = [p for n, p in model.named_parameters() if ".visual." in f".{n}"]
    model.zero_grad(set_to_none=True)
    plain = model(**inputs).logits
    plain.sum().backward()
    plain_reached = sum(p.grad is not None for p in visual)
    balance = balance_vision(model)
    assert balance is not None
    try:
        order, handles = _calls(model)
        model.zero_grad(set_to_none=True)
        with balance.active():
            balanced = model(**inputs).logits
        balanced.sum().backward()
        for handle in handles:
            handle.remove()
        assert torch.equal(balanced, plain)
        assert balance.dummy_calls == DUMMIES[case]
        assert all(p.grad is not None for p in visual)  # every tower parameter took part
        assert order == ["embed", "tower", "tower", "language"]
        if case == "text":
            assert plain_reached == 0  # without the rule the tower sat this one out
            assert all(float(p.grad.abs().sum()) == 0.0 for p in visual)  # a dummy adds no signal
        with balance.active(on=False):  # outside an active block: plain forwards
            model(**inputs)
        assert balance.dummy_calls == DUMMIES[case]
    finally:
        balance.remove()


def test_models_without_a_qwen_tower_are_left_alone():
    assert balance_vision(torch.nn.Linear(2, 2)) is None
