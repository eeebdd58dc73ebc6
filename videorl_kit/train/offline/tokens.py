"""A stored response as the tokens of a rollout: the model's tokenizer, its end-of-turn token,
the rollout's length limit.

The peer's mix-policy tokenizes the stored text without an end token and crashes on text
longer than the response length. Here a stored response becomes exactly what a rollout of the
same model would be (:func:`rollout_tokens`):

* the ids are the stored ``token_ids`` when they were made with this model's tokenizer (so
  stored behaviour log-probs stay aligned), else the text tokenized the way rollouts are
  decoded back (``add_special_tokens=False``);
* they end with the model's **end-of-turn token** (:func:`end_of_turn_id`: the token the chat
  template writes right after an assistant message, ``<|im_end|>`` for Qwen), appended unless
  the ids already end with it. The appended token has no stored log-prob; it counts as certain
  under the behaviour policy (log-prob 0), so a truncated importance weight gives it
  ``min(π(end), cap)``;
* they are cut to ``max_new_tokens`` like a rollout that hit the limit (no end token then),
  with :attr:`RolloutTokens.truncated` set, never a shape error.

Example:
    >>> tok = load_tokenizer("tiny:qwen2.5-vl")
    >>> eot = end_of_turn_id(tok)
    >>> tok.convert_ids_to_tokens(eot)
    '<|im_end|>'
    >>> full = rollout_tokens(tok, "<answer>3</answer>", max_new_tokens=64)
    >>> full.ids[-1] == eot, full.truncated, tok.decode(full.ids)
    (True, False, '<answer>3</answer><|im_end|>')
    >>> cut = rollout_tokens(tok, "<answer>3</answer>", max_new_tokens=4)
    >>> len(cut.ids), cut.truncated, cut.ids[-1] == eot
    (4, True, False)
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from videorl_kit.train.tiny_model import FAMILIES, TINY_PREFIX, build_tokenizer

_MARK = "VIDEORLKITENDMARK"


@functools.lru_cache(maxsize=8)
def load_tokenizer(name: str) -> Any:
    """The tokenizer called ``name``: ``tiny:<family>`` (built here), a model folder, or a Hub id
    (from the local Hub cache when offline). Raises ``ValueError`` saying why it cannot load."""
    if name.startswith(TINY_PREFIX):
        family = name[len(TINY_PREFIX) :]
        if family not in FAMILIES:
            raise ValueError(f"unknown tiny tokenizer {name!r} (tiny:{' or tiny:'.join(FAMILIES)})")
        return build_tokenizer(family)
    from transformers import AutoTokenizer

    path = Path(name).expanduser()
    try:
        return AutoTokenizer.from_pretrained(str(path) if path.exists() else name)
    except Exception as exc:
        raise ValueError(f"tokenizer {name!r} cannot be loaded ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''})") from None  # fmt: skip


def text_tokenizer(processor_or_tokenizer: Any) -> Any:
    """The tokenizer of a processor (or the tokenizer itself)."""
    return getattr(processor_or_tokenizer, "tokenizer", processor_or_tokenizer)


def end_of_turn_id(processor_or_tokenizer: Any) -> int:
    """The token the chat template writes right after an assistant message (else eos).

    Example:
        >>> end_of_turn_id(load_tokenizer("tiny:qwen3-vl")) == load_tokenizer(
        ...     "tiny:qwen3-vl").convert_tokens_to_ids("<|im_end|>")
        True
    """
    tokenizer = text_tokenizer(processor_or_tokenizer)
    try:
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": "u"}, {"role": "assistant", "content": _MARK}],
            tokenize=False,
        )
    except Exception:
        text = ""
    if _MARK in text:
        after = text.split(_MARK, 1)[1]
        ids = tokenizer(after, add_special_tokens=False)["input_ids"] if after else []
        special = set(tokenizer.all_special_ids) | {
            i for i, t in tokenizer.added_tokens_decoder.items() if t.special
        }
        for token_id in ids:
            if token_id in special:
                return int(token_id)
    if tokenizer.eos_token_id is None:
        raise ValueError("the tokenizer has no end-of-turn token in its chat template and no eos")
    return int(tokenizer.eos_token_id)


@dataclass(frozen=True)
class RolloutTokens:
    """A stored response as rollout tokens: ids, their behaviour log-probs (None: unknown),
    whether the length limit cut it, whether the end token was appended."""

    ids: list[int]
    logprobs: list[float] | None
    truncated: bool
    appended_end: bool


def rollout_tokens(
    tokenizer: Any,
    text: str,
    max_new_tokens: int,
    *,
    end_id: int | None = None,
    stored_ids: Sequence[int] | None = None,
    stored_logprobs: Sequence[float] | None = None,
) -> RolloutTokens:
    """The rollout tokens of a stored response (see the module doc). ``stored_ids`` (and their
    ``stored_logprobs``) are used as they are: pass them only when they were made with this
    tokenizer."""
    tokenizer = text_tokenizer(tokenizer)
    end = end_of_turn_id(tokenizer) if end_id is None else end_id
    if stored_ids is not None:
        ids = [int(i) for i in stored_ids]
        logprobs = None if stored_logprobs is None else [float(v) for v in stored_logprobs]
    else:
        ids = list(tokenizer(text, add_special_tokens=False)["input_ids"])
        logprobs = None
    appended = not ids or ids[-1] != end
    if appended:
        ids.append(end)
        if logprobs is not None:
            logprobs.append(0.0)
    truncated = len(ids) > max_new_tokens
    if truncated:
        ids = ids[:max_new_tokens]
        logprobs = None if logprobs is None else logprobs[:max_new_tokens]
    return RolloutTokens(ids, logprobs, truncated, appended and not truncated)
