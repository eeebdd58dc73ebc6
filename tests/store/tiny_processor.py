"""Tiny Qwen2.5-VL / Qwen3-VL processors built fully offline (no Hub access).

A byte-level BPE tokenizer is trained in milliseconds with ``tokenizers`` on a few
sentences, wrapped in ``PreTrainedTokenizerFast`` with Qwen's special tokens, and combined
with the real transformers image and video processors (``Qwen2VLImageProcessor``,
``Qwen2VLVideoProcessor`` or ``Qwen3VLVideoProcessor``). The processors behave exactly like
the released ones for vision inputs; only the vocabulary is tiny.

Example:
    >>> proc = build_tiny_processor("qwen3_vl")          # doctest: +SKIP
    >>> proc.video_processor.patch_size                   # doctest: +SKIP
    16
"""

from __future__ import annotations

from typing import Any, Literal

SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for item in message['content'] %}"
    "{% if item['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif item['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_CORPUS = [
    "How many red squares appear in the video? Put the final answer in <answer></answer>.",
    "The quick brown fox jumps over the lazy dog. 0123456789 seconds.",
    "<think>count them</think><answer>3</answer>",
]


def build_tokenizer() -> Any:
    """A byte-level BPE ``PreTrainedTokenizerFast`` with the Qwen-VL special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_CORPUS, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens={
            "image_token": "<|image_pad|>",
            "video_token": "<|video_pad|>",
            "vision_start_token": "<|vision_start|>",
            "vision_end_token": "<|vision_end|>",
        },
    )


def build_tiny_processor(kind: Literal["qwen2_5_vl", "qwen3_vl"] = "qwen2_5_vl") -> Any:
    """A Qwen2.5-VL (patch 14, factor 28) or Qwen3-VL (patch 16, factor 32) processor."""
    from transformers import Qwen2_5_VLProcessor, Qwen2VLImageProcessor, Qwen3VLProcessor

    tokenizer = build_tokenizer()
    if kind == "qwen2_5_vl":
        from transformers import Qwen2VLVideoProcessor

        image = Qwen2VLImageProcessor(patch_size=14, merge_size=2, temporal_patch_size=2)
        video = Qwen2VLVideoProcessor(patch_size=14, merge_size=2, temporal_patch_size=2)
        return Qwen2_5_VLProcessor(
            image_processor=image, tokenizer=tokenizer, video_processor=video,
            chat_template=CHAT_TEMPLATE,
        )  # fmt: skip
    if kind == "qwen3_vl":
        from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

        image = Qwen2VLImageProcessor(patch_size=16, merge_size=2, temporal_patch_size=2)
        video = Qwen3VLVideoProcessor(patch_size=16, merge_size=2, temporal_patch_size=2)
        return Qwen3VLProcessor(
            image_processor=image, tokenizer=tokenizer, video_processor=video,
            chat_template=CHAT_TEMPLATE,
        )  # fmt: skip
    raise ValueError(f"unknown processor kind {kind!r}")
