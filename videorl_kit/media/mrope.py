"""Qwen2.5-VL's multimodal rotary positions by Qwen's own rule, for training and evaluation.

Qwen2.5-VL gives every token three positions (time, height, width). A video's tokens step
in time by ``second_per_grid_t × tokens_per_second`` per temporal patch; the text after a
vision block continues **after the block's largest position on any axis**. That is the rule
of Qwen's own code, of transformers 4.x and of vLLM. transformers 5.x continues after the
block's height or width only, so after a video whose temporal extent is the larger (32
frames at 1 fps: 16 patches 4 s apart reach position 128, its 8×10 grid only 10) the text's
positions are smaller than the video's, which the model never saw in pre-training.

The kit decides for Qwen's rule everywhere it runs the model through transformers:
:func:`use_qwen_positions` replaces the model's ``get_rope_index`` by :func:`qwen25_rope_index`
on the model instance, so prefill, generation (its cached ``rope_deltas``) and the training
log-prob forward all place tokens as Qwen and vLLM do. The TRL backend and the evaluator's
transformers backend call it when they load a model; OpenRLHF's training forward gets it
from the start-up patches. Qwen3-VL is not affected (a video is a run of single-frame groups
separated by ``<t seconds>`` text, so a block has no temporal extent), nor are images.

Example:
    >>> import torch
    >>> from types import SimpleNamespace as NS
    >>> config = NS(vision_config=NS(spatial_merge_size=2, tokens_per_second=2))
    >>> ids = torch.tensor([[5, 7, 7, 7, 7, 7, 7, 7, 7, 5]])   # text, 8 video tokens, text
    >>> types = torch.tensor([[0, 2, 2, 2, 2, 2, 2, 2, 2, 0]])
    >>> grid = torch.tensor([[2, 4, 4]])                     # 2 temporal patches of 2 x 2
    >>> positions, delta = qwen25_rope_index(NS(config=config), ids, types, None, grid,
    ...                                      torch.tensor([1.0]))
    >>> positions[0, 0].tolist()   # time: text 0, video 1 + 2 s per patch, text after it
    [0, 1, 1, 1, 1, 3, 3, 3, 3, 4]
    >>> positions[1, 0].tolist()   # height: the text after the video would start at 3 in 5.x
    [0, 1, 1, 2, 2, 1, 1, 2, 2, 4]
"""

from __future__ import annotations

import itertools
import types
from typing import Any

__all__ = ["qwen25_rope_index", "use_qwen_positions", "uses_qwen_positions"]

QWEN25_MODEL_TYPE = "qwen2_5_vl"
_MARK = "_videorl_kit_qwen_positions"


def _block(grid: list[int], start: int, interval: Any, merge: int) -> Any:
    """Positions (3 × tokens) of one image or video whose first token sits at ``start``."""
    import torch

    t, h, w = grid[0], grid[1] // merge, grid[2] // merge
    temporal = (torch.arange(t) * interval).long()
    axes = torch.meshgrid(temporal, torch.arange(h), torch.arange(w), indexing="ij")
    return torch.stack(axes).reshape(3, -1) + start


def _sample_positions(
    kinds: list[int], grids: dict[int, Any], seconds: Any, merge: int, per_second: float
) -> Any:
    """Positions (3 × n) of one unpadded sequence of token kinds (0 text, 1 image, 2 video)."""
    import torch

    parts, start = [], 0
    for kind, run in itertools.groupby(kinds):
        length = len(list(run))
        if kind == 0:
            parts.append(torch.arange(length).expand(3, -1) + start)
            start += length
            continue
        covered = 0
        while covered < length:  # a run may hold several adjacent images or videos
            try:
                grid = next(grids[kind])
            except StopIteration:
                what = "image" if kind == 1 else "video"
                raise ValueError(f"more {what} tokens than {what} grids") from None
            interval = per_second * next(seconds) if kind == 2 else 1
            block = _block(grid, start, interval, merge)
            parts.append(block)
            covered += block.shape[1]
            start = int(block.max()) + 1
        if covered != length:
            raise ValueError(f"a run of {length} vision tokens does not match its grids")
    return torch.cat(parts, dim=1) if parts else torch.zeros(3, 0, dtype=torch.long)


def qwen25_rope_index(
    self: Any,
    input_ids: Any,
    mm_token_type_ids: Any,
    image_grid_thw: Any = None,
    video_grid_thw: Any = None,
    second_per_grid_ts: Any = None,
    attention_mask: Any = None,
    **_: Any,
) -> tuple[Any, Any]:
    """``Qwen2_5_VLModel.get_rope_index`` by Qwen's rule (see the module docstring).

    Same arguments and results as transformers' method: position ids ``(3, batch, length)``
    (padding positions left at 0) and the per-sequence ``rope_deltas`` ``(batch, 1)`` that
    generation adds to later positions. ``self`` is anything with the model's ``config``.
    """
    import torch

    vision = self.config.vision_config
    merge, per_second = vision.spatial_merge_size, vision.tokens_per_second
    grids = {
        1: iter(image_grid_thw.tolist() if image_grid_thw is not None else []),
        2: iter(video_grid_thw.tolist() if video_grid_thw is not None else []),
    }
    seconds = iter(second_per_grid_ts) if second_per_grid_ts is not None else itertools.repeat(1)
    positions = torch.zeros(3, *input_ids.shape, dtype=input_ids.dtype, device=input_ids.device)
    deltas = []
    for row in range(input_ids.shape[0]):
        keep = (
            attention_mask[row].bool()
            if attention_mask is not None
            else torch.ones(input_ids.shape[1], dtype=torch.bool, device=input_ids.device)
        )
        kinds = mm_token_type_ids[row][keep].tolist()
        sample = _sample_positions(kinds, grids, seconds, merge, per_second)
        positions[:, row, keep] = sample.to(positions.device, positions.dtype)
        top = int(sample.max()) + 1 if sample.numel() else 0
        deltas.append(top - len(kinds))
    return positions, torch.tensor(deltas, device=input_ids.device).unsqueeze(1)


def _rope_owner(model: Any) -> Any:
    """The module of ``model`` that computes its M-RoPE positions (has ``get_rope_index``)."""
    for candidate in (model, getattr(model, "model", None)):
        if candidate is not None and hasattr(candidate, "get_rope_index"):
            return candidate
    return None


def use_qwen_positions(model: Any) -> bool:
    """Make a loaded Qwen2.5-VL place tokens by Qwen's rule; True if it is one (else no-op).

    Replaces ``get_rope_index`` on this model instance only (the class is untouched). Calling
    it again is harmless.

    Example:
        >>> use_qwen_positions(object())   # not a Qwen2.5-VL: nothing to do
        False
    """
    config = getattr(model, "config", None)
    owner = _rope_owner(model)
    if owner is None or getattr(config, "model_type", None) != QWEN25_MODEL_TYPE:
        return False
    if not getattr(owner, _MARK, False):
        owner.get_rope_index = types.MethodType(qwen25_rope_index, owner)
        setattr(owner, _MARK, True)
    return True


def uses_qwen_positions(model: Any) -> bool:
    """Whether :func:`use_qwen_positions` was applied to ``model``.

    Example:
        >>> uses_qwen_positions(object())
        False
    """
    owner = _rope_owner(model)
    return bool(owner is not None and getattr(owner, _MARK, False))
