"""Frame-count, frame-index, resize and token arithmetic of the Qwen-VL family.

Pure Python (no numpy, no torch). Every function reproduces the arithmetic of
``qwen-vl-utils`` 0.0.14 (``smart_resize``, ``smart_nframes``, the per-frame pixel cap in
``fetch_video`` and the ``torch.linspace(...).round()`` frame indices) so that a cache built
here samples the same frames at the same sizes as a Qwen model's own preprocessing. The test
suite compares these functions with qwen-vl-utils over grids and Hypothesis-drawn inputs.

Where qwen-vl-utils raises (``nframes`` out of range, aspect ratio above 200, ``min_pixels``
above ``max_pixels``), these functions raise :class:`ValueError` with a message that names
the offending quantity. Deliberate differences, all documented on the functions:

* ``video_frame_count`` returns ``temporal_patch`` for a video shorter than one temporal
  patch (qwen-vl-utils raises for a 1-frame video); the decoder pads by repeating the frame,
  which is also what qwen-vl-utils does for a list of frames.
* ``smart_resize`` raises when the budget would shrink one side to zero (qwen-vl-utils
  returns a zero-sized frame for extreme aspect ratios under a tiny ``max_pixels``).
* The default ``total_pixels`` (when ``None``) uses qwen-vl-utils' default sequence length
  of 128000 and does not read the ``MODEL_SEQ_LEN`` environment variable, so a budget means
  the same thing on every machine.

Example:
    >>> smart_resize(240, 320, factor=28, min_pixels=3136, max_pixels=200704)
    (252, 308)
    >>> video_frame_count(150, 30.0, fps=2.0, min_frames=4, max_frames=32)
    10
    >>> uniform_frame_indices(150, 4)
    [0, 50, 99, 149]
    >>> visual_tokens(10, 252, 308, factor=28)
    495
"""

from __future__ import annotations

import math
import struct

__all__ = [
    "DEFAULT_MODEL_SEQ_LEN",
    "MAX_ASPECT_RATIO",
    "VIDEO_FRAME_MAX_TOKENS",
    "ceil_by_factor",
    "floor_by_factor",
    "image_visual_tokens",
    "round_by_factor",
    "smart_resize",
    "uniform_frame_indices",
    "video_frame_count",
    "video_frame_max_pixels",
    "video_frame_size",
    "visual_tokens",
]

MAX_ASPECT_RATIO = 200
"""Largest long-side / short-side ratio Qwen-VL accepts."""

VIDEO_FRAME_MAX_TOKENS = 768
"""Hard per-frame ceiling, in merged tokens, applied to video frames (768 * factor**2 px)."""

DEFAULT_MODEL_SEQ_LEN = 128000
"""Sequence length behind the default ``total_pixels`` (``0.9 * seq_len * factor**2``)."""

_F32 = struct.Struct("f")


def round_by_factor(number: float, factor: int) -> int:
    """Return the multiple of ``factor`` closest to ``number`` (ties to even quotient).

    Example:
        >>> round_by_factor(42, 28), round_by_factor(41, 28)
        (56, 28)
    """
    return round(number / factor) * factor


def ceil_by_factor(number: float, factor: int) -> int:
    """Return the smallest multiple of ``factor`` that is >= ``number``.

    Example:
        >>> ceil_by_factor(5, 2)
        6
    """
    return math.ceil(number / factor) * factor


def floor_by_factor(number: float, factor: int) -> int:
    """Return the largest multiple of ``factor`` that is <= ``number``.

    Example:
        >>> floor_by_factor(9.9, 2)
        8
    """
    return math.floor(number / factor) * factor


def _require_positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return value


def _require_positive_number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value}")
    return value


def smart_resize(
    height: int,
    width: int,
    *,
    factor: int,
    min_pixels: int | float,
    max_pixels: int | float,
) -> tuple[int, int]:
    """Return ``(height, width)`` resized to multiples of ``factor`` within a pixel budget.

    Both sides are rounded to the nearest multiple of ``factor`` (at least ``factor``); if
    the area then exceeds ``max_pixels`` the frame is scaled down (sides floored to the
    factor), if it is below ``min_pixels`` it is scaled up (sides ceiled). The aspect ratio
    is kept as closely as the factor allows. Same arithmetic as qwen-vl-utils.

    Raises:
        ValueError: a side is not a positive integer, ``min_pixels > max_pixels``, the aspect
            ratio exceeds 200, or the budget is too small to keep both sides non-zero.

    Example:
        >>> smart_resize(1080, 1920, factor=28, min_pixels=3136, max_pixels=200704)
        (336, 588)
        >>> smart_resize(1080, 1920, factor=32, min_pixels=4096, max_pixels=262144)
        (384, 672)
    """
    _require_positive_int("height", height)
    _require_positive_int("width", width)
    _require_positive_int("factor", factor)
    if max_pixels < min_pixels:
        raise ValueError(f"max_pixels ({max_pixels}) must be >= min_pixels ({min_pixels})")
    ratio = max(height, width) / min(height, width)
    if ratio > MAX_ASPECT_RATIO:
        raise ValueError(
            f"aspect ratio {ratio:.1f} of a {width}x{height} frame exceeds {MAX_ASPECT_RATIO}"
        )
    h_bar = max(factor, round_by_factor(height, factor))
    w_bar = max(factor, round_by_factor(width, factor))
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = floor_by_factor(height / beta, factor)
        w_bar = floor_by_factor(width / beta, factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = ceil_by_factor(height * beta, factor)
        w_bar = ceil_by_factor(width * beta, factor)
    if h_bar <= 0 or w_bar <= 0:
        raise ValueError(
            f"max_pixels={max_pixels} is too small for a {width}x{height} frame at factor "
            f"{factor}: one side would be 0 px (got {w_bar}x{h_bar})"
        )
    return h_bar, w_bar


def video_frame_count(
    total_frames: int,
    source_fps: float,
    *,
    fps: float,
    min_frames: int,
    max_frames: int,
    temporal_patch: int = 2,
) -> int:
    """Return how many frames to sample from a video (a multiple of ``temporal_patch``).

    ``duration * fps`` frames, clamped to ``[ceil(min_frames), floor(max_frames)]`` (both
    rounded to the temporal patch), then to the number of frames available, then floored to
    the temporal patch. Same arithmetic as qwen-vl-utils' ``smart_nframes``.

    A video shorter than one temporal patch (a 1-frame video) returns ``temporal_patch``:
    the decoder repeats the last frame to fill the patch, as qwen-vl-utils does for a list
    of frames (its ``smart_nframes`` raises here instead).

    Raises:
        ValueError: ``total_frames`` or ``source_fps``/``fps`` is not positive, ``max_frames``
            is below one temporal patch, or the result would be outside
            ``[temporal_patch, total_frames]`` (e.g. ``min_frames=0`` on a very short clip).

    Example:
        >>> video_frame_count(300, 30.0, fps=2.0, min_frames=4, max_frames=32)
        20
        >>> video_frame_count(9000, 30.0, fps=2.0, min_frames=4, max_frames=32)
        32
        >>> video_frame_count(3, 30.0, fps=2.0, min_frames=4, max_frames=32)
        2
        >>> video_frame_count(1, 30.0, fps=2.0, min_frames=4, max_frames=32)
        2
    """
    _require_positive_int("total_frames", total_frames)
    _require_positive_number("source_fps", source_fps)
    _require_positive_number("fps", fps)
    _require_positive_int("temporal_patch", temporal_patch)
    if isinstance(min_frames, bool) or not isinstance(min_frames, int) or min_frames < 0:
        raise ValueError(f"min_frames must be a non-negative integer, got {min_frames!r}")
    _require_positive_int("max_frames", max_frames)
    lower = ceil_by_factor(min_frames, temporal_patch)
    upper = floor_by_factor(max_frames, temporal_patch)
    if upper < temporal_patch:
        raise ValueError(
            f"max_frames={max_frames} is below one temporal patch ({temporal_patch} frames)"
        )
    if total_frames < temporal_patch:
        return temporal_patch
    nframes = total_frames / source_fps * fps
    nframes = min(min(max(nframes, lower), upper), total_frames)
    count = floor_by_factor(nframes, temporal_patch)
    if not temporal_patch <= count <= total_frames:
        raise ValueError(
            f"frame count {count} is outside [{temporal_patch}, {total_frames}] for "
            f"{total_frames} frames at {source_fps} fps sampled at {fps} fps "
            f"(min_frames={min_frames}, max_frames={max_frames})"
        )
    return count


def _to_f32(value: float) -> float:
    return _F32.unpack(_F32.pack(value))[0]


def uniform_frame_indices(total_frames: int, n: int) -> list[int]:
    """Return ``n`` source frame indices spread uniformly over ``[0, total_frames - 1]``.

    Bit-for-bit the result of ``torch.linspace(0, total_frames - 1, n).round().long()``
    (qwen-vl-utils' sampler): float32 values, the first half counted up from 0 and the second
    half counted down from the last frame (each with one rounding, as the fused multiply-add
    of torch's AVX2 CPU kernel does), rounded half to even. When ``n > total_frames`` indices
    repeat (used to pad a 1-frame video to the temporal patch).

    Raises:
        ValueError: ``total_frames`` or ``n`` is not positive.

    Example:
        >>> uniform_frame_indices(10, 4)
        [0, 3, 6, 9]
        >>> uniform_frame_indices(1, 2)
        [0, 0]
    """
    _require_positive_int("total_frames", total_frames)
    _require_positive_int("n", n)
    if n == 1:
        return [0]
    end = _to_f32(float(total_frames - 1))
    step = _to_f32(end / (n - 1))
    halfway = n // 2
    indices = []
    for i in range(n):
        # step * i and end - step * k are exact in double (a float32 times an integer below
        # 2**29), so one rounding to float32 reproduces the fused float32 operation.
        value = _to_f32(step * i) if i < halfway else _to_f32(end - step * (n - i - 1))
        indices.append(round(value))
    return indices


def video_frame_max_pixels(
    n_frames: int,
    *,
    min_pixels: int,
    max_pixels: int | None,
    total_pixels: int | None,
    factor: int,
    temporal_patch: int = 2,
) -> int | float:
    """Return the per-frame pixel cap for a video of ``n_frames`` frames.

    ``min(max_pixels, max(min(768 * factor**2, total_pixels / n_frames * temporal_patch),
    int(1.05 * min_pixels)))`` as in qwen-vl-utils' ``fetch_video``; ``total_pixels=None``
    means ``0.9 * 128000 * factor**2``, ``max_pixels=None`` means no explicit cap. The value
    is an ``int`` unless ``total_pixels / n_frames`` is fractional; it is then returned as
    the exact float, because :func:`smart_resize` uses it inside a square root and must see
    the same number qwen-vl-utils sees.

    Example:
        >>> video_frame_max_pixels(16, min_pixels=3136, max_pixels=200704, total_pixels=None,
        ...                        factor=28)
        200704
        >>> video_frame_max_pixels(32, min_pixels=3136, max_pixels=200704,
        ...                        total_pixels=1_000_000, factor=28)
        62500
    """
    _require_positive_int("n_frames", n_frames)
    _require_positive_int("factor", factor)
    _require_positive_int("temporal_patch", temporal_patch)
    if total_pixels is None:
        total_pixels = DEFAULT_MODEL_SEQ_LEN * factor * factor * 0.9
    frame_ceiling = VIDEO_FRAME_MAX_TOKENS * factor * factor
    cap = max(min(frame_ceiling, total_pixels / n_frames * temporal_patch), int(min_pixels * 1.05))
    if max_pixels is not None:
        cap = min(max_pixels, cap)
    if isinstance(cap, float) and cap.is_integer():
        return int(cap)
    return cap


def video_frame_size(
    height: int,
    width: int,
    n_frames: int,
    *,
    min_pixels: int,
    max_pixels: int | None,
    total_pixels: int | None,
    factor: int,
    temporal_patch: int = 2,
) -> tuple[int, int]:
    """Return the resized ``(height, width)`` of every frame of an ``n_frames`` video clip.

    :func:`smart_resize` with the cap from :func:`video_frame_max_pixels`.

    Example:
        >>> video_frame_size(1080, 1920, 32, min_pixels=3136, max_pixels=200704,
        ...                  total_pixels=None, factor=28)
        (336, 588)
    """
    cap = video_frame_max_pixels(
        n_frames,
        min_pixels=min_pixels,
        max_pixels=max_pixels,
        total_pixels=total_pixels,
        factor=factor,
        temporal_patch=temporal_patch,
    )
    return smart_resize(height, width, factor=factor, min_pixels=min_pixels, max_pixels=cap)


def visual_tokens(
    n_frames: int, height: int, width: int, *, factor: int, temporal_patch: int = 2
) -> int:
    """Return the visual tokens of ``n_frames`` frames of ``height x width`` (video).

    ``ceil(n_frames / temporal_patch) * (height / factor) * (width / factor)``: one token per
    ``factor x factor`` block (patch x spatial merge) per temporal patch. ``n_frames=1``
    counts like an image (the processor repeats the frame to fill the temporal patch).
    Qwen3-VL's timestamp text tokens are not included.

    Raises:
        ValueError: a size is not a positive multiple of ``factor`` (resize it with
            :func:`smart_resize` first).

    Example:
        >>> visual_tokens(32, 448, 448, factor=28)
        4096
        >>> visual_tokens(1, 448, 448, factor=32)
        196
    """
    _require_positive_int("n_frames", n_frames)
    _require_positive_int("factor", factor)
    _require_positive_int("temporal_patch", temporal_patch)
    _require_factor_multiple("height", height, factor)
    _require_factor_multiple("width", width, factor)
    return math.ceil(n_frames / temporal_patch) * (height // factor) * (width // factor)


def image_visual_tokens(height: int, width: int, *, factor: int) -> int:
    """Return the visual tokens of one image of ``height x width`` (already resized).

    Example:
        >>> image_visual_tokens(476, 644, factor=28)
        391
    """
    return visual_tokens(1, height, width, factor=factor, temporal_patch=1)


def _require_factor_multiple(name: str, value: int, factor: int) -> None:
    _require_positive_int(name, value)
    if value % factor:
        raise ValueError(
            f"{name}={value} is not a multiple of the patch factor {factor}; "
            "resize with smart_resize first"
        )
