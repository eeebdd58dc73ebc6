"""Qwen2.5-VL's M-RoPE positions stated independently of the kit and of transformers, for the
tests that check ``videorl_kit.media.mrope`` and the models that use it."""

from __future__ import annotations

import numpy as np


def reference_positions(input_ids: list[int], grids: list, seconds: list, config) -> np.ndarray:
    """Qwen's rule, stated independently: a video's time index steps by ``second_per_grid_t
    × tokens_per_second``; the text after a vision block continues after the block's largest
    position on any axis (one video per prompt here)."""
    merge = config.vision_config.spatial_merge_size
    step = config.vision_config.tokens_per_second
    parts, start, i = [], 0, 0
    grids, seconds = iter(grids), iter(seconds)
    while i < len(input_ids):
        if input_ids[i] == config.video_token_id:
            t, h, w = next(grids)
            block = np.indices((t, h // merge, w // merge)).reshape(3, -1)
            block[0] = (block[0] * next(seconds) * step).astype(np.int64)
            parts.append(block + start)
            start, i = int(parts[-1].max()) + 1, i + block.shape[1]
        else:
            parts.append(np.full((3, 1), start))
            start, i = start + 1, i + 1
    return np.concatenate(parts, axis=1)
