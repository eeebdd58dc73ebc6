"""Tiny Qwen2.5-VL / Qwen3-VL processors built fully offline (no Hub access), for the tests.

They are the processors of the kit's tiny test models (:mod:`videorl_kit.train.tiny_model`):
a byte-level BPE tokenizer trained locally with Qwen's special tokens, wrapped around the real
transformers image and video processors, so vision inputs behave exactly as with the released
models; only the vocabulary is tiny.

Example:
    >>> build_tiny_processor("qwen3_vl").video_processor.patch_size
    16
"""

from __future__ import annotations

from typing import Any, Literal

from videorl_kit.train.tiny_model import build_processor
from videorl_kit.train.tiny_model import build_tokenizer as _family_tokenizer

_FAMILIES = {"qwen2_5_vl": "qwen2.5-vl", "qwen3_vl": "qwen3-vl"}


def build_tokenizer() -> Any:
    """A byte-level BPE ``PreTrainedTokenizerFast`` with the Qwen-VL special tokens."""
    return _family_tokenizer("qwen2.5-vl")


def build_tiny_processor(kind: Literal["qwen2_5_vl", "qwen3_vl"] = "qwen2_5_vl") -> Any:
    """A Qwen2.5-VL (patch 14, factor 28) or Qwen3-VL (patch 16, factor 32) processor."""
    if kind not in _FAMILIES:
        raise ValueError(f"unknown processor kind {kind!r}")
    return build_processor(_FAMILIES[kind])
