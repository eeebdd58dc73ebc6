"""Tiny, randomly initialised Qwen2.5-VL and Qwen3-VL models for tests and CPU demos.

:func:`build_tiny_model` writes a folder that ``AutoProcessor`` and
``AutoModelForImageTextToText`` load offline (``HF_HUB_OFFLINE=1``):

* a byte-level BPE tokenizer trained here, in milliseconds, on a small built-in corpus, with
  Qwen's pre-tokenizer rule (digits split one by one) and Qwen's special tokens, so any text
  round-trips exactly and the chat markers are single tokens;
* the real transformers image and video processors of the family (patch 14 and resize
  factor 28 for Qwen2.5-VL, patch 16 and factor 32 for Qwen3-VL);
* a Qwen-style chat template (``<|im_start|>role ... <|im_end|>``, one
  ``<|vision_start|><|image_pad|><|vision_end|>`` per image item and one ``<|video_pad|>``
  block per video item; Qwen3-VL's processor then writes its ``<t seconds>`` markers);
* a model a few hundred thousand parameters large (two text layers, a two-block vision tower),
  initialised from ``seed``, saved as safetensors. The text attention's head size is an
  option (16 by default; vLLM's CPU attention needs 32 or more, see :data:`HEAD_DIMS`).

The same family and seed always give the same bytes. Nothing is downloaded.

Example:
    >>> import tempfile
    >>> info = build_tiny_model(tempfile.mkdtemp(), family="qwen2.5-vl", seed=0)
    >>> info.family, info.n_parameters > 100_000
    ('qwen2.5-vl', True)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError

FAMILIES = ("qwen2.5-vl", "qwen3-vl")
"""Model families :func:`build_tiny_model` can write."""

TINY_PREFIX = "tiny:"
"""A recipe's ``model: tiny:<family>`` asks for a tiny model of that family."""

SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
"""Qwen's control tokens, first in the vocabulary (ids 0..6)."""

VOCAB_SIZE = 640
"""Target vocabulary: 256 byte symbols, the special tokens and the merges learned here."""

TEXT_WIDTH = 64
"""Hidden size of the text layers."""

HEAD_DIMS = (16, 32, 64)
"""Head sizes of the text attention :func:`build_tiny_model` can write (they divide
:data:`TEXT_WIDTH`); 16 is the default, vLLM's CPU attention backend takes 32 and up."""

# Qwen2's pre-tokenizer rule: contractions, letter runs (with one leading non-letter), single
# digits, punctuation runs, newlines and spaces.
_QWEN_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# What the tokenizer learns its merges from: the wording of video-QA prompts and answers.
_CORPUS = (
    "Watch the video carefully, then answer the question.",
    "Look at the image carefully, then answer the question.",
    "First think step by step inside <think></think>. Then give the final answer inside "
    "<answer></answer>.",
    "<think>I count the shapes one by one.</think><answer>3</answer>",
    "<think>The red circle appears last.</think><answer>B</answer>",
    '<answer>{"time": [1.5, 4.0]}</answer> <answer>{"boxes": [12, 30, 96, 120]}</answer>',
    "How many red squares are visible at second 2? Which colour appears last?",
    "Options: A. red B. green C. blue D. yellow. Answer with the letter of the option.",
    "Is the triangle visible at 3 seconds? Yes or No. In which direction does it move?",
    "The quick brown fox jumps over the lazy dog. 0 1 2 3 4 5 6 7 8 9 seconds frames.",
    "Read the text in the image. What is written on the sign? def solve(x): return x + 1",
)


@dataclass(frozen=True)
class TinyModelInfo:
    """What :func:`build_tiny_model` wrote."""

    path: Path
    family: str
    seed: int
    n_parameters: int
    vocab_size: int
    patch_factor: int
    head_dim: int = 16

    def as_dict(self) -> dict[str, Any]:
        """Plain-data form for JSON output.

        Example:
            >>> TinyModelInfo(Path("m"), "qwen3-vl", 0, 1, 2, 32).as_dict()["patch_factor"]
            32
        """
        return {
            "path": str(self.path),
            "family": self.family,
            "seed": self.seed,
            "n_parameters": self.n_parameters,
            "vocab_size": self.vocab_size,
            "patch_factor": self.patch_factor,
            "head_dim": self.head_dim,
        }


def check_family(family: str) -> str:
    """Return ``family`` if it is a known tiny-model family, else raise :class:`UserError`.

    Example:
        >>> check_family("qwen3-vl")
        'qwen3-vl'
    """
    if family not in FAMILIES:
        raise UserError(f"unknown model family {family!r}; choose one of {', '.join(FAMILIES)}")
    return family


def patch_factor(family: str) -> int:
    """The resize factor (patch × spatial merge) of ``family``'s vision tower.

    Example:
        >>> patch_factor("qwen2.5-vl"), patch_factor("qwen3-vl")
        (28, 32)
    """
    return 28 if check_family(family) == "qwen2.5-vl" else 32


def chat_template(family: str) -> str:
    """The Jinja chat template of the tiny ``family`` model (Qwen layout, images and videos).

    Qwen2.5-VL's template opens with a default system turn when the conversation has none,
    as the released model's does; Qwen3-VL's does not.

    Example:
        >>> "<|video_pad|>" in chat_template("qwen3-vl")
        True
    """
    default_system = (
        "{% if messages and messages[0]['role'] != 'system' %}"
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "{% endif %}"
        if check_family(family) == "qwen2.5-vl"
        else ""
    )
    return (
        default_system + "{% for message in messages %}"
        "<|im_start|>{{ message['role'] }}\n"
        "{% if message['content'] is string %}{{ message['content'] }}"
        "{% else %}{% for item in message['content'] %}"
        "{% if item['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
        "{% elif item['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
        "{% elif item['type'] == 'text' %}{{ item['text'] }}"
        "{% endif %}{% endfor %}{% endif %}"
        "<|im_end|>\n"
        "{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )


def build_tokenizer(family: str) -> Any:
    """Train the byte-level BPE tokenizer and wrap it as a ``PreTrainedTokenizerFast``.

    Example:
        >>> tok = build_tokenizer("qwen2.5-vl")
        >>> text = "Watch: <answer>12</answer> — naïve ✓"
        >>> tok.decode(tok(text)["input_ids"]) == text
        True
        >>> tok.convert_tokens_to_ids(["<|endoftext|>", "<|video_pad|>"])
        [0, 6]
    """
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(_QWEN_SPLIT), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])  # fmt: skip
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(list(_CORPUS) * 4, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=chat_template(family),
        extra_special_tokens={
            "image_token": "<|image_pad|>",
            "video_token": "<|video_pad|>",
            "vision_start_token": "<|vision_start|>",
            "vision_end_token": "<|vision_end|>",
        },
    )


def build_processor(family: str, tokenizer: Any | None = None) -> Any:
    """The family's real processor (image + video processors) around the tiny tokenizer.

    Default pixel bounds match the demo budgets (56×56 up to about 224×224 per frame).

    Example:
        >>> build_processor("qwen3-vl").video_processor.patch_size
        16
    """
    from transformers import Qwen2VLImageProcessor

    tokenizer = tokenizer if tokenizer is not None else build_tokenizer(family)
    if family == "qwen2.5-vl":
        from transformers import Qwen2_5_VLProcessor as Processor
        from transformers import Qwen2VLVideoProcessor as VideoProcessor
    else:
        from transformers import Qwen3VLProcessor as Processor
        from transformers import Qwen3VLVideoProcessor as VideoProcessor
    factor = patch_factor(family)
    geometry = {"patch_size": factor // 2, "merge_size": 2, "temporal_patch_size": 2,
                "min_pixels": 4 * factor * factor, "max_pixels": 64 * factor * factor}  # fmt: skip
    return Processor(
        image_processor=Qwen2VLImageProcessor(**geometry),
        tokenizer=tokenizer,
        video_processor=VideoProcessor(**geometry),
        chat_template=chat_template(family),
    )


def _token_ids(tokenizer: Any) -> dict[str, int]:
    names = {
        "image_token_id": "<|image_pad|>",
        "video_token_id": "<|video_pad|>",
        "vision_start_token_id": "<|vision_start|>",
        "vision_end_token_id": "<|vision_end|>",
    }
    return {key: tokenizer.convert_tokens_to_ids(token) for key, token in names.items()}


def check_head_dim(head_dim: int) -> int:
    """Return ``head_dim`` if the tiny text model can have it, else raise :class:`UserError`.

    Example:
        >>> check_head_dim(32)
        32
    """
    if head_dim not in HEAD_DIMS:
        choices = ", ".join(map(str, HEAD_DIMS))
        raise UserError(f"head size {head_dim} is not offered; choose one of {choices}")
    return head_dim


def build_config(family: str, tokenizer: Any, head_dim: int = 16) -> Any:
    """The tiny model config: 2 text layers of width 64 (attention heads of ``head_dim``,
    half as many key-value heads), a 2-block vision tower of width 64. The multimodal rotary
    sections (time, height, width) scale with the head: they split its ``head_dim / 2``
    frequencies 2:3:3.

    Example:
        >>> config = build_config("qwen2.5-vl", build_tokenizer("qwen2.5-vl"), head_dim=32)
        >>> text = config.text_config
        >>> text.hidden_size, text.num_attention_heads, text.num_key_value_heads
        (64, 2, 1)
        >>> text.rope_parameters["mrope_section"]
        [4, 6, 6]
    """
    heads = TEXT_WIDTH // check_head_dim(head_dim)
    mrope_section = [n * head_dim // 16 for n in (2, 3, 3)]
    text = {
        "vocab_size": len(tokenizer),
        "hidden_size": TEXT_WIDTH,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": heads,
        "num_key_value_heads": max(1, heads // 2),
        "max_position_embeddings": 4096,
        "bos_token_id": None,
        "eos_token_id": tokenizer.convert_tokens_to_ids("<|im_end|>"),
        "pad_token_id": tokenizer.pad_token_id,
    }
    vision = {
        "depth": 2,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_heads": 4,
        "out_hidden_size": 64,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
    }
    if family == "qwen2.5-vl":
        from transformers import Qwen2_5_VLConfig

        text["rope_parameters"] = {
            "rope_type": "default", "rope_theta": 1_000_000.0, "mrope_section": mrope_section,
        }  # fmt: skip
        vision |= {"patch_size": 14, "window_size": 112, "fullatt_block_indexes": [1]}
        config_class: Any = Qwen2_5_VLConfig
    else:
        from transformers import Qwen3VLConfig

        text |= {"head_dim": head_dim}
        text["rope_parameters"] = {
            "rope_type": "default", "rope_theta": 5_000_000.0, "mrope_section": mrope_section,
            "mrope_interleaved": True,
        }  # fmt: skip
        vision |= {"patch_size": 16, "num_position_embeddings": 256}
        vision["deepstack_visual_indexes"] = [0, 1]
        config_class = Qwen3VLConfig
    return config_class(
        text_config=text, vision_config=vision, tie_word_embeddings=True, **_token_ids(tokenizer)
    )


def build_tiny_model(
    out: str | Path, family: str = "qwen2.5-vl", seed: int = 0, *, head_dim: int = 16
) -> TinyModelInfo:
    """Write a tiny random ``family`` model, its tokenizer and processor to ``out``.

    The same ``family``, ``seed`` and ``head_dim`` give byte-identical files. ``out`` may
    exist but must not hold a model already (an existing ``config.json`` is refused, nothing
    is touched).

    Example:
        >>> import tempfile
        >>> from transformers import AutoModelForImageTextToText, AutoProcessor
        >>> info = build_tiny_model(tempfile.mkdtemp(), family="qwen3-vl", seed=1)
        >>> type(AutoProcessor.from_pretrained(info.path)).__name__
        'Qwen3VLProcessor'
        >>> AutoModelForImageTextToText.from_pretrained(info.path).config.model_type
        'qwen3_vl'
    """
    import torch
    from transformers import AutoModelForImageTextToText, GenerationConfig

    check_family(family)
    out = Path(out)
    if (out / "config.json").exists():
        raise UserError(f"{out}: already holds a model (config.json); choose an empty folder")
    tokenizer = build_tokenizer(family)
    processor = build_processor(family, tokenizer)
    config = build_config(family, tokenizer, head_dim)
    fork = torch.random.fork_rng(devices=[])  # leave the caller's global RNG as it was
    with fork:
        torch.manual_seed(seed)
        model = AutoModelForImageTextToText.from_config(config, dtype=torch.float32)
    end_ids = tokenizer.convert_tokens_to_ids(["<|im_end|>", "<|endoftext|>"])
    model.generation_config = GenerationConfig(
        eos_token_id=end_ids, pad_token_id=tokenizer.pad_token_id, do_sample=True
    )
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return TinyModelInfo(
        path=out,
        family=family,
        seed=seed,
        n_parameters=sum(p.numel() for p in model.parameters()),
        vocab_size=len(tokenizer),
        patch_factor=patch_factor(family),
        head_dim=head_dim,
    )
