"""The tiny test models: offline loading, determinism, a real tokenizer, images and videos."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from videorl_kit.core.errors import UserError
from videorl_kit.train.tiny_model import FAMILIES, build_tiny_model, patch_factor

REPO = Path(__file__).resolve().parents[2]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("family", FAMILIES)
def test_same_seed_same_bytes_other_seed_other_weights(tmp_path: Path, family: str) -> None:
    a = build_tiny_model(tmp_path / "a", family, seed=3).path
    b = build_tiny_model(tmp_path / "b", family, seed=3).path
    c = build_tiny_model(tmp_path / "c", family, seed=4).path
    assert _files(a) == _files(b)
    assert _files(a)["model.safetensors"] != _files(c)["model.safetensors"]
    assert _files(a)["tokenizer.json"] == _files(c)["tokenizer.json"]


def test_cli_writes_a_model_that_loads_offline(tmp_path: Path) -> None:
    """`videorl-kit tiny-model` then AutoProcessor / AutoModelForImageTextToText, no network."""
    out = tmp_path / "m"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    cli = [sys.executable, "-m", "videorl_kit", "tiny-model", str(out), "--family", "qwen3-vl"]
    made = subprocess.run([*cli, "--json"], capture_output=True, text=True, env=env, cwd=REPO)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["family"] == "qwen3-vl"
    load = (
        "import sys; from transformers import AutoModelForImageTextToText, AutoProcessor\n"
        "p = AutoProcessor.from_pretrained(sys.argv[1])\n"
        "m = AutoModelForImageTextToText.from_pretrained(sys.argv[1])\n"
        "print(type(p).__name__, type(m).__name__)\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", load, str(out)], capture_output=True, text=True, env=env, cwd=REPO
    )
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split() == ["Qwen3VLProcessor", "Qwen3VLForConditionalGeneration"]
    again = subprocess.run(cli, capture_output=True, text=True, env=env, cwd=REPO)
    assert again.returncode == 1
    assert again.stderr.strip().splitlines() == [
        f"error: {out}: already holds a model (config.json); choose an empty folder"
    ]


def test_unknown_family_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="unknown model family 'qwen4'"):
        build_tiny_model(tmp_path / "x", "qwen4")
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("family", FAMILIES)
def test_real_text_round_trips_and_specials_are_single_tokens(
    tiny_models: dict[str, Path], family: str
) -> None:
    from transformers import AutoProcessor

    tokenizer = AutoProcessor.from_pretrained(tiny_models[family]).tokenizer
    text = 'Ünïcode ✓ 漢字 <think>3 + 4 = 7</think><answer>{"time": [1.5, 4]}</answer>\n\tend'
    ids = tokenizer(text)["input_ids"]
    assert tokenizer.decode(ids) == text
    assert len(tokenizer("1234")["input_ids"]) == 4  # Qwen splits digits one by one
    for special in ("<|im_start|>", "<|im_end|>", "<|image_pad|>", "<|video_pad|>"):
        assert len(tokenizer(special)["input_ids"]) == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_image_and_video_prompts_train_and_generate(
    tiny_models: dict[str, Path], family: str
) -> None:
    """The chat template places images and videos; the vision tower gets a gradient."""
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from transformers.video_utils import VideoMetadata

    processor = AutoProcessor.from_pretrained(tiny_models[family])
    model = AutoModelForImageTextToText.from_pretrained(tiny_models[family])
    factor = patch_factor(family)
    messages = [{"role": "user", "content": [
        {"type": "video"}, {"type": "image"}, {"type": "text", "text": "How many?"},
    ]}]  # fmt: skip
    text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert text.endswith("How many?<|im_end|>\n<|im_start|>assistant\n")
    rng = np.random.default_rng(0)
    video = rng.integers(0, 255, (4, 2 * factor, 3 * factor, 3), dtype=np.uint8)
    image = rng.integers(0, 255, (2 * factor, 2 * factor, 3), dtype=np.uint8)
    inputs = processor(
        text=[text], images=[image], videos=[video], return_tensors="pt", do_resize=False,
        video_metadata=[VideoMetadata(total_num_frames=8, fps=2.0, frames_indices=[0, 2, 4, 6])],
        do_sample_frames=False,
    )  # fmt: skip
    assert inputs["image_grid_thw"].tolist() == [[1, 4, 4]]
    assert inputs["video_grid_thw"].tolist() == [[2, 4, 6]]
    loss = model(**inputs, labels=inputs["input_ids"]).loss
    loss.backward()
    assert torch.isfinite(loss)
    vision = [p.grad for n, p in model.named_parameters() if n.startswith("model.visual.")]
    assert any(g is not None and g.abs().sum() > 0 for g in vision)
    generated = model.generate(**inputs, max_new_tokens=4, do_sample=False)
    length = inputs["input_ids"].shape[1]
    assert torch.equal(generated[:, :length], inputs["input_ids"])
    assert length < generated.shape[1] <= length + 4


@pytest.mark.parametrize("family", FAMILIES)
def test_a_wider_attention_head_for_vllms_cpu_kernels(tmp_path: Path, family: str) -> None:
    """``head_dim=32`` (vLLM's CPU attention takes 32 and up): half as many heads, the same
    width, rotary sections scaled to the head, and a model that runs."""
    from transformers import AutoModelForImageTextToText

    info = build_tiny_model(tmp_path / "m", family, head_dim=32)
    assert info.head_dim == 32 and info.as_dict()["head_dim"] == 32
    model = AutoModelForImageTextToText.from_pretrained(info.path)
    text = model.config.text_config
    assert (text.hidden_size, text.num_attention_heads, text.num_key_value_heads) == (64, 2, 1)
    assert text.hidden_size // text.num_attention_heads == 32
    assert sum(text.rope_parameters["mrope_section"]) == 16  # head_dim / 2 frequencies
    ids = torch.tensor([[1, 2, 3]])
    assert model.generate(input_ids=ids, max_new_tokens=2, do_sample=False).shape == (1, 5)
    with pytest.raises(UserError, match="head size 24 is not offered; choose one of 16, 32, 64"):
        build_tiny_model(tmp_path / "n", family, head_dim=24)
    assert not (tmp_path / "n").exists()
