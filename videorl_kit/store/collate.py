"""Batching items of :class:`~videorl_kit.store.torch_dataset.CachedSampleDataset`.

Videos differ in frame count *and* frame size (each is resized to its own aspect ratio
under the budget), so :func:`collate_samples` keeps media as **lists** (one list of uint8
``T×H×W×3`` arrays per item, which is also what HF processors take) instead of padding
pixels. Model inputs made by a processor follow the Qwen-VL batch layout: token sequences
(``input_ids``, ``attention_mask``, ``mm_token_type_ids``) are **padded** to the longest
item (``pad_token_id``; attention mask 0 on padding; left padding by default, as for
generation), and vision tensors (``pixel_values_videos``, ``pixel_values``,
``video_grid_thw``, ``image_grid_thw``, ``second_per_grid_ts``) are **concatenated** along
their first axis, item after item. Every other field becomes a list with one entry per item.

Example:
    >>> import numpy as np
    >>> items = [{"sample_id": "a", "videos": [np.zeros((4, 28, 56, 3), np.uint8)]},
    ...          {"sample_id": "b", "videos": [np.zeros((2, 56, 28, 3), np.uint8)]}]
    >>> batch = collate_samples(items)
    >>> batch["sample_id"], [v[0].shape for v in batch["videos"]]
    (['a', 'b'], [(4, 28, 56, 3), (2, 56, 28, 3)])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

TOKEN_KEYS = frozenset({"input_ids", "attention_mask", "mm_token_type_ids"})
"""Per-token model inputs, padded to the longest item."""


def _pad(values: list[Any], pad_value: int, side: Literal["left", "right"]) -> Any:
    import torch

    longest = max(int(v.shape[-1]) for v in values)
    padded = []
    for value in values:
        missing = longest - int(value.shape[-1])
        fill = torch.full((missing,), pad_value, dtype=value.dtype)
        padded.append(torch.cat([fill, value] if side == "left" else [value, fill]))
    return torch.stack(padded)


def _model_inputs(
    items: Sequence[dict[str, Any]], pad_token_id: int, side: Literal["left", "right"]
) -> dict[str, Any]:
    import torch

    keys = list(dict.fromkeys(key for item in items for key in item["model_inputs"]))
    batch: dict[str, Any] = {}
    for key in keys:
        values = [item["model_inputs"][key] for item in items if key in item["model_inputs"]]
        if key in TOKEN_KEYS:
            if len(values) != len(items):
                raise ValueError(f"model input {key!r} is missing from some items")
            batch[key] = _pad(values, pad_token_id if key == "input_ids" else 0, side)
        else:
            batch[key] = torch.cat([torch.as_tensor(v) for v in values])
    return batch


def collate_samples(
    items: Sequence[dict[str, Any]],
    *,
    pad_token_id: int = 0,
    padding_side: Literal["left", "right"] = "left",
) -> dict[str, Any]:
    """One batch from dataset items (see the module docstring for the layout).

    For a ``DataLoader``, use ``CachedSampleDataset.collate_fn`` (it knows the processor's
    pad token) or ``functools.partial(collate_samples, pad_token_id=...)``.
    """
    if not items:
        raise ValueError("cannot collate an empty batch")
    if padding_side not in ("left", "right"):
        raise ValueError(f"padding_side must be 'left' or 'right', not {padding_side!r}")
    keys = list(dict.fromkeys(key for item in items for key in item if key != "model_inputs"))
    batch: dict[str, Any] = {key: [item.get(key) for item in items] for key in keys}
    if any("model_inputs" in item for item in items):
        if not all("model_inputs" in item for item in items):
            raise ValueError("some items have model_inputs and some do not")
        batch["model_inputs"] = _model_inputs(items, pad_token_id, padding_side)
    return batch
